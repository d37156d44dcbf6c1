"""Tests of safe highlighting (empathy.render)."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

from empathy.render import Span, escape_text, highlight_html, legend_html

ATTACKS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<img src=x onerror=alert(document.cookie)>",
    "\"><svg onload=alert(1)>",
    "' onmouseover='alert(1)",
    "[click](javascript:alert(1))",
    "$\\alpha$ and **bold** and `code`",
    "<!-- comment --> </div> <style>body{display:none}</style>",
    "&lt;already escaped&gt;",
]


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def _parse(markup: str) -> _Collector:
    collector = _Collector()
    collector.feed(markup)
    collector.close()
    return collector


def _visible(markup: str) -> str:
    return "".join(_parse(markup.replace("<br>", "\n")).text)


@pytest.mark.parametrize("attack", ATTACKS)
def test_data_never_injects_markup(attack):
    text = f"Before {attack} after."
    spans = [{"start": 0, "end": 6, "label": "nominalization", "rule": attack},
             {"start": 7, "end": 7 + len(attack), "label": "agentless", "rule": "<b>x</b>"}]
    markup = highlight_html(text, spans)
    parsed = _parse(markup)
    assert set(parsed.tags) <= {"div", "mark", "br"}
    assert {name for name, _ in parsed.attributes} <= {"class", "style", "title"}
    assert _visible(markup) == text
    assert "<script" not in markup and "<img" not in markup and "<svg" not in markup
    titles = [value for name, value in parsed.attributes if name == "title"]
    assert f"rule: {' '.join(attack.split())} (Nominalization)" in titles


def test_markdown_and_latex_characters_are_entities():
    markup = highlight_html("a *b* _c_ [d](e) $f$ `g` # h ~ i | j \\ k")
    body = re.sub(r"&#\d+;", "", markup.split(">", 1)[1].rsplit("<", 1)[0])
    for character in "*_[]()$`#~|\\":
        assert character not in body, character
    assert _visible(markup) == "a *b* _c_ [d](e) $f$ `g` # h ~ i | j \\ k"


def test_single_line_so_markdown_sees_one_html_block():
    markup = highlight_html("one\n\ntwo\r\nthree")
    assert "\n" not in markup and "\r" not in markup
    assert markup.count("<br>") == 3
    assert markup.startswith('<div class="ld-text"') and markup.endswith("</div>")


def test_quotes_escaped_in_text_and_attributes():
    markup = highlight_html('He said "no" and \'yes\'', [Span(0, 2, "impersonal", 'r"1\'')])
    assert 'title="rule: r&quot;1&#x27; (Impersonal subject)"' in markup
    assert "&quot;no&quot;" in markup and "&#x27;yes&#x27;" in markup


def test_exact_markup_of_a_simple_span():
    markup = highlight_html("The decision was made.", [Span(4, 12, "nominalization", "suffix -ion")])
    assert re.sub(r' style="[^"]*"', "", markup) == (
        '<div class="ld-text">The <mark class="ld-nominalization" title="rule: suffix -ion (Nominalization)">'
        "decision</mark> was made.</div>")


def test_three_labels_three_classes_and_legend():
    text = "The decision was made by it."
    spans = [Span(4, 12, "nominalization", "n"), Span(13, 21, "agentless", "a"), Span(25, 27, "impersonal", "i")]
    markup = highlight_html(text, spans)
    for css in ("ld-nominalization", "ld-agentless", "ld-impersonal"):
        assert markup.count(f'class="{css}"') == 1
    legend = legend_html()
    for css, name in (("ld-nominalization", "Nominalization"), ("ld-impersonal", "Impersonal subject"),
                      ("ld-agentless", "Agentless clause")):
        assert css in legend and name in legend
    assert set(_parse(legend).tags) == {"div", "mark"}


def test_overlapping_and_nested_spans_are_deterministic():
    text = "abcdefghij"
    spans = [Span(2, 6, "agentless", "a"), Span(0, 4, "nominalization", "n"), Span(1, 9, "impersonal", "i"),
             Span(3, 3, "agentless", "empty")]
    first = highlight_html(text, spans)
    assert highlight_html(text, list(reversed(spans))) == first
    assert _visible(first) == text
    stripped = re.sub(r' style="[^"]*"', "", first)
    stripped = re.sub(r' title="[^"]*"', "", stripped)
    stripped = stripped.replace('<div class="ld-text">', "<div>").replace('class="ld-', "").replace('"', "")
    assert stripped == (
        "<div><mark nominalization>a</mark>"
        "<mark nominalization><mark impersonal>b</mark></mark>"
        "<mark nominalization><mark impersonal><mark agentless>cd</mark></mark></mark>"
        "<mark impersonal><mark agentless>ef</mark></mark>"
        "<mark impersonal>ghi</mark>j</div>")
    assert "empty" not in first
    # balanced tags
    assert first.count("<mark") == first.count("</mark>")


def test_identical_spans_with_different_rules_both_kept():
    markup = highlight_html("xyz", [Span(0, 3, "agentless", "r2"), Span(0, 3, "agentless", "r1")])
    assert markup.index("rule: r1") < markup.index("rule: r2")


@pytest.mark.parametrize(("text", "start", "end", "inside"), [
    ("abc", 0, 3, "abc"),
    ("abc", 0, 1, "a"),
    ("abc", 2, 3, "c"),
    ("naïve café 😀 déjà", 11, 12, "😀"),
    ("naïve café 😀 déjà", 13, 17, "déjà"),
    ("日本語のテキスト", 0, 3, "日本語"),
])
def test_offsets_at_text_ends_and_unicode(text, start, end, inside):
    markup = highlight_html(text, [{"start": start, "end": end, "label": "impersonal", "rule": "r", "text": inside}])
    assert re.search(r">([^<]*)</mark>", markup).group(1) == inside
    assert _visible(markup) == text


@pytest.mark.parametrize(("span", "error"), [
    ({"start": -1, "end": 2, "label": "agentless"}, ValueError),
    ({"start": 0, "end": 4, "label": "agentless"}, ValueError),
    ({"start": 2, "end": 1, "label": "agentless"}, ValueError),
    ({"start": "0", "end": 1, "label": "agentless"}, TypeError),
    ({"start": 0.0, "end": 1, "label": "agentless"}, TypeError),
])
def test_bad_offsets_raise(span, error):
    with pytest.raises(error, match="span"):
        highlight_html("abc", [span])


def test_unknown_label_is_escaped_and_gets_generic_class():
    markup = highlight_html("abc", [{"start": 0, "end": 1, "label": "<x>", "rule": "r"}])
    assert 'class="ld-other"' in markup and "&lt;x&gt;" in markup and "<x>" not in markup


def test_object_spans_with_attributes():
    class Obj:
        start, end, label, rule, text = 0, 1, "nominalization", "obj", "a"

    assert "rule: obj" in highlight_html("ab", [Obj()])


def test_non_string_text_rejected():
    with pytest.raises(TypeError, match="text"):
        highlight_html(None)  # type: ignore[arg-type]


def test_escape_text_round_trips_through_html_unescape():
    raw = "<&>\"' *_[]$"
    assert html.unescape(escape_text(raw)) == raw


def test_conversation_html_is_inert_and_bolds_known_speakers():
    from empathy.render import conversation_html, conversation_turns

    text = ("Seeker: lost my job ![r](http://h/x.png)\n\n  Supporter: :blue[M]**m** [l](http://h/l) $x^2$\n"
            "Narrator: <img src=x onerror=alert(1)>\n")
    assert conversation_turns(text) == ["Seeker: lost my job ![r](http://h/x.png)",
                                        "Supporter: :blue[M]**m** [l](http://h/l) $x^2$",
                                        "Narrator: <img src=x onerror=alert(1)>"]
    out = conversation_html(text)
    assert out == ('<div class="conversation"><b>Seeker:</b> lost my job &#33;&#91;r&#93;&#40;http&#58;//h/x.png'
                   '&#41;<br><b>Supporter:</b> &#58;blue&#91;M&#93;&#42;&#42;m&#42;&#42; &#91;l&#93;&#40;http&#58;'
                   '//h/l&#41; &#36;x^2&#36;<br>Narrator&#58; &lt;img src=x onerror=alert&#40;1&#41;&gt;</div>')
    assert "\n" not in out
    with pytest.raises(TypeError, match="conversation must be a string"):
        conversation_turns(None)  # type: ignore[arg-type]


def _escape_per_character(text: str) -> str:
    """The per-character definition :func:`escape_text` is checked against (its loop before str.translate)."""
    import html as html_module

    from empathy.render import _MARKDOWN_SPECIAL

    pieces = []
    for character in text:
        if character in _MARKDOWN_SPECIAL:
            pieces.append(f"&#{ord(character)};")
        elif character == "\n":
            pieces.append("<br>")
        elif character == "\r":
            continue
        else:
            pieces.append(html_module.escape(character, quote=True))
    return "".join(pieces)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_escape_text_equals_the_per_character_definition(seed):
    import random

    from empathy.render import _MARKDOWN_SPECIAL, escape_text

    rng = random.Random(seed)
    alphabet = sorted(_MARKDOWN_SPECIAL) + list("&<>\"'\n\r\t abcé😀\u2028\x00;#")
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert escape_text(text) == _escape_per_character(text)
