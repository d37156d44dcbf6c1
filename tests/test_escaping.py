"""The one escaping helper: each consumer gets a literal string, and the spreadsheet escape round-trips."""

from __future__ import annotations

import pytest

from empathy.escaping import (
    html_literal,
    markdown_literal,
    spreadsheet_cell,
    terminal_literal,
    unspreadsheet_cell,
)


@pytest.mark.parametrize(("raw", "expected"), [
    ("plain name", "plain name"),
    (":blue[M]**m**", "&#58;blue&#91;M&#93;&#42;&#42;m&#42;&#42;"),
    ("![r](http://x/y.png)", "&#33;&#91;r&#93;&#40;http\u2060&#58;&#47;&#47;x&#47;y&#46;png&#41;"),
    ("see www.x.org or a@b.c", "see www\u2060&#46;x&#46;org or a\u2060&#64;b&#46;c"),
    ("$x^2$", "&#36;x&#94;2&#36;"),
    ("a\nb\r\nc", "a b  c"),
    ("<b>é</b>", "&#60;b&#62;é&#60;&#47;b&#62;"),
    (42, "42"),
])
def test_markdown_literal(raw: object, expected: str) -> None:
    assert markdown_literal(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), [
    ('<span style="font-size:60px">BIG</span>', "&lt;span style=&#34;font-size:60px&#34;&gt;BIG&lt;/span&gt;"),
    ("a & 'b'", "a &amp; &#39;b&#39;"),
])
def test_html_literal(raw: str, expected: str) -> None:
    assert html_literal(raw) == expected


@pytest.mark.parametrize(("raw", "escaped"), [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
    ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
    ("-1", "'-1"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"),
    ("'quoted", "''quoted"),
    ("plain", "plain"),
    ("", ""),
    # controls and bidirectional characters never reach a people's CSV raw (issue 27)
    ("gpt\x1b[31mred", "'\\gpt\\x1b[31mred"),
    ("\u202etxt.exe", "'\\\\u202etxt.exe"),
    ("bell\x07 and \\x07 typed", "'\\bell\\x07 and \\\\x07 typed"),
    ("=cmd\x1b", "'\\=cmd\\x1b"),
    ("\u2066isolate\u2069", "'\\\\u2066isolate\\u2069"),
    ("'\\x1b typed, no control", "''\\x1b typed, no control"),
    ("line\nbreak\ttab", "line\nbreak\ttab"),
])
def test_spreadsheet_cell_round_trip(raw: str, escaped: str) -> None:
    assert spreadsheet_cell(raw) == escaped
    assert unspreadsheet_cell(escaped) == raw


@pytest.mark.parametrize("raw", ["\\x1b\x1b", "\\\\u202e\u202e", "\\", "a\\", "\x00\x7f\x9f", "\u200e\u061c",
                                 "'\\", "'\\x1b", "\\u12"])
def test_spreadsheet_cell_inverts_every_escape(raw: str) -> None:
    escaped = spreadsheet_cell(raw)
    assert unspreadsheet_cell(escaped) == raw
    assert not any(ord(c) < 0x20 and c not in "\t\n\r" or 0x7f <= ord(c) <= 0x9f or c in "\u202e\u200e\u061c"
                   for c in escaped)


@pytest.mark.parametrize(("raw", "expected"), [
    ("gpt\x1b[31mred", "gpt\\x1b[31mred"),
    ("id\rover", "id\\x0dover"),
    ("naïve 名前", "naïve 名前"),
    ("\u202etxt", "\\u202etxt"),
])
def test_terminal_literal(raw: str, expected: str) -> None:
    assert terminal_literal(raw) == expected


# ------------------------------------------------------------------ a person's own cells starting with '\

@pytest.mark.parametrize("cell", ["'\\hello", "'\\\\server\\share", "'\\x41 is not escaped by us"])
def test_a_cell_our_escaping_would_not_write_is_kept_as_written(cell):
    from empathy.escaping import unspreadsheet_cell

    assert unspreadsheet_cell(cell) == cell


@pytest.mark.parametrize("text", ["a\x1bb\\c", "\u202elorac", "=1+1", "'quoted", "\\\\share\x07"])
def test_what_our_escaping_writes_comes_back_exactly(text):
    from empathy.escaping import spreadsheet_cell, unspreadsheet_cell

    assert unspreadsheet_cell(spreadsheet_cell(text)) == text


def test_an_outputs_csv_keeps_a_generation_starting_with_quote_backslash(tmp_path):
    from empathy.io import load_outputs

    path = tmp_path / "out.csv"
    path.write_text("item_id,model,reference,generation\n1,a,I am sad.,'\\n is how I write a newline\n",
                    encoding="utf-8")
    outputs, _ = load_outputs(path)
    assert outputs["generation"].tolist() == ["'\\n is how I write a newline"]
