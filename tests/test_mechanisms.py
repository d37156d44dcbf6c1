"""The four mechanisms in the text: disturbing-content spans, one output's SA/EGM inputs and terms, row notes."""

from __future__ import annotations

import math
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from empathy.judges import lexicon
from empathy.mechanisms import SCORE_COLUMNS, category_counts, disturbing_highlights, note_fields, output_scores
from empathy.paths import DEMO_DIR
from empathy.render import Span, highlight_html, legend_html

TEXT = "Nobody died. He was shot dead, and  no one was hurt.\nThe wound bled."


def _where(text: str, part: str, after: int = 0) -> tuple[int, int]:
    start = text.index(part, after)
    return start, start + len(part)


# ------------------------------------------------------------------------------------------- spans
def test_disturbing_spans_hand_worked():
    # "died" is negated by "Nobody", "hurt" by "no one" (read as "nobody"); "shot dead" is one phrase.
    found = lexicon.disturbing_spans(TEXT)
    assert [(m.start, m.end, m.category, m.phrase) for m in found] == [
        (*_where(TEXT, "shot dead"), "death", "shot dead"),
        (*_where(TEXT, "wound"), "injury", "wound"),
        (*_where(TEXT, "bled"), "injury", "bled"),
    ]
    assert len(found) == lexicon.disturbing_count(TEXT) == 3


@pytest.mark.parametrize(("text", "expected"), [
    # a character whose lower case is two characters must not shift the offsets after it
    ("İstanbul: a man was killed.", [("killed", "death")]),
    # curly apostrophe: "didn’t" negates "die"; "died" three tokens later is counted
    ("He didn’t die but she died.", [("died", "death")]),
    # a line break inside a phrase: the judges read the sentence whitespace-collapsed
    ("They were shot\n   dead.", [("shot\n   dead", "death")]),
    ("Dead tired after the blood test.", []),  # exclusions consume without counting
    ("", []),
])
def test_disturbing_spans_point_at_the_counted_characters(text, expected):
    found = lexicon.disturbing_spans(text)
    assert [(text[m.start:m.end], m.category) for m in found] == expected
    assert len(found) == lexicon.disturbing_count(text)


def test_disturbing_spans_on_given_sentences_and_bad_input():
    text = "He was stabbed. She died."
    # as one sentence or two, the same two elements (no negator, no phrase across the boundary)
    assert [m.phrase for m in lexicon.disturbing_spans(text, [(0, len(text))])] == ["stabbed", "died"]
    assert [m.phrase for m in lexicon.disturbing_spans(text, [(16, 25)])] == ["died"]
    with pytest.raises(ValueError, match="outside the text"):
        lexicon.disturbing_spans(text, [(0, 99)])
    with pytest.raises(TypeError, match="str"):
        lexicon.disturbing_spans(None)  # type: ignore[arg-type]


def test_locate_sentences():
    text = "First  one.\nSecond\tone!  Third."
    spans = lexicon.locate_sentences(text, ["First one.", "Second one!", "Third."])
    assert [text[a:b] for a, b in spans] == ["First  one.", "Second\tone!", "Third."]
    with pytest.raises(ValueError, match="not in the text"):
        lexicon.locate_sentences(text, ["Fourth."])


def test_tokens_unchanged_by_the_positional_reader():
    # the counting rules read the same tokens as the earlier string-replacement tokenizer
    def old(sentence: str) -> list[str]:
        text = sentence.lower().replace("’", "'").replace("no one", "nobody")
        return lexicon._TOKEN.findall(text.replace("n't", " n't"))

    rng = np.random.default_rng(0)
    alphabet = list("abn't’ NoOnE-xİ") + ["no one", "n't", "’t"]
    for _ in range(3000):
        sentence = " ".join("".join(rng.choice(alphabet, size=int(rng.integers(0, 12)))).split())
        assert lexicon._tokens(sentence) == old(sentence), sentence


def test_highlights_for_render_and_counts():
    marks = disturbing_highlights(TEXT)
    assert [(s["label"], s["text"]) for s in marks] == [
        ("disturbing:death", "shot dead"), ("disturbing:injury", "wound"), ("disturbing:injury", "bled")]
    assert marks[0]["rule"] == "lexicon checklist, counted as 'shot dead'"
    assert category_counts([*marks, {"label": "agentless"}]) == {"death": 1, "injury": 2}


class _Marks(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.titles: list[tuple[str, str]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        values = dict(attrs)
        if tag == "mark":
            self.titles.append((values.get("class", ""), values.get("title", "")))


def test_disturbing_marks_render_escaped_with_their_tooltip_and_nest_with_distancing():
    text = 'The "<b>" man was killed <i>.'
    killed = _where(text, "killed")
    spans = [Span(0, len(text) - 5, "agentless", "passive"),
             {"start": killed[0], "end": killed[1], "label": "disturbing:death",
              "rule": "lexicon checklist, counted as 'killed' <script>"}]
    markup = highlight_html(text, spans)
    parser = _Marks()
    parser.feed(markup)
    assert set(parser.tags) == {"div", "mark"}  # the text's <b> and <i> are escaped, not tags
    assert parser.titles == [
        ("ld-agentless", "rule: passive (Agentless clause)"),
        ("ld-agentless", "rule: passive (Agentless clause)"),
        ("egm-disturbing egm-death", "Disturbing content: death (lexicon checklist, counted as 'killed' <script>)"),
    ]
    legend = legend_html(disturbing=True)
    assert "egm-disturbing" in legend and "egm-disturbing" not in legend_html()


# ------------------------------------------------------------------------------------------- scores
def _ratings(rows: list[tuple[str, str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["item_id", "model", "rater", "dimension", "value"])


def test_output_scores_hand_worked():
    ratings = _ratings([
        ("n1", "gorse", "author", "e_ref", 0.8), ("n1", "gorse", "author", "e_gen", 0.95),
        ("n1", "gorse", "author", "u_ref", 2), ("n1", "gorse", "author", "u_gen", 4),
        ("n1", "gorse", "zero", "e_ref", 0.0), ("n1", "gorse", "zero", "e_gen", 0.3),
        ("n1", "gorse", "zero", "u_ref", 0), ("n1", "gorse", "zero", "u_gen", 0),
        ("n1", "gorse", "cajudge", "ca", 1),
        ("n1", "gorse", "author", "other", 7),  # not a paper dimension: not shown
        ("n1", "fennel", "author", "e_ref", 0.5), ("n2", "gorse", "author", "e_ref", 0.5),  # other outputs
    ])
    table = output_scores(ratings, "n1", "gorse", 6, 5)
    assert list(table.columns) == list(SCORE_COLUMNS)
    assert list(table["judge"]) == ["author", "cajudge", "zero"]
    author, cajudge, zero = (table.iloc[k] for k in range(3))
    # SA = (0.8 - 0.95) / 0.8; EGM: a = 2/6, b = 4/5, |a - b| / (a + b) = (7/15) / (17/15) = 7/17
    assert author["SA"] == pytest.approx(-0.1875) and author["SA status"] == "ok"
    assert author["EGM"] == pytest.approx(7 / 17) and author["EGM status"] == "ok"
    assert (author["d"], author["q"]) == (6.0, 5.0) and math.isnan(author["ca"])
    assert math.isnan(cajudge["SA"]) and cajudge["SA status"] == "missing" and cajudge["ca"] == 1.0
    assert math.isnan(zero["SA"]) and zero["SA status"] == "undefined"  # E(t) = 0
    assert zero["EGM"] == 0.0 and zero["EGM status"] == "ok"  # both zero: term 0 by default
    assert output_scores(ratings, "n1", "gorse", 6, 5, egm_both_zero="exclude").iloc[2]["EGM status"] == "undefined"


def test_output_scores_unknown_sentences_and_bad_input():
    ratings = _ratings([("n1", "m", "j", "u_ref", 1), ("n1", "m", "j", "u_gen", 2)])
    unknown = output_scores(ratings, "n1", "m", None, 3)
    assert math.isnan(unknown.iloc[0]["EGM"]) and unknown.iloc[0]["EGM status"] == "undefined"
    assert output_scores(ratings, "n9", "m", 1, 1).empty
    with pytest.raises(ValueError, match="sentences_ref"):
        output_scores(ratings, "n1", "m", -1, 3)
    with pytest.raises(TypeError, match="sentences_gen"):
        output_scores(ratings, "n1", "m", 1, "3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lack"):
        output_scores(ratings.drop(columns="rater"), "n1", "m", 1, 1)
    with pytest.raises(ValueError, match="u_gen"):
        output_scores(_ratings([("n1", "m", "j", "u_ref", 1), ("n1", "m", "j", "u_gen", -2)]), "n1", "m", 1, 1)


@pytest.mark.parametrize(("row", "expected"), [
    ({"demo_note": "granularity mismatch", "source": "  written for the demo "},
     [("demo_note", "granularity mismatch"), ("source", "written for the demo")]),
    ({"demo_note": float("nan"), "source": ""}, []),
    ({"reference": "x"}, []),
    ({"source": None, "demo_note": "**not bold**"}, [("demo_note", "**not bold**")]),  # escaped by the page
])
def test_note_fields(row, expected):
    assert note_fields(row) == expected


# ---------------------------------------------------------------------------------- demo agreement
def demo_texts_and_sentences() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, list[tuple[int, int]]]]:
    """The demo outputs, the lexicon judge's ratings and the judges' sentences of every demo text (skips the test
    when no spaCy model is installed)."""
    segment = pytest.importorskip("empathy.judges.segment")
    try:
        outputs = pd.read_csv(DEMO_DIR / "outputs.csv", dtype=str, keep_default_na=False)
        ratings = pd.read_csv(DEMO_DIR / "ratings_lexicon.csv")
        texts = sorted(set(outputs["reference"]) | set(outputs["generation"]))
        spans = dict(zip(texts, segment.sentence_spans(texts), strict=True))
    except (OSError, ImportError) as error:  # no spaCy model installed
        pytest.skip(f"spaCy model not available: {error}")
    return outputs, ratings, spans


def test_demo_highlights_are_the_lexicon_judges_counts():
    """On the judges' sentences, the underlined elements of every demo text number its lexicon u rating."""
    outputs, ratings, spans = demo_texts_and_sentences()
    u = ratings[ratings["dimension"].isin(["u_ref", "u_gen"])]
    merged = u.merge(outputs, on=["item_id", "model"])
    assert len(merged) == len(u) > 0
    checked = 0
    for row in merged.itertuples():
        text = row.reference if row.dimension == "u_ref" else row.generation
        assert len(disturbing_highlights(text, spans[text])) == row.value, (row.item_id, row.model, row.dimension)
        checked += 1
    assert checked == len(u)


def test_judged_highlights_mark_counted_sentences_only():
    from empathy.judges.run import SentenceCount
    from empathy.mechanisms import judged_highlights

    counts = [SentenceCount(0, 14, 2.0), SentenceCount(15, 30, 0.0), SentenceCount(31, 40, None)]
    assert judged_highlights(counts, "gpt<x>") == [
        {"start": 0, "end": 14, "label": "judged:gpt<x>", "rule": "2 disturbing element(s) counted in this sentence"}]
    text = "He was killed. It rained again. Then what"
    parser = _Marks()
    parser.feed(highlight_html(text, judged_highlights(counts, "gpt<x>")))
    assert parser.titles == [("egm-judged", "Judge gpt<x>: 2 disturbing element(s) counted in this sentence")]
    assert "egm-judged" in legend_html(disturbing=True, judged=True)
    assert "egm-judged" not in legend_html(disturbing=True)
