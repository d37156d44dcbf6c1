"""SA and CA in the text (issue 26): the lexicon judge's affect contributions and conflict cues, located, with the
numbers computed from them; the checklist's figurative uses; the one renderer of all four mechanisms."""

from __future__ import annotations

import html
import math
import re

import pytest
from test_mechanisms import demo_texts_and_sentences
from test_render import _Collector

from empathy.judges import lexicon
from empathy.mechanisms import (
    LLM_MARKS_NOTE,
    affect_highlights,
    mechanism_marks,
    mechanisms_html,
    side_html,
    summary_html,
)
from empathy.render import Span, highlight_html, legend_html


def _where(text: str, part: str, after: int = 0) -> tuple[int, int]:
    start = text.index(part, after)
    return start, start + len(part)


def _regex_spans(text: str) -> list[tuple[int, int]]:
    return lexicon.locate_sentences(text, lexicon.split_sentences(text))


# ------------------------------------------------------------------------------------------ SA: affect
def test_affect_breakdown_hand_worked():
    # VADER: devastated -3.0, terrified -3.0; S = 6, E = 6 / sqrt(51), shared equally
    text = "I am devastated and terrified."
    affect = lexicon.affect_breakdown(text)
    e = 6 / math.sqrt(51)
    assert affect.intensity == pytest.approx(e, abs=1e-15) and affect.sentences == 1
    assert [(c.start, c.end, c.text, c.kind, c.valence, c.magnitude) for c in affect.contributions] == [
        (*_where(text, "devastated"), "devastated", "word", -3.0, 3.0),
        (*_where(text, "terrified"), "terrified", "word", -3.0, 3.0)]
    assert [c.weight for c in affect.contributions] == pytest.approx([e / 2, e / 2], abs=1e-15)
    assert affect.marks_by == "lexicon"


def test_affect_emphasis_boosters_and_sentences_hand_worked():
    # "so" boosts sad (-2.1) by 0.293 (VADER's B_INCR) and, two words before it, by x 1.25 (VADER's "so"/"this"
    # rule): v = -2.393 * 1.25 = -2.99125; "!" adds 0.292 to S: S = 2.99125 + 0.292.
    # The second sentence is neutral (E_s = 0), so E = E_1 / 2 and every weight is halved.
    text = "I am so sad! The bus left at nine."
    affect = lexicon.affect_breakdown(text)
    v = 2.393 * 1.25
    s = v + 0.292
    e1 = s / math.sqrt(s * s + 15)
    assert affect.intensity == pytest.approx(e1 / 2, abs=1e-12) == lexicon.affect_intensity(text)
    assert [(c.text, c.kind) for c in affect.contributions] == [("sad", "word"), ("!", "emphasis")]
    assert [c.valence for c in affect.contributions] == pytest.approx([-v, 0.0])
    assert [c.weight for c in affect.contributions] == pytest.approx([e1 * v / s / 2, e1 * 0.292 / s / 2])
    assert (affect.contributions[1].start, affect.contributions[1].end) == _where(text, "!")


def test_emoji_is_one_mark_and_weights_add_up_to_e():
    # VADER reads an emoji as its description ("crying face"): its tokens share the emoji's one mark
    text = "She cried \U0001F622. We were furious!! Was it fair?? No."
    affect = lexicon.affect_breakdown(text)
    emoji = [c for c in affect.contributions if c.text == "\U0001F622"]
    assert len(emoji) == 1 and emoji[0].kind == "word" and emoji[0].end - emoji[0].start == 1
    assert sum(c.weight for c in affect.contributions) == pytest.approx(affect.intensity, abs=1e-12)
    assert affect.intensity == lexicon.affect_intensity(text)  # the same number, bit for bit
    for part in affect.contributions:
        assert text[part.start:part.end] == part.text


@pytest.mark.parametrize("text", ["", "   ", "The company reported quarterly results."])
def test_affect_of_flat_texts_has_no_marks(text):
    affect = lexicon.affect_breakdown(text)
    assert affect.intensity == 0.0 and affect.contributions == ()


def test_affect_breakdown_bad_input():
    with pytest.raises(TypeError, match="text must be a str"):
        lexicon.affect_breakdown(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="outside the text"):
        lexicon.affect_breakdown("abc", [(0, 9)])


def test_lost_words_and_summary():
    reference = lexicon.affect_breakdown("I am devastated and furious. I feel hopeless.")
    generation = lexicon.affect_breakdown("I am furious.")
    # hopeless (-3.1) is alone in its sentence, so it weighs more than devastated (-3.0), which shares one
    assert lexicon.lost_affect(reference, generation) == ["hopeless", "devastated"]
    assert lexicon.lost_summary(reference, generation) == "lost: hopeless, devastated"
    assert lexicon.lost_summary(reference, generation, limit=1) == "lost: hopeless (+1 more)"
    assert lexicon.lost_summary(generation, reference) == "lost: none"
    with pytest.raises(ValueError, match="limit"):
        lexicon.lost_summary(reference, generation, limit=0)


def test_demo_sa_marks_add_up_to_the_lexicon_judges_e():
    """On the judges' sentences, the SA weights of every demo text add up to its lexicon e rating."""
    outputs, ratings, spans = demo_texts_and_sentences()
    e = ratings[ratings["dimension"].isin(["e_ref", "e_gen"])].merge(outputs, on=["item_id", "model"])
    assert len(e) > 200
    for row in e.itertuples():
        text = row.reference if row.dimension == "e_ref" else row.generation
        marks = affect_highlights(lexicon.affect_breakdown(text, spans[text]))
        assert sum(mark["weight"] for mark in marks) == pytest.approx(row.value, abs=1e-12), (row.item_id, row.model)


# ------------------------------------------------------------------------------------------ CA: cues
@pytest.mark.parametrize(("response", "expected"), [
    ("Don't worry, everything will work out. Try to find common ground.",
     [("Don't worry", "reassurance"), ("everything will", "reassurance"),
      ("Try to find common ground.", "solution"), ("Try to", "solution"), ("find common ground", "compromise")]),
    ("It sounds like this hurt. What feels hardest? Have you tried telling him?",
     [("It sounds like", "reflection"), ("What feels hardest?", "question"),
      ("Have you tried telling him?", "solution")]),
    ("Here are some tips:\n1. Keep a diary\n- Move on", [
        ("Here are some", "solution"), ("1. Keep a diary", "solution"), ("Keep a diary", "solution"),
        ("- Move on", "solution"), ("Move on", "closure")]),
    ("It’s common to feel this way; many couples do. He probably meant well.",
     [("It’s common to", "normalising"), ("many couples", "normalising"), ("He probably meant", "deflection")]),
])
def test_conflict_cues_are_located_with_their_category(response, expected):
    cues = lexicon.conflict_cues(response)
    assert [(cue.text, cue.category) for cue in cues.cues] == expected
    for cue in cues.cues:
        assert response[cue.start:cue.end] == cue.text
        assert cue.category in lexicon.CUE_CATEGORIES


def test_ca_label_is_computed_from_the_cues():
    cues = lexicon.conflict_cues("Tell me more. What happened? I'm sure it will be fine. Don't worry.")
    # A = 3 (I'm sure, it will be, Don't worry); X = 1 question + 1/2 reflection
    assert (cues.solution, cues.harmony, cues.questions, cues.reflective) == (0, 3, 1, 1)
    assert (cues.avoidance, cues.exploration, cues.label) == (3.0, 1.5, 1)
    sides = {lexicon.CUE_CATEGORIES[cue.category][0] for cue in cues.cues}
    assert sides == {"avoidance", "exploration"}
    assert lexicon.ConflictCues().label == 0


def test_the_cue_rules_are_unchanged():
    # the categories are named groups of the same alternation: the rule text, and so its hash in the lexicon
    # judge's signature, is the one the demo ratings were made with before the cues were located
    assert lexicon._cue_hash() == "9e5b83b1409e"
    assert lexicon._HARMONY.pattern != lexicon._HARMONY_RULE


def test_demo_ca_labels_follow_from_the_located_cues():
    outputs, ratings, spans = demo_texts_and_sentences()
    ca = ratings[ratings["dimension"] == "ca"].merge(outputs, on=["item_id", "model"])
    assert len(ca) > 30
    for row in ca.itertuples():
        cues = lexicon.conflict_cues(row.generation, [row.generation[a:b] for a, b in spans[row.generation]])
        assert cues.label == row.value, (row.item_id, row.model)


def test_client_tension_hand_worked():
    narrative = ("I feel torn. My manager yelled at me in front of everyone. I want him to comfort me, but I am "
                 "terrified of seeming needy. Will I lose them?")
    found = [(cue.text, cue.category) for cue in lexicon.client_tension(narrative)]
    assert found == [("torn", "ambivalence"), ("yelled at", "friction"),
                     ("I want him to comfort me, but I am terrified of seeming needy.", "mixed wants"),
                     ("I am terrified of", "fear"), ("Will I lose them?", "question")]
    assert lexicon.client_tension("The weather was fine.") == ()
    with pytest.raises(TypeError):
        lexicon.client_tension(3)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------ EGM: checklist
@pytest.mark.parametrize(("sentence", "expected"), [
    # expressive frames: a feeling or a speech act, not an event
    ("I also want to scream.", []),
    ("It makes me want to scream.", []),
    ("Honestly, I could scream.", []),
    ("I felt like screaming.", []),
    ("My father screamed at me to get out.", []),
    ("I sat in the car and screamed into my scarf.", []),
    ("I feel like I'm dying inside.", []),
    # hyperbole
    ("I was scared to death.", []),
    ("This waiting is killing me.", []),
    ("We were dying of embarrassment.", []),
    ("The courtyard went dead silent.", []),
    ("My phone died at noon.", []),
    # other senses
    ("Give it a shot.", []),
    ("They shot a film in the square.", []),
    ("There is bad blood between the brothers.", []),
    ("It was an abuse of power.", []),
    ("She got a flu shot.", []),
    ("It hurt my feelings.", []),
    # literal uses still count
    ("People were screaming.", [("graphic", "screaming")]),
    ("She sank screaming into the dark.", [("graphic", "screaming")]),
    ("The screams of the injured filled the air.", [("graphic", "screams"), ("injury", "injured")]),
    ("He was beaten to death.", [("violence", "beaten"), ("death", "death")]),
    ("They are killing civilians.", [("death", "killing")]),
    ("I want to die.", [("death", "die")]),
    ("He wanted to kill her.", [("death", "kill")]),
    ("A shot rang out.", [("violence", "shot")]),
    ("There was blood everywhere.", [("graphic", "blood")]),
    ("The child suffered abuse.", [("abuse", "abuse")]),
    ("He was badly hurt.", [("injury", "hurt")]),
    ("The dead were buried.", [("death", "dead")]),
])
def test_figurative_uses_are_not_counted_and_literal_ones_are(sentence, expected):
    assert lexicon.disturbing_matches(sentence) == expected


def test_figurative_kinds_are_named():
    assert lexicon.FIGURATIVE_USES == ("expressive frame", "hyperbole", "other sense")
    assert lexicon.LEXICON_VERSION == "2"


# ------------------------------------------------------------------------------------------ the renderer
class _Marks(_Collector):
    """Every ``<mark>`` start tag of a page with its attributes, and which ``ld-text`` block (side) it is in."""

    def __init__(self) -> None:
        super().__init__()
        self.marks: list[dict[str, str]] = []
        self.sides = -1

    def handle_starttag(self, tag, attrs):
        super().handle_starttag(tag, attrs)
        values = {name: value or "" for name, value in attrs}
        if tag == "div" and values.get("class") == "ld-text":
            self.sides += 1
        if tag == "mark":
            self.marks.append({**values, "side": str(self.sides)})


def _parse(markup: str) -> _Marks:
    parser = _Marks()
    parser.feed(markup)
    parser.close()
    return parser


def _distinct(marks: list[dict[str, str]], css: str, side: int | None = None) -> dict[str, dict[str, str]]:
    """One entry per span (``data-mark``) of the marks whose class list holds ``css`` (a legend's samples, which
    have no ``data-mark``, are not spans)."""
    return {mark["data-mark"]: mark for mark in marks if css in mark.get("class", "").split()
            and "data-mark" in mark and (side is None or mark["side"] == str(side))}


def test_overlapping_marks_of_all_four_nest_and_each_span_is_counted_once():
    text = "You should accept that he was attacked brutally."
    spans = [Span(*_where(text, "he was attacked"), "agentless", "passive"),
             Span(*_where(text, "attacked"), "disturbing:violence", "checklist"),
             Span(*_where(text, "attacked brutally"), "affect:word", "valence", weight=0.25, strength=0.6),
             Span(*_where(text, "You should accept"), "cue:solution", "advice phrase"),
             Span(*_where(text, "accept that he"), "cue:deflection", "x")]
    markup = highlight_html(text, spans, numbered=True)
    assert highlight_html(text, list(reversed(spans)), numbered=True) == markup
    parsed = _parse(markup)
    assert "".join(parsed.text) == text and markup.count("<mark") == markup.count("</mark>")
    counts = {css: len(_distinct(parsed.marks, css)) for css in ("ld-agentless", "egm-disturbing", "sa-affect",
                                                                  "ca-cue")}
    assert counts == {"ld-agentless": 1, "egm-disturbing": 1, "sa-affect": 1, "ca-cue": 2}
    # "attacked" lies inside four spans: agentless, disturbing, affect (outermost first: earlier start, longer)
    nested = markup[markup.index("attacked") - 700:markup.index("attacked")]
    assert nested.count("<mark") >= 3
    assert [m["data-weight"] for m in _distinct(parsed.marks, "sa-affect").values()] == ["0.25"]
    assert highlight_html(text, spans) == highlight_html(text, spans, numbered=False)
    assert "data-mark" not in highlight_html(text, spans)


@pytest.mark.parametrize(("span", "error"), [
    ({"start": 0, "end": 1, "label": "affect:word", "weight": "x"}, TypeError),
    ({"start": 0, "end": 1, "label": "affect:word", "weight": float("nan")}, ValueError),
    ({"start": 0, "end": 1, "label": "affect:word", "strength": True}, TypeError),
])
def test_bad_weights_raise(span, error):
    with pytest.raises(error):
        highlight_html("abc", [span])


PAYLOAD = '<script>alert(1)</script> "quoted" \'x\' <img src=x onerror=alert(2)> & [a](javascript:b) $x$'


def test_everything_from_data_is_escaped_in_the_pair():
    reference = f"I am devastated. {PAYLOAD} Will he ever listen to me?"
    generation = f"You should stay positive! {PAYLOAD} He was killed."
    marks = mechanism_marks(reference, generation, sentence_spans=(_regex_spans(reference),
                                                                   _regex_spans(generation)),
                            distancing=([{"start": 0, "end": 4, "label": "<x>", "rule": PAYLOAD}], []))
    page = mechanisms_html(marks, titles=(PAYLOAD, "<b>gen</b>"), llm_judges=[PAYLOAD])
    parsed = _parse(page)
    assert set(parsed.tags) <= {"div", "mark", "h3", "p", "br"}
    assert {name for name, _ in parsed.attributes} <= {"class", "style", "title", "data-mark", "data-weight"}
    assert "<script" not in page and "<img" not in page and "&lt;script&gt;" in page
    # Markdown-neutral and one line, as highlight_html: safe for st.markdown(unsafe_allow_html=True) too
    # (attribute values are not Markdown: only the text between tags matters)
    between_tags = re.sub(r"<[^>]*>", "", page)
    assert "\n" not in page and "](javascript" not in between_tags and "$x$" not in between_tags
    visible = html.unescape("".join(parsed.text))
    assert PAYLOAD in visible and "<b>gen</b>" in visible


def test_the_pair_shows_all_four_with_a_legend_and_what_was_lost():
    reference = "I am devastated and furious. My sister blames me, but I want her back. What do I do?"
    generation = "You should stay positive. Everything will work out. The meeting was held and he was killed."
    marks = mechanism_marks(reference, generation, sentence_spans=(_regex_spans(reference),
                                                                   _regex_spans(generation)),
                            distancing=([], [{"start": 26, "end": 49, "label": "agentless", "rule": "was held"}]))
    page = mechanisms_html(marks)
    parsed = _parse(page)
    generation_marks = [m for m in parsed.marks if m["side"] == "1"]
    assert len(_distinct(generation_marks, "ld-agentless")) == 1
    assert len(_distinct(generation_marks, "egm-disturbing")) == 1  # killed
    # You should, stay positive, Everything will
    assert len(_distinct(generation_marks, "ca-cue")) == len(marks.conflict.cues) == 3
    tension = _distinct([m for m in parsed.marks if m["side"] == "0"], "ca-tension")
    assert len(tension) == len(marks.reference.cues) >= 2
    for side, affect in ((0, marks.reference.affect), (1, marks.generation.affect)):
        weights = [float(m["data-weight"]) for m in _distinct(parsed.marks, "sa-affect", side).values()]
        assert len(weights) == len(affect.contributions) and sum(weights) == pytest.approx(affect.intensity, abs=1e-12)
    visible = html.unescape("".join(parsed.text))
    assert "lost: devastated, furious" in visible
    assert "lexicon CA label 1" in visible and marks.conflict.label == 1
    assert 'class="sa-affect"' in legend_html(affect=True) and "ca-cue" in page.split("</div>", 1)[0]
    assert LLM_MARKS_NOTE.split("{")[0] not in visible
    note = html.unescape("".join(_parse(summary_html(marks, llm_judges=["gpt-5"])).text))
    assert "not gpt-5's: an LLM judge gives one number per text" in note
    no_ca = mechanism_marks(reference, generation, sentence_spans=(_regex_spans(reference),
                                                                  _regex_spans(generation)), conflict=False)
    assert no_ca.conflict is None and no_ca.conflict_summary() == ""
    assert "ca-cue" not in side_html(no_ca.generation) and "ca-tension" not in side_html(no_ca.reference)


def test_mechanism_marks_bad_input():
    with pytest.raises(TypeError, match="generation must be a str"):
        mechanism_marks("a", None, sentence_spans=([], []))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="two lists"):
        mechanism_marks("a", "b", sentence_spans=([],))
    with pytest.raises(ValueError, match="outside the text"):
        mechanism_marks("a", "b", sentence_spans=([(0, 5)], []))
