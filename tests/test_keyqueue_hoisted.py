"""The Relabel window's marks with their styles and titles sent once per window (empathy_app.keyqueue._hoisted):
put back as the browser puts them back, the markup is the renderer's own; a hostile rule string in a title stays
text; two sessions numbering new values at once never give two values one number."""

from __future__ import annotations

import html
import re
import threading

import pytest

pytest.importorskip("streamlit")
from empathy.render import highlight_html  # noqa: E402
from empathy_app.keyqueue import _hoisted  # noqa: E402

PER_SESSION = 150
TEXT = 'It is understood that "mistakes" were made & <b>noted</b>; the decision was taken.'
SPANS = [{"start": 0, "end": 2, "label": "impersonal_subject", "rule": 'it "expletive" <script>x</script> & co'},
         {"start": 6, "end": 16, "label": "agentless_passive", "rule": "is + VBN"},
         {"start": 57, "end": 65, "label": "nominalization", "rule": "nominal:-ion:decide"},
         {"start": 0, "end": 20, "label": "affect:sa", "rule": "'understood' valence +1.0", "weight": 0.25,
          "strength": 0.5}]


def _put_back(markup: str, named) -> str:
    """What queue.js does: each data-rs / data-rt number replaced by its table's value (as an attribute here)."""
    tables = {"styles": {}, "titles": {}}
    for table, number, value in named:
        tables[table][number] = value
    markup = re.sub(r' data-rs="(\d+)"', lambda m: f' style="{tables["styles"][m.group(1)]}"', markup)
    return re.sub(r' data-rt="(\d+)"', lambda m: f' title="{html.escape(tables["titles"][m.group(1)])}"', markup)


def test_hoisted_marks_put_back_are_the_renderers_markup_and_titles_stay_text():
    original = highlight_html(TEXT, SPANS, numbered=True)
    assert original.count(' style="') >= 5 and original.count(' title="') >= 4  # a span cut by another: pieces
    hoisted, named = _hoisted({}, original)
    assert ' style="' not in hoisted and ' title="' not in hoisted and "<script>" not in hoisted
    assert _put_back(hoisted, named) == original
    titles = {value for table, _, value in named if table == "titles"}
    # decoded: the browser sets it as the title property (text), never as HTML
    assert 'rule: it "expletive" <script>x</script> & co (impersonal_subject)' in titles
    # a style used by several marks is one entry; the numbers are kept per data set (memo)
    assert len({number for table, number, _ in named if table == "styles"}) < original.count(' style="')


def test_two_sessions_numbering_at_once_never_share_a_number():
    """Without the lock this fails most runs (8 threads, threads switching as often as they can)."""
    import sys

    memo: dict = {}
    found: list = []
    start = threading.Barrier(8)

    def session(k: int) -> None:
        start.wait()
        for j in range(PER_SESSION):
            spans = [{"start": 0, "end": 2, "label": "nominalization", "rule": f"rule {k}-{j}"}]
            found.extend(_hoisted(memo, highlight_html("ab cd", spans, numbered=True))[1])

    threads = [threading.Thread(target=session, args=(k,)) for k in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can: a race shows
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    by_number: dict[tuple[str, str], set[str]] = {}
    for table, number, value in found:
        by_number.setdefault((table, number), set()).add(value)
    assert all(len(values) == 1 for values in by_number.values())
    assert len({value for table, _, value in found if table == "titles"}) == 8 * PER_SESSION
