"""Standard quality metrics the paper sets against the empathy metrics: ROUGE-L, chrF, CIDEr-D, Sem-Sim.

Per (item, model) and aggregated per (task, model) by :func:`compute_standard`.

``rouge_l``
    ROUGE-L F-measure from Google's ``rouge-score`` (``rougeL``, Porter stemming on), in [0, 1].
``chrf``
    chrF from ``sacrebleu`` (character 6-grams, beta 2), sentence-level on each text, reported on the paper's
    scale [0, 1] (sacrebleu's score divided by 100; the paper's tables use 0-1).
``cider_d``
    CIDEr-D (Vedantam et al., 2015), implemented here: n = 1..4 TF-IDF vectors whose document frequencies
    come from the references of the whole table (one per item), clipped numerator ``min(g, r) * r``, cosine
    per n, Gaussian length penalty ``exp(-(l_g - l_r)**2 / (2 * 6**2))``, mean over n, times 10. One
    reference per item. Tokens: lower-cased words and numbers (punctuation dropped). For document-length
    texts the length penalty dominates (it is designed for captions); that is a property of the metric.
``sem_sim``
    Cosine similarity of reference and generation embeddings from an OpenAI-compatible embeddings endpoint
    (the paper: Qwen3-4B-Embedding) when one is configured; otherwise the offline fallback
    ``tfidf-cosine``: cosine of TF-IDF vectors (raw counts, smoothed idf ``ln((1+N)/(1+df)) + 1``, as
    scikit-learn's default) fitted on the distinct references and all generations of the table. The column
    ``sem_sim_method`` names which one was used; the two are not comparable.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

STANDARD_METRICS: tuple[str, ...] = ("rouge_l", "chrf", "cider_d", "sem_sim")
TFIDF_METHOD = "tfidf-cosine"
_WORD = re.compile(r"\w+", re.UNICODE)


def _texts(values: Iterable[object], name: str) -> list[str]:
    out = []
    for index, value in enumerate(values):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            out.append("")
        elif isinstance(value, str):
            out.append(value)
        else:
            raise TypeError(f"{name}[{index}] must be text, got {type(value).__name__}")
    return out


def _pair(references: Sequence[str], generations: Sequence[str]) -> tuple[list[str], list[str]]:
    refs, gens = _texts(references, "references"), _texts(generations, "generations")
    if len(refs) != len(gens):
        raise ValueError(f"references and generations differ in length ({len(refs)} vs {len(gens)})")
    return refs, gens


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


# ---------------------------------------------------------------------------------------------- ROUGE-L
#: Bits per block of the bit-parallel LCS: bounds the match masks to ~2**14 * 2**14 / 16 bytes (16 MB) in the
#: worst case (every token distinct) whatever the text lengths; larger blocks are faster but use more memory.
_LCS_BLOCK = 1 << 14


class _MemoStemmer:
    """rouge-score's Porter stemmer with a bounded memo: same stems, stemming cost per distinct word."""

    def __init__(self) -> None:
        from nltk.stem import porter

        self.stem = functools.lru_cache(maxsize=1 << 16)(porter.PorterStemmer().stem)


@functools.lru_cache(maxsize=1)
def _stemmer() -> _MemoStemmer:
    return _MemoStemmer()


def rouge_tokens(text: str, *, use_stemmer: bool = True) -> list[str]:
    """rouge-score's tokens (``rouge_score.tokenize.tokenize``: lower-case, ``[a-z0-9]+``, Porter stems)."""
    from rouge_score import tokenize

    return list(tokenize.tokenize(text, _stemmer() if use_stemmer else None))


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable], *, block: int = _LCS_BLOCK) -> int:
    """Length of the longest common subsequence of two token sequences, in linear memory.

    Bit-parallel (Allison & Dix 1986; Hyyro 2004): the shorter sequence is a bit vector ``V``; for each token
    of the longer one, ``U = V & match[token]`` and ``V = (V + U) | (V - U)``; the LCS length is the number of
    zero bits left. The shorter sequence is processed in blocks of ``block`` bits whose additions pass their
    carries on (one byte per token of the longer sequence), so memory is
    O(len(a) + len(b) + block**2 / 16) bytes instead of the O(len(a) * len(b)) table of the textbook dynamic
    programme, and time O(len(a) * len(b) / 64) machine-word operations (done inside Python's big integers).
    """
    if block < 1:
        raise ValueError(f"block must be positive, got {block}")
    if len(a) > len(b):
        a, b = b, a
    total = 0
    carries: bytearray | None = None
    for start in range(0, len(a), block):
        part = a[start:start + block]
        width = len(part)
        masks: dict[Hashable, int] = {}
        for index, token in enumerate(part):
            masks[token] = masks.get(token, 0) | (1 << index)
        full = (1 << width) - 1
        vector = full
        match = masks.get
        if width == len(a):
            # One block: no carry leaves it, so the sum is simply truncated to the block.
            for token in b:
                hit = vector & match(token, 0)
                if hit:
                    vector = ((vector + hit) | (vector ^ hit)) & full
        else:
            if carries is None:
                carries = bytearray(len(b))
            for j, token in enumerate(b):
                hit = vector & match(token, 0)
                carry = carries[j]
                if hit or carry:
                    # V - U is V ^ U (U is a subset of V, so no borrow): only the addition crosses blocks.
                    added = vector + hit + carry
                    carries[j] = added >> width
                    vector = (added & full) | (vector ^ hit)
        total += width - vector.bit_count()
    return total


def rouge_l(references: Sequence[str], generations: Sequence[str], *, use_stemmer: bool = True
            ) -> np.ndarray:
    """ROUGE-L F-measure per pair, equal to ``rouge-score``'s ``rougeL`` (its tokens, its F-measure).

    rouge-score builds the full tokens(reference) x tokens(generation) table (a 50,000-word pair reached
    12.7 GB); here the LCS is computed by :func:`lcs_length` in linear memory, so any text length fits.
    Time is O(n * m / 64) word operations for token counts n and m: linear when one side is of ordinary
    length, and measured in ``bench/bench_long_text.py`` when both are long. An empty side scores 0.
    """
    refs, gens = _pair(references, generations)
    scores = np.empty(len(refs))
    for index, (reference, generation) in enumerate(zip(refs, gens, strict=True)):
        target = rouge_tokens(reference, use_stemmer=use_stemmer)
        prediction = rouge_tokens(generation, use_stemmer=use_stemmer)
        if not target or not prediction:
            scores[index] = 0.0
            continue
        common = lcs_length(target, prediction)
        precision, recall = common / len(prediction), common / len(target)
        # rouge_score.scoring.fmeasure, operation for operation (so values are bit-identical)
        scores[index] = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return scores


# ------------------------------------------------------------------------------------------------- chrF
def chrf(references: Sequence[str], generations: Sequence[str]) -> np.ndarray:
    """sacrebleu chrF per pair, each text scored as one segment, on the paper's 0-1 scale (score / 100)."""
    from sacrebleu.metrics import CHRF

    refs, gens = _pair(references, generations)
    metric = CHRF()
    return np.array([metric.sentence_score(g, [r]).score / 100.0 for r, g in zip(refs, gens, strict=True)],
                    dtype=float)


def chrf_signature() -> str:
    """sacrebleu's own signature for the chrF settings used."""
    from sacrebleu.metrics import CHRF

    metric = CHRF()
    metric.corpus_score(["a"], [["a"]])  # sacrebleu knows the reference count only after scoring
    return str(metric.get_signature())


# ---------------------------------------------------------------------------------------------- CIDEr-D
def cider_tokens(text: str) -> list[str]:
    """CIDEr tokens: lower-cased words and numbers, punctuation dropped."""
    return _WORD.findall(text.lower())


def _ngrams(tokens: list[str], n_max: int) -> Counter[tuple[str, ...]]:
    counts: Counter[tuple[str, ...]] = Counter()
    for n in range(1, n_max + 1):
        for i in range(len(tokens) - n + 1):
            counts[tuple(tokens[i:i + n])] += 1
    return counts


def cider_d(references: Sequence[str], generations: Sequence[str], *,
            corpus_references: Sequence[str] | None = None, n: int = 4, sigma: float = 6.0) -> np.ndarray:
    """CIDEr-D per pair (see the module docstring), with one reference per pair.

    ``corpus_references`` are the references whose document frequencies weight the n-grams (one entry per
    item); by default the distinct ``references`` given.
    """
    refs, gens = _pair(references, generations)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if sigma <= 0:
        raise ValueError(f"sigma must be positive, got {sigma}")
    corpus = list(dict.fromkeys(refs)) if corpus_references is None else _texts(corpus_references, "corpus")
    if not corpus:
        return np.zeros(0)
    document_frequency: Counter[tuple[str, ...]] = Counter()
    for reference in corpus:
        document_frequency.update(set(_ngrams(cider_tokens(reference), n)))
    log_corpus = math.log(float(len(corpus)))

    def vectorise(counts: Counter[tuple[str, ...]]) -> tuple[list[dict[tuple[str, ...], float]], list[float]]:
        vectors: list[dict[tuple[str, ...], float]] = [{} for _ in range(n)]
        norms = [0.0] * n
        for gram, frequency in counts.items():
            weight = frequency * (log_corpus - math.log(max(1.0, document_frequency[gram])))
            vectors[len(gram) - 1][gram] = weight
            norms[len(gram) - 1] += weight * weight
        return vectors, [math.sqrt(v) for v in norms]

    scores = np.empty(len(refs))
    for index, (reference, generation) in enumerate(zip(refs, gens, strict=True)):
        ref_tokens, gen_tokens = cider_tokens(reference), cider_tokens(generation)
        ref_vec, ref_norm = vectorise(_ngrams(ref_tokens, n))
        gen_vec, gen_norm = vectorise(_ngrams(gen_tokens, n))
        penalty = math.exp(-((len(gen_tokens) - len(ref_tokens)) ** 2) / (2 * sigma * sigma))
        total = 0.0
        for k in range(n):
            if gen_norm[k] == 0 or ref_norm[k] == 0:
                continue
            clipped = sum(min(weight, ref_vec[k].get(gram, 0.0)) * ref_vec[k].get(gram, 0.0)
                          for gram, weight in gen_vec[k].items())
            total += clipped / (gen_norm[k] * ref_norm[k]) * penalty
        scores[index] = total / n * 10.0
    return scores


# ----------------------------------------------------------------------------------- semantic similarity
def tfidf_cosine(references: Sequence[str], generations: Sequence[str], *,
                 corpus: Sequence[str] | None = None) -> np.ndarray:
    """The offline Sem-Sim fallback ``tfidf-cosine`` per pair (see the module docstring).

    ``corpus`` is the set of texts the idf is fitted on; by default the distinct references plus all
    generations given. A pair where either text has no known word scores 0.
    """
    refs, gens = _pair(references, generations)
    documents = _texts(corpus, "corpus") if corpus is not None else list(dict.fromkeys(refs)) + gens
    tokenised = [_WORD.findall(d.lower()) for d in documents]
    df: Counter[str] = Counter()
    for tokens in tokenised:
        df.update(set(tokens))
    n_docs = len(documents)
    idf = {term: math.log((1 + n_docs) / (1 + count)) + 1.0 for term, count in df.items()}

    def vector(text: str) -> dict[str, float]:
        counts = Counter(t for t in _WORD.findall(text.lower()) if t in idf)
        weights = {t: c * idf[t] for t, c in counts.items()}
        norm = math.sqrt(sum(w * w for w in weights.values()))
        return {t: w / norm for t, w in weights.items()} if norm else {}

    out = np.empty(len(refs))
    for index, (reference, generation) in enumerate(zip(refs, gens, strict=True)):
        a, b = vector(reference), vector(generation)
        out[index] = sum(w * b.get(t, 0.0) for t, w in a.items())
    return out


def embedding_cosine(references: Sequence[str], generations: Sequence[str], embedding: Any, *,
                     secrets: Mapping[str, Any] | None = None) -> np.ndarray:
    """Cosine similarity of embeddings from an OpenAI-compatible endpoint (an ``EmbeddingConfig``).

    Distinct texts are embedded once, in batches of ``embedding.batch_size``. An empty text scores NaN
    (endpoints reject empty input). Errors are raised with the key redacted.
    """
    import openai

    from empathy.judges.config import api_key, redact
    from empathy.judges.llm import JudgeRunError

    refs, gens = _pair(references, generations)
    key = api_key(embedding, secrets)
    texts = [t for t in dict.fromkeys(refs + gens) if t.strip()]
    vectors: dict[str, np.ndarray] = {}
    client = openai.OpenAI(api_key=key or "no-key", base_url=embedding.base_url, timeout=embedding.timeout,
                           max_retries=embedding.max_retries)
    try:
        for start in range(0, len(texts), embedding.batch_size):
            batch = texts[start:start + embedding.batch_size]
            response = client.embeddings.create(model=embedding.model, input=batch)
            for item in sorted(response.data, key=lambda d: d.index):
                vectors[batch[item.index]] = np.asarray(item.embedding, dtype=float)
    except openai.OpenAIError as exc:
        raise JudgeRunError(f"embedding {embedding.name!r} at {embedding.endpoint}: "
                                f"{redact(exc, (key,) if key else ())}") from None
    finally:
        client.close()
    out = np.full(len(refs), np.nan)
    for index, (reference, generation) in enumerate(zip(refs, gens, strict=True)):
        if reference in vectors and generation in vectors:
            a, b = vectors[reference], vectors[generation]
            denominator = float(np.linalg.norm(a) * np.linalg.norm(b))
            out[index] = float(a @ b) / denominator if denominator else np.nan
    return out


# -------------------------------------------------------------------------------------------- the table
@dataclass
class StandardResult:
    """Standard metrics per (item, model) and their means per (task, model), with a signature."""

    per_item: pd.DataFrame
    per_model: pd.DataFrame
    signature: str
    sem_sim_method: str

    def to_json(self) -> dict[str, Any]:
        """``{"per_model": [...], "signature": ..., "sem_sim_method": ...}`` with NaN as null."""
        from empathy.io import json_records  # the one JSON cleaner (NaN -> null, numpy -> Python)

        return {"per_model": json_records(self.per_model), "signature": self.signature,
                "sem_sim_method": self.sem_sim_method}


def compute_standard(outputs: pd.DataFrame, *, metrics: Iterable[str] | str | None = None,
                     embedding: Any | str | None = None, config: str | Path | None = None,
                     secrets: Mapping[str, Any] | None = None) -> StandardResult:
    """ROUGE-L, chrF, CIDEr-D and Sem-Sim per (item, model), aggregated per (task, model).

    Parameters
    ----------
    outputs
        Validated outputs (:func:`empathy.io.load_outputs`).
    metrics
        Subset of :data:`STANDARD_METRICS` (list or comma-separated); all by default.
    embedding
        An ``EmbeddingConfig`` or the name of one in ``config`` for Sem-Sim; ``None`` uses ``tfidf-cosine``.
    """
    if not isinstance(outputs, pd.DataFrame):
        raise TypeError(f"outputs must be a pandas DataFrame, got {type(outputs).__name__}")
    for column in ("item_id", "model", "reference", "generation"):
        if column not in outputs.columns:
            raise ValueError(f"outputs lacks column {column!r}")
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    chosen = tuple(STANDARD_METRICS if metrics is None else metrics)
    unknown = [m for m in chosen if m not in STANDARD_METRICS]
    if unknown or not chosen:
        raise ValueError(f"unknown metric(s) {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(STANDARD_METRICS)}")
    frame = outputs.reset_index(drop=True)
    refs = _texts(frame["reference"], "reference")
    gens = _texts(frame["generation"], "generation")
    task = frame["task"].fillna("").astype(str) if "task" in frame.columns else pd.Series([""] * len(frame))
    per_item = pd.DataFrame({"item_id": frame["item_id"].astype(str), "model": frame["model"].astype(str),
                             "task": task.to_numpy()})
    signature = {}
    sem_method = ""
    if "rouge_l" in chosen:
        per_item["rouge_l"] = rouge_l(refs, gens)
        signature["rouge_l"] = f"rouge-score-{_version('rouge-score')}/rougeL/stem"
    if "chrf" in chosen:
        per_item["chrf"] = chrf(refs, gens)
        signature["chrf"] = chrf_signature().replace("|", "/") + "/scale:0-1"
    if "cider_d" in chosen:
        corpus = list(pd.Series(refs).groupby(per_item["item_id"].to_numpy()).first())
        per_item["cider_d"] = cider_d(refs, gens, corpus_references=corpus)
        signature["cider_d"] = f"empathy-cider-d/n4/sigma6/df=refs({len(corpus)})"
    if "sem_sim" in chosen:
        if embedding is None:
            per_item["sem_sim"] = tfidf_cosine(refs, gens)
            sem_method = TFIDF_METHOD
        else:
            if isinstance(embedding, str):
                from empathy.judges.config import resolve_embedding

                embedding = resolve_embedding(embedding, config)
            per_item["sem_sim"] = embedding_cosine(refs, gens, embedding, secrets=secrets)
            sem_method = f"embedding:{embedding.model}@{embedding.endpoint}"
        per_item["sem_sim_method"] = sem_method
        signature["sem_sim"] = sem_method
    columns = [m for m in STANDARD_METRICS if m in chosen]
    grouped = per_item.groupby(["task", "model"], sort=True)
    per_model = grouped[columns].mean().reset_index()
    per_model.insert(2, "n", grouped.size().to_numpy())
    text = ";".join(f"{k}={v}" for k, v in signature.items())
    return StandardResult(per_item=per_item, per_model=per_model, signature=text, sem_sim_method=sem_method)
