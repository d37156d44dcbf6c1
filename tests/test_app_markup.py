"""The app's escaping rules (``empathy_app.markup``): exact code spans, inert Markdown, Plotly labels, CSVs."""

from __future__ import annotations

import html
import io

import pandas as pd
import pytest

pytest.importorskip("streamlit")

from empathy.escaping import (
    WORD_JOINER,  # noqa: E402
    unspreadsheet_cell,  # noqa: E402
)
from empathy_app.markup import code, hover_literal, md, people_csv, plot_frame  # noqa: E402
from empathy_app.markup import html as plot_label  # noqa: E402


@pytest.mark.parametrize(("raw", "expected"), [
    ("gorse", "`gorse`"),
    ("a`b", "``a`b``"),                      # fence longer than the longest backtick run
    ("a``b`c", "```a``b`c```"),
    ("`x", "`` `x ``"),                      # starts with a backtick: padded, the span strips one space
    ("x`", "`` x` ``"),
    (" x ", "`  x  `"),                      # leading and trailing space kept: padded once more
    ("two\nlines", "`two lines`"),
    (":blue[M]**m**", "`:blue[M]**m**`"),     # nothing is parsed inside a code span
    ("", ""),
    ("   ", "   "),
])
def test_code_span_shows_the_text_exactly(raw, expected):
    assert code(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ("see http://h/x", f"see http{WORD_JOINER}&#58;&#47;&#47;h&#47;x"),
    ("HTTPS://h", f"HTTPS{WORD_JOINER}&#58;&#47;&#47;h"),
    ("www.example.org", f"www{WORD_JOINER}&#46;example&#46;org"),
    ("a@b.co", f"a{WORD_JOINER}&#64;b&#46;co"),
    ("**m** $x$", "&#42;&#42;m&#42;&#42; &#36;x&#36;"),
    ("plain words", "plain words"),
])
def test_md_is_markdown_literal_without_autolinks(raw, expected):
    assert md(raw) == expected
    assert html.unescape(md(raw)).replace(WORD_JOINER, "") == raw  # reads the same


@pytest.mark.parametrize(("raw", "expected"), [
    ('<span style="font-size:60px">B</span>', "&lt;span style=&#34;font-size:60px&#34;&gt;B&lt;/span&gt;"),
    ("it's & <b>", "it&#39;s &amp; &lt;b&gt;"),
])
def test_plot_labels_are_escaped_with_numeric_quotes(raw, expected):
    assert plot_label(raw) == expected
    assert html.unescape(plot_label(raw)) == raw


def test_hover_literal_escapes_template_fields():
    assert hover_literal("%{x}<b>") == "&#37;{x}&lt;b&gt;"


def test_plot_frame_escapes_only_the_named_columns():
    frame = pd.DataFrame({"model": ["<b>m</b>"], "scorer": ["j&k"], "value": [0.5], "other": ["<i>"]})
    out = plot_frame(frame, ["model", "scorer", "absent"])
    assert out.to_dict("records") == [{"model": "&lt;b&gt;m&lt;/b&gt;", "scorer": "j&amp;k", "value": 0.5,
                                       "other": "<i>"}]
    assert frame.loc[0, "model"] == "<b>m</b>"  # a copy


def test_people_csv_neutralises_formula_cells_and_keeps_numbers():
    frame = pd.DataFrame({"model": ['=HYPERLINK("http://x","go")', "+cmd|' /C calc'!A0", "plain", "'quoted"],
                          "value": [-1.5, 2.0, float("nan"), 0.0], "=name": ["@SUM(A1)", "-x", "ok", "\tt"]})
    text = people_csv(frame).decode()
    back = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert list(back.columns) == ["model", "value", "'=name"]
    assert back["model"].tolist() == ['\'=HYPERLINK("http://x","go")', "'+cmd|' /C calc'!A0", "plain", "''quoted"]
    assert back["'=name"].tolist() == ["'@SUM(A1)", "'-x", "ok", "'\tt"]
    assert [unspreadsheet_cell(v) for v in back["model"]] == frame["model"].tolist()
    assert text.splitlines()[1].split(",")[-2] == "-1.5"  # a negative number stays a number


def test_a_deferred_download_writes_its_file_on_press_and_reruns_nothing():
    """``views.download_later`` hands Streamlit the writer, not the bytes, and asks for no rerun on the press: the
    rerun would replace the button while the file is written on its own thread (the browser's download was then
    cancelled at times, tests/test_browser_payload.py on a clean clone)."""
    from empathy_app import views

    calls: list[tuple[str, object, dict]] = []

    class Place:
        def download_button(self, label: str, data: object, **options: object) -> None:
            calls.append((label, data, options))

    written: list[int] = []

    def make() -> bytes:
        written.append(1)
        return b"a,b\n"

    views.download_later(Place(), "Download these rows (CSV)", make, file_name="rows.csv")
    assert calls == [("Download these rows (CSV)", make, {"on_click": "ignore", "file_name": "rows.csv"})]
    assert written == []  # nothing written until the press
