"""Judges that produce the ratings: LLM judges (paper Appendices B-D) and offline lexicon judges.

Entry point: :func:`run_judge` (``outputs`` table in, :class:`JudgeRun` with long-form ``ratings`` and
``stats`` out). Judges are configured in a TOML/JSON file (:mod:`empathy.judges.config`); the offline
judge ``lexicon`` is built in and is the default. See ``docs/judges.md``.
"""

from __future__ import annotations

from .cache import JudgeCache, default_cache_path
from .config import (
    LEXICON_JUDGE,
    SEGMENTATIONS,
    EmbeddingConfig,
    JudgeConfig,
    JudgeConfigError,
    JudgesFile,
    available_judges,
    load_config,
    parse_config,
    redact,
    resolve_embedding,
    resolve_judge,
)
from .llm import JudgeRunError, JudgeStats
from .prompts import AFFECT_ORDERS, CONFLICT_VARIANTS, PROTOCOL_DIMENSIONS, PROTOCOLS, Protocol, protocol_hashes
from .run import PAPER_TASK_PROTOCOLS, JudgeRun, arun_judge, run_judge
from .segment import spacy_sentences
from .sentences import split_sentences

__all__ = [
    "AFFECT_ORDERS", "CONFLICT_VARIANTS", "LEXICON_JUDGE", "PAPER_TASK_PROTOCOLS", "PROTOCOLS", "PROTOCOL_DIMENSIONS",
    "SEGMENTATIONS", "EmbeddingConfig", "JudgeCache",
    "JudgeConfig", "JudgeConfigError", "JudgeRun", "JudgeRunError", "JudgeStats", "JudgesFile", "Protocol",
    "arun_judge", "available_judges", "default_cache_path", "load_config", "parse_config", "protocol_hashes",
    "redact", "resolve_embedding", "resolve_judge", "run_judge", "spacy_sentences", "split_sentences",
]
