"""Sentence offsets kept in the distancing cache (issue 25, the worker's memory): a text the analyser parsed
has its sentences (the judges' Eq. 2 sentences, the app's marks) read back without loading spaCy.

The offsets stored by :func:`empathy.distancing.analyze` are the ones :func:`empathy.judges.segment.sentence_spans`
parses (same text preparation, same pieces of a long text, same rule), checked on every demo text and on random
texts; the design guard counts model loads rather than timing anything.
"""

from __future__ import annotations

import random

import pandas as pd
import pytest

pytest.importorskip("spacy")
import empathy.distancing as distancing  # noqa: E402
import empathy.distancing.model as model_module  # noqa: E402
from empathy.distancing import DistancingCache, analyze, sentence_offsets  # noqa: E402
from empathy.distancing.cache import text_key  # noqa: E402
from empathy.distancing.model import detector_key  # noqa: E402
from empathy.judges import segment  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402


@pytest.fixture(autouse=True)
def _no_memo():
    """Each test starts (and leaves) with no memoised boundaries: a memo of another test's parse would answer."""
    segment.clear_memo()
    yield
    segment.clear_memo()


def _demo_texts() -> list[str]:
    outputs = pd.read_csv(DEMO_DIR / "outputs.csv", dtype=str, keep_default_na=False)
    return list(dict.fromkeys([*outputs["reference"], *outputs["generation"]]))


def _random_texts(count: int, seed: int) -> list[str]:
    """Sentences with spaces, line breaks and blank lines in odd places (where trimming matters)."""
    rng = random.Random(seed)
    words = ["I", "was", "told", "the", "decision", "Honestly", "it's", "fine", "we", "were", "attacked", "by",
             "them", "she", "cried", "a", "lot", "no", "one", "knows"]
    gaps = [" ", "  ", "\n", "\n\n", " \n ", "\t"]
    texts = []
    for _ in range(count):
        parts = [rng.choice(["", " ", "\n", "  \n"])]
        for _sentence in range(rng.randint(0, 5)):
            parts.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 9))))
            parts.append(rng.choice([".", "!", "?", "...", ""]) + rng.choice(gaps))
        texts.append("".join(parts))
    return [*texts, "", "   ", "\n\n"]


def _old_rule(doc: object, offset: int) -> list[tuple[int, int]]:
    """The rule as segment wrote it before it moved to :func:`sentence_offsets` (every token of a sentence
    filtered): the reference the walk-in-from-each-end version is compared with."""
    spans = []
    for sent in doc.sents:  # type: ignore[attr-defined]
        words = [token for token in sent if not token.is_space]
        if words:
            spans.append((offset + words[0].idx, offset + words[-1].idx + len(words[-1].text)))
    return spans


def test_sentence_offsets_equal_the_filtered_token_rule():
    nlp = distancing.load_model()
    texts = [*_demo_texts(), *_random_texts(200, seed=7)]
    for text, doc in zip(texts, nlp.pipe(texts), strict=True):
        for offset in (0, 17):
            assert sentence_offsets(doc, offset) == _old_rule(doc, offset), repr(text)


@pytest.mark.usefixtures("_cache")
def test_analyze_stores_the_offsets_sentence_spans_would_parse(monkeypatch):
    # a small piece limit, so that texts parsed in pieces are among them (the same limit for both)
    monkeypatch.setattr(distancing, "MAX_PIECE_CHARS", 120)
    long_text = " ".join(["We were attacked by them.\n\nShe cried a lot, no one knows why."] * 6)
    texts = [*_demo_texts(), *_random_texts(60, seed=3), long_text]
    list(analyze(texts))
    model, version, _rules = detector_key()
    stored = DistancingCache().get_sentences(model, version, [text_key(t) for t in texts])
    assert len(stored) == len(set(texts))
    segment.clear_memo()
    parsed = segment.sentence_spans(texts, cache=False)  # spaCy's own parse, no cache
    for text, spans in zip(texts, parsed, strict=True):
        assert list(stored[text_key(text)]) == spans, repr(text[:80])


def _count_loads(monkeypatch) -> list[str]:
    loads: list[str] = []
    real = model_module._load

    def counted(name):
        loads.append(name)
        return real(name)

    monkeypatch.setattr(model_module, "_load", counted)
    return loads


@pytest.mark.usefixtures("_cache")
def test_sentences_of_analysed_texts_are_read_without_loading_the_model(monkeypatch):
    texts = _demo_texts()[:30]
    list(analyze(texts))
    expected = segment.sentence_spans(texts, cache=False)
    segment.clear_memo()
    loads = _count_loads(monkeypatch)
    assert segment.sentence_spans(texts) == expected
    assert loads == []
    # a text never analysed is parsed (the model loaded), and its offsets kept for the next process
    fresh = "A text nobody analysed. It has two sentences."
    segment.clear_memo()
    assert segment.sentence_spans([fresh]) == [[(0, 23), (24, 45)]]
    assert loads == [distancing.resolve_model_name()]
    segment.clear_memo()
    assert segment.sentence_spans([fresh]) == [[(0, 23), (24, 45)]]
    assert len(loads) == 1


@pytest.mark.usefixtures("_cache")
def test_a_damaged_offsets_row_is_parsed_again(monkeypatch):
    text = "One sentence here. Another one there."
    DistancingCache().put_sentences(*detector_key()[:2], [(text_key(text), [(0, 5)])])
    cache = DistancingCache()
    with cache._conn:
        cache._conn.execute("UPDATE sentences SET offsets = 'not json'")
    segment.clear_memo()
    assert segment.sentence_spans([text]) == [[(0, 18), (19, 37)]]


@pytest.mark.usefixtures("_store", "_cache")
def test_inspect_and_relabel_on_analysed_texts_do_not_load_spacy(monkeypatch):
    """Issue 25: the pages that draw the marks read the sentences from the cache; spaCy's model (~300 MiB of the
    worker at 200,000 outputs) is never loaded when every text was analysed."""
    pytest.importorskip("streamlit")
    from conftest import app_ok, open_page

    list(analyze(_demo_texts()))
    segment.clear_memo()
    loads = _count_loads(monkeypatch)
    at = open_page("app_pages/3_Inspect.py")
    assert any(m.value.startswith('<div class="ld-text"') for m in at.markdown)
    at.switch_page("app_pages/4_Relabel.py").run()
    app_ok(at)
    assert loads == []
