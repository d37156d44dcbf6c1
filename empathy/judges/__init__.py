"""Judges that produce the ratings: LLM judges (paper Appendices B-D) and offline lexicon judges.

Entry point: :func:`run_judge` (``outputs`` table in, :class:`JudgeRun` with long-form ``ratings`` and
``stats`` out). Judges are configured in a TOML/JSON file (:mod:`empathy.judges.config`); the offline
judge ``lexicon`` is built in and is the default. See ``docs/judges.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

#: Public name -> the submodule that defines it. Read on first use (PEP 562), so that importing one light
#: submodule (``empathy.judges.segment`` for the app's sentence counts) does not import the LLM client
#: (``openai``, about 1.5 s at start-up) that only a judge run needs.
_HOMES: dict[str, str] = {
    **dict.fromkeys(("JudgeCache", "default_cache_path"), "cache"),
    **dict.fromkeys(("LEXICON_JUDGE", "SEGMENTATIONS", "EmbeddingConfig", "JudgeConfig", "JudgeConfigError",
                     "JudgesFile", "available_judges", "load_config", "parse_config", "redact", "resolve_embedding",
                     "resolve_judge"), "config"),
    **dict.fromkeys(("JudgeRunError", "JudgeStats"), "llm"),
    **dict.fromkeys(("AFFECT_ORDERS", "CONFLICT_VARIANTS", "PROTOCOL_DIMENSIONS", "PROTOCOLS", "Protocol",
                     "protocol_hashes"), "prompts"),
    **dict.fromkeys(("PAPER_TASK_PROTOCOLS", "JudgeRun", "arun_judge", "run_judge"), "run"),
    "spacy_sentences": "segment",
    "split_sentences": "sentences",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


__all__ = [
    "AFFECT_ORDERS", "CONFLICT_VARIANTS", "LEXICON_JUDGE", "PAPER_TASK_PROTOCOLS", "PROTOCOLS", "PROTOCOL_DIMENSIONS",
    "SEGMENTATIONS", "EmbeddingConfig", "JudgeCache",
    "JudgeConfig", "JudgeConfigError", "JudgeRun", "JudgeRunError", "JudgeStats", "JudgesFile", "Protocol",
    "arun_judge", "available_judges", "default_cache_path", "load_config", "parse_config", "protocol_hashes",
    "redact", "resolve_embedding", "resolve_judge", "run_judge", "spacy_sentences", "split_sentences",
]
