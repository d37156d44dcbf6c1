"""Standard metrics: against rouge-score, sacrebleu and scikit-learn, and hand-worked CIDEr-D values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from fake_openai_server import FakeOpenAIServer

from empathy.judges import EmbeddingConfig, JudgeRunError
from empathy.standard import (
    chrf,
    cider_d,
    cider_tokens,
    compute_standard,
    embedding_cosine,
    lcs_length,
    rouge_l,
    rouge_tokens,
    tfidf_cosine,
)

PAIRS = [
    ("the cat sat on the mat", "the cat on the mat"),
    ("Floodwater tore through the town, drowning two residents.", "Flooding affected the town; two people died."),
    ("He was killed in a brutal attack.", "A man died after an incident."),
    ("", "Something"),
]


def test_rouge_l_hand_worked_and_against_rouge_score():
    from rouge_score import rouge_scorer

    # LCS("the cat sat on the mat", "the cat on the mat") = 5: P = 5/5, R = 5/6, F = 10/11
    assert rouge_l(["the cat sat on the mat"], ["the cat on the mat"])[0] == pytest.approx(10 / 11)
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    expected = [scorer.score(r, g)["rougeL"].fmeasure for r, g in PAIRS]
    np.testing.assert_allclose(rouge_l(*zip(*PAIRS, strict=True)), expected)


def lcs_table(a: list[object], b: list[object]) -> int:
    """The textbook quadratic dynamic programme (the reference for the bit-parallel LCS)."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("", "", 0), ("abc", "", 0), ("", "abc", 0), ("abc", "abc", 3), ("abc", "cba", 1),
    ("ABCBDAB", "BDCABA", 4),  # Cormen et al.'s example
    ("the cat sat on the mat".split(), "the cat on the mat".split(), 5),
    ("aaaa", "aa", 2), ("xyz", "abc", 0), ("abcbdab" * 3, "bdcaba" * 2, 10),
])
def test_lcs_length_hand_cases(a, b, expected):
    assert lcs_table(list(a), list(b)) == expected
    for block in (1, 2, 3, 64, 1 << 14):  # one block and many blocks passing carries on
        assert lcs_length(list(a), list(b), block=block) == expected
        assert lcs_length(list(b), list(a), block=block) == expected


@pytest.mark.parametrize("seed", range(40))
def test_lcs_length_random_against_the_table(seed):
    rng = np.random.default_rng(seed)
    alphabet = int(rng.integers(1, 8))
    a = rng.integers(0, alphabet, size=int(rng.integers(0, 90))).tolist()
    b = rng.integers(0, alphabet, size=int(rng.integers(0, 90))).tolist()
    block = int(rng.choice([1, 5, 7, 32, 64, 1 << 14]))
    assert lcs_length(a, b, block=block) == lcs_table(a, b)


WORDS = ("the a was were of run running runs ran cat cats dog 42 feel feeling felt said says saying "
         "Hello, world! Don't can't it's café naïve 3.5 x-ray e-mail").split()


def random_text(rng: np.random.Generator, n: int) -> str:
    return " ".join(str(w) for w in rng.choice(WORDS, size=n))


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("use_stemmer", [True, False])
def test_rouge_l_equals_rouge_score_on_random_texts(seed, use_stemmer):
    from rouge_score import rouge_scorer

    rng = np.random.default_rng(seed)
    reference, generation = random_text(rng, int(rng.integers(0, 60))), random_text(rng, int(rng.integers(0, 60)))
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)
    expected = scorer.score(reference, generation)["rougeL"].fmeasure
    assert rouge_l([reference], [generation], use_stemmer=use_stemmer)[0] == expected  # bit-identical


@pytest.mark.parametrize(("reference", "generation"), [
    *PAIRS,
    ("The runners were running; the runner ran.", "A runner runs and ran"),  # stems: run, runner
    ("!!! ... ???", "words"),  # no token on one side: 0
    ("Ça va? Très bien.", "ca va tres bien"),  # non-ASCII letters dropped by rouge-score's tokenizer
    ("1,000 people; 2.5%", "1 000 people 2 5"),
    ("same same same", "same"),
])
def test_rouge_l_equals_rouge_score_on_hand_cases(reference, generation):
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    assert rouge_l([reference], [generation])[0] == scorer.score(reference, generation)["rougeL"].fmeasure
    assert rouge_tokens(reference) == scorer._tokenizer.tokenize(reference)


def test_rouge_l_of_a_long_pair_in_linear_memory():
    """rouge-score's table for this pair would hold 20,000 x 20,000 Python ints (gigabytes); here it is fast."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 50, size=20_000).tolist()
    b = rng.integers(0, 50, size=20_000).tolist()
    # a hand-checkable bound and exact structure: LCS of a sequence with itself, and with its reverse-free copy
    assert lcs_length(a, a) == 20_000
    assert lcs_length(a, a[:10_000] + [99] * 5 + a[10_000:]) == 20_000
    common = lcs_length(a, b)
    # one 20,000-bit block and 313 blocks of 64 bits passing carries on agree; random sequences over 50
    # symbols share about a quarter (Chvatal-Sankoff constant near 2 / sqrt(50))
    assert common == lcs_length(b, a) == lcs_length(a, b, block=64) and 4_000 < common < 6_000
    # equal to the table on a prefix that the table can still afford
    assert lcs_length(a[:600], b[:600], block=64) == lcs_table(a[:600], b[:600])

def test_chrf_against_sacrebleu():
    import sacrebleu

    # the paper's 0-1 scale: sacrebleu's 0-100 score divided by 100
    expected = [sacrebleu.corpus_chrf([g], [[r]]).score / 100 for r, g in PAIRS]
    np.testing.assert_allclose(chrf(*zip(*PAIRS, strict=True)), expected)
    assert chrf(["same text"], ["same text"])[0] == pytest.approx(1.0)
    assert 0.0 <= chrf(["abc def"], ["abd xyz"])[0] < 1.0


def test_cider_d_hand_worked():
    # N = 2 references, every n-gram has df <= 1, so every weight is log 2 (unseen n-grams too).
    # item 1 identical: cos = 1 for n = 1, 2; no 3-/4-grams -> (1 + 1 + 0 + 0) / 4 * 10 = 5
    # item 2 "c e" vs "c d": unigram cos = w^2 / (sqrt2 w * sqrt2 w) = 1/2; bigram 0 -> 0.5 / 4 * 10 = 1.25
    np.testing.assert_allclose(cider_d(["a b", "c d"], ["a b", "c e"]), [5.0, 1.25])


def test_cider_d_uses_corpus_document_frequencies():
    # "a" occurs in both references: df = N, weight log2 - log2 = 0, so "a d" vs "a c" shares nothing
    np.testing.assert_allclose(cider_d(["a b", "a c"], ["a b", "a d"]), [5.0, 0.0])
    # the same pair alone in its corpus scores differently: document frequencies come from the corpus
    alone = cider_d(["a c"], ["a d"], corpus_references=["a c", "x y"])
    assert alone[0] == pytest.approx(1.25)


def test_cider_d_length_penalty_and_clipping():
    # "a b c" vs "a b" (corpus also "x y"): unigram cos 2/sqrt6, bigram 1/sqrt2, penalty exp(-1/72)
    expected = (2 / math.sqrt(6) + 1 / math.sqrt(2)) / 4 * 10 * math.exp(-1 / 72)
    assert cider_d(["a b", "x y"], ["a b c", "x y"])[0] == pytest.approx(expected)
    # clipping: repeating a matching word does not raise the score above the non-repeated one
    repeated = cider_d(["a b", "x y"], ["a a a", "x y"])[0]
    assert repeated < cider_d(["a b", "x y"], ["a b", "x y"])[0]
    assert cider_tokens("Hello, World! 42") == ["hello", "world", "42"]


def test_tfidf_cosine_against_scikit_learn():
    sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")
    refs, gens = zip(*PAIRS, strict=True)
    corpus = list(dict.fromkeys(refs)) + list(gens)
    vectorizer = sklearn_text.TfidfVectorizer(token_pattern=r"(?u)\w+").fit(corpus)
    a, b = vectorizer.transform(refs), vectorizer.transform(gens)
    expected = np.asarray(a.multiply(b).sum(axis=1)).ravel()
    np.testing.assert_allclose(tfidf_cosine(refs, gens), expected, atol=1e-12)
    assert tfidf_cosine(["same words"], ["same words"])[0] == pytest.approx(1.0)


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer() as running:
        yield running


def letters(text: str) -> np.ndarray:
    return np.array([text.lower().count(c) for c in "abcdefghijklmnopqrstuvwxyz"], dtype=float)


def test_embedding_cosine_through_an_openai_compatible_endpoint(server):
    server.reset()
    config = EmbeddingConfig(name="fake-emb", base_url=server.base_url, model="emb", batch_size=2)
    refs, gens = ["abc", "hello there", "abc", ""], ["abd", "hello there", "xyz", "abc"]
    got = embedding_cosine(refs, gens, config)
    for index in range(3):
        a, b = letters(refs[index]), letters(gens[index])
        assert got[index] == pytest.approx(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    assert math.isnan(got[3])  # an empty text cannot be embedded
    # distinct non-empty texts: abc, hello there, abd, xyz -> 4 texts in batches of 2
    assert server.calls == 2


def test_embedding_errors_do_not_leak_the_key(server, monkeypatch):
    server.reset()
    server.api_key = "sk-right-key-000000"
    monkeypatch.setenv("EMPATHY_TEST_EMB_KEY", "sk-wrong-SECRET-111111")
    config = EmbeddingConfig(name="e", base_url=server.base_url, model="emb", api_key_env="EMPATHY_TEST_EMB_KEY",
                             max_retries=0)
    try:
        with pytest.raises(JudgeRunError) as error:
            embedding_cosine(["abc"], ["abd"], config)
    finally:
        server.api_key = None
    assert "SECRET" not in str(error.value) and "401" in str(error.value)


def outputs() -> pd.DataFrame:
    return pd.DataFrame({
        "item_id": ["1", "2", "1", "2", "3"],
        "model": ["m1", "m1", "m2", "m2", "m2"],
        "task": ["news", "news", "news", "news", "counseling"],
        "reference": ["a b", "c d", "a b", "c d", "I feel torn."],
        "generation": ["a b", "c e", "x", "c d", "You should talk."],
    })


def test_compute_standard_per_item_and_per_model():
    result = compute_standard(outputs())
    per_item = result.per_item
    assert list(per_item.columns) == ["item_id", "model", "task", "rouge_l", "chrf", "cider_d", "sem_sim",
                                      "sem_sim_method"]
    assert set(per_item.sem_sim_method) == {"tfidf-cosine"} and result.sem_sim_method == "tfidf-cosine"
    # CIDEr-D document frequencies come from the 3 distinct references (one per item)
    np.testing.assert_allclose(per_item.cider_d.iloc[:2], cider_d(["a b", "c d"], ["a b", "c e"],
                                                                  corpus_references=["a b", "c d",
                                                                                     "I feel torn."]))
    per_model = result.per_model.set_index(["task", "model"])
    assert per_model.loc[("news", "m1"), "n"] == 2 and per_model.loc[("counseling", "m2"), "n"] == 1
    assert per_model.loc[("news", "m1"), "rouge_l"] == pytest.approx(per_item.rouge_l.iloc[:2].mean())
    assert "cider_d=empathy-cider-d" in result.signature and "nrefs:1" in result.signature
    payload = result.to_json()
    assert payload["per_model"][0]["task"] == "counseling" and payload["sem_sim_method"] == "tfidf-cosine"


def test_compute_standard_subset_and_errors(tmp_path, server):
    only = compute_standard(outputs(), metrics="rouge_l,chrf")
    assert "cider_d" not in only.per_item.columns and "sem_sim" not in only.per_model.columns
    with pytest.raises(ValueError, match="unknown metric"):
        compute_standard(outputs(), metrics=["bleu"])
    config = tmp_path / "judges.toml"
    config.write_text(f'[embeddings.fake]\nbase_url = "{server.base_url}"\nmodel = "emb"\n')
    result = compute_standard(outputs(), metrics="sem_sim", embedding="fake", config=config)
    assert result.sem_sim_method.startswith("embedding:emb@http://127.0.0.1")
    assert result.per_item.sem_sim.iloc[0] == pytest.approx(1.0)
