"""Judge configuration: which endpoints rate, and how; where the API key comes from.

A config file (TOML read with :mod:`tomllib`, or JSON with the same structure) lists several judges and,
optionally, embedding endpoints for semantic similarity::

    [judges.gpt-5-2]
    base_url = "https://api.openai.com/v1"
    model = "gpt-5.2"
    api_key_env = "OPENAI_API_KEY"     # the NAME of the variable, never the key itself
    concurrency = 16

    [judges.local-qwen]
    base_url = "http://127.0.0.1:8000/v1"   # vLLM, Ollama, llama.cpp server, a router ...
    model = "Qwen/Qwen3-8B"
    structured_output = "json_object"       # auto | json_schema | json_object | none

    [embeddings.qwen3-embedding]
    base_url = "http://127.0.0.1:8001/v1"
    model = "Qwen/Qwen3-Embedding-4B"

The built-in judge ``lexicon`` (offline, see :mod:`empathy.judges.lexicon`) is always available and is
the default when no endpoint is configured.

The key is read from the environment variable named by ``api_key_env`` or, for the app, from a mapping of
secrets passed in (Streamlit secrets); it is never stored on a config object, written to disk or put into a
message: :func:`redact` scrubs it from any text that leaves the judges.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from empathy.files import DuplicateKeyError, unique_keys
from empathy.identifiers import identifier_problem

from .prompts import AFFECT_ORDERS, CONFLICT_VARIANTS

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10 has no tomllib; JSON configs still work there.
    tomllib = None  # type: ignore[assignment]

STRUCTURED_MODES: tuple[str, ...] = ("auto", "json_schema", "json_object", "none")
#: Environment variable naming a default config file.
CONFIG_ENV = "EMPATHY_JUDGES_CONFIG"
DEFAULT_CONFIG_NAMES: tuple[str, ...] = ("judges.toml", "empathy-judges.toml")
LEXICON_NAME = "lexicon"
#: Sentence segmentations for the per-sentence protocols (see :class:`JudgeConfig`).
SEGMENTATIONS: tuple[str, ...] = ("spacy", "regex")


class JudgeConfigError(ValueError):
    """A judge or embedding configuration problem (unknown name, bad field, key variable unset ...)."""


def _check_types(owner: str, config: object, types: Mapping[str, tuple[type, ...]]) -> None:
    """Raise JudgeConfigError naming the setting whose value has the wrong type (bool is not a number)."""
    for name, allowed in types.items():
        value = getattr(config, name)
        if isinstance(value, bool) and bool not in allowed:
            ok = False
        else:
            ok = isinstance(value, allowed)
        if not ok:
            wanted = " or ".join("none" if t is type(None) else t.__name__ for t in allowed)
            raise JudgeConfigError(f"{owner}: {name} must be {wanted}, got {type(value).__name__} "
                                   f"{str(value)[:40]!r}")


_STR = (str,)
_NUMBER = (int, float)
_JUDGE_TYPES: dict[str, tuple[type, ...]] = {
    "base_url": _STR, "model": _STR, "api_key_env": (str, type(None)), "temperature": _NUMBER,
    "concurrency": (int,), "max_retries": (int,), "timeout": _NUMBER, "backoff": _NUMBER, "backoff_max": _NUMBER,
    "structured_output": _STR, "max_tokens": (int, type(None)), "max_tokens_field": _STR,
    "send_temperature": (bool,), "kind": _STR, "conflict_protocol": _STR, "affect_order": _STR,
    "affect_order_seed": (int,), "segmentation": _STR, "conflict_evidence": (bool,),
}
_EMBEDDING_TYPES: dict[str, tuple[type, ...]] = {
    "name": _STR, "base_url": _STR, "model": _STR, "api_key_env": (str, type(None)), "timeout": _NUMBER,
    "batch_size": (int,), "max_retries": (int,),
}

#: The closed range of every numeric setting. A value outside is a typo or an attack on the run, never a
#: choice: ``temperature = nan`` would be sent to the endpoint, ``timeout = inf`` waits forever on a dead
#: server, ``concurrency = 1e17`` opens connections until the machine runs out. Temperature: the OpenAI API's
#: range (0-2); timeouts: one hour per request at most (reasoning models answer in minutes); concurrency 1024
#: and 100 retries are beyond what any endpoint's rate limit lets through.
NUMBER_LIMITS: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0), "timeout": (0.001, 3600.0), "backoff": (0.0, 600.0), "backoff_max": (0.0, 3600.0),
    "concurrency": (1, 1024), "max_retries": (0, 100), "max_tokens": (1, 1_000_000), "batch_size": (1, 10_000),
    "affect_order_seed": (0, 2**63 - 1),
}


def _check_limits(owner: str, config: object, names: tuple[str, ...]) -> None:
    """Raise JudgeConfigError naming the first setting of ``names`` that is not finite or outside its limits.

    Run after :func:`_check_types`, so every value is an int or float (or ``None`` where that is allowed).
    """
    for name in names:
        value = getattr(config, name)
        if value is None:
            continue
        low, high = NUMBER_LIMITS[name]
        if not math.isfinite(value) or not low <= value <= high:
            raise JudgeConfigError(f"{owner}: {name} must be a finite number from {_bound(low)} to "
                                   f"{_bound(high)}, got {value!r}")


def _bound(limit: float) -> str:
    return f"{limit:,}" if isinstance(limit, int) else f"{limit:g}"


@dataclass(frozen=True)
class JudgeConfig:
    """One judge: an OpenAI-compatible chat endpoint and model, or the offline lexicon judge.

    Parameters
    ----------
    name
        The rater name written into the ratings.
    base_url, model
        Endpoint (``.../v1``) and model id; unused for ``kind="lexicon"``.
    api_key_env
        Name of the environment variable (or secrets entry) holding the key; ``None`` for keyless local
        servers.
    temperature
        Sampling temperature (default 0.01). The paper gives no temperature for its judges (Appendix A.1's
        T = 0.01 is the decoding of the models it evaluates); we use near-greedy decoding so that a judge's
        answers are (nearly) repeatable and the answer cache means something, 0.01 rather than 0 because some
        OpenAI-compatible servers refuse a temperature of 0.
    concurrency
        Maximum requests in flight.
    max_retries
        Retries after the first attempt for 429 / 5xx / timeouts / invalid answers.
    timeout
        Seconds per request.
    backoff, backoff_max
        Exponential backoff base and cap in seconds (full jitter; ``Retry-After`` honoured up to the cap).
    structured_output
        ``auto`` (JSON schema, falling back to plain text if the endpoint rejects it), ``json_schema``,
        ``json_object`` or ``none``.
    max_tokens
        Completion-token cap per call (``None``: endpoint default).
    max_tokens_field
        The request field for that cap: ``max_tokens`` or ``max_completion_tokens`` (OpenAI's reasoning
        models accept only the latter, and count their reasoning in it: raise ``max_tokens`` for them).
    send_temperature
        ``False`` leaves ``temperature`` out of the request, for models that accept only their default
        (the signature then says ``T=default``).
    kind
        ``llm`` or ``lexicon``.
    conflict_protocol
        The conflict-avoidance text: ``paper`` (default; the criteria of the paper's Appendix D,
        ``conflict-avoidance@2``) or ``engagement-v1`` (the first text, ``conflict-avoidance@1``); see
        :data:`empathy.judges.prompts.CONFLICT_VARIANTS`. Ignored by the lexicon judge.
    affect_order
        Which text the affect protocol shows as Text A: ``random`` (default: a coin per item from
        ``affect_order_seed``, the same for every model's output of the item), ``both`` (each order once and
        the two answers averaged, twice the affect requests), ``reference-first`` or ``generation-first``.
        Named in the signature (with the seed for ``random``). The lexicon judge scores each text on its own,
        so order cannot matter there.
    affect_order_seed
        Seed of the ``random`` order (a non-negative integer).
    segmentation
        Sentences for the per-sentence protocols: ``spacy`` (default; the sentences of the spaCy parse whose
        count is ``d`` and ``q`` of Eq. 2, :mod:`empathy.judges.segment`) or ``regex`` (the dependency-free
        splitter of :mod:`empathy.judges.sentences`, which can disagree with ``d`` and ``q``).
    conflict_evidence
        ``True`` asks the conflict-avoidance text also for a verbatim quote of the response as evidence of its
        label (:func:`empathy.judges.prompts.with_evidence`; off by default: a departure from Appendix D, named
        in the signature). The quote is kept only where it occurs in the response (``JudgeRun.evidence``).
    """

    name: str
    base_url: str = ""
    model: str = ""
    api_key_env: str | None = None
    temperature: float = 0.01
    concurrency: int = 8
    max_retries: int = 4
    timeout: float = 60.0
    backoff: float = 0.5
    backoff_max: float = 30.0
    structured_output: str = "auto"
    max_tokens: int | None = 256
    max_tokens_field: str = "max_tokens"
    send_temperature: bool = True
    kind: str = "llm"
    extra_body: dict[str, Any] = field(default_factory=dict, hash=False)
    conflict_protocol: str = "paper"
    affect_order: str = "random"
    affect_order_seed: int = 0
    segmentation: str = "spacy"
    conflict_evidence: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise JudgeConfigError("judge name must be a non-empty string")
        problem = identifier_problem(self.name.strip())
        if problem:  # the name becomes the rater of every rating it writes: the ratings' identifier rule
            raise JudgeConfigError(f"judge {self.name!r}: {problem}")
        _check_types(f"judge {self.name!r}", self, _JUDGE_TYPES)
        if self.kind not in ("llm", "lexicon"):
            raise JudgeConfigError(f"judge {self.name!r}: kind must be 'llm' or 'lexicon', got {self.kind!r}")
        if self.kind == "llm":
            if not _http_url(self.base_url):
                raise JudgeConfigError(f"judge {self.name!r}: base_url must be an http(s) URL (http:// or "
                                       "https:// with a host)")
            if not self.model:
                raise JudgeConfigError(f"judge {self.name!r}: model is required")
        self._check_choices()
        self._check_numbers()
        if self.api_key_env is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", self.api_key_env):
            # Catches the commonest mistake: pasting the key itself where its variable name belongs.
            raise JudgeConfigError(f"judge {self.name!r}: api_key_env must be the NAME of an environment "
                                   "variable, not a key")

    def _check_choices(self) -> None:
        """The options that take one of a few names."""
        if self.structured_output not in STRUCTURED_MODES:
            raise JudgeConfigError(f"judge {self.name!r}: structured_output must be one of "
                                   f"{', '.join(STRUCTURED_MODES)}, got {self.structured_output!r}")
        if self.max_tokens_field not in ("max_tokens", "max_completion_tokens"):
            raise JudgeConfigError(f"judge {self.name!r}: max_tokens_field must be max_tokens or "
                                   "max_completion_tokens")
        if self.conflict_protocol not in CONFLICT_VARIANTS:
            raise JudgeConfigError(f"judge {self.name!r}: conflict_protocol must be one of "
                                   f"{', '.join(CONFLICT_VARIANTS)}, got {self.conflict_protocol!r}")
        if self.affect_order not in AFFECT_ORDERS:
            raise JudgeConfigError(f"judge {self.name!r}: affect_order must be one of {', '.join(AFFECT_ORDERS)}, "
                                   f"got {self.affect_order!r}")
        if self.segmentation not in SEGMENTATIONS:
            raise JudgeConfigError(f"judge {self.name!r}: segmentation must be one of {', '.join(SEGMENTATIONS)}, "
                                   f"got {self.segmentation!r}")

    def _check_numbers(self) -> None:
        """The numeric options (finite, within :data:`NUMBER_LIMITS`) and ``extra_body``."""
        if not isinstance(self.extra_body, Mapping):
            raise JudgeConfigError(f"judge {self.name!r}: extra_body must be a table of request fields")
        _check_limits(f"judge {self.name!r}", self, ("temperature", "concurrency", "max_retries", "timeout", "backoff",
                                                     "backoff_max", "max_tokens", "affect_order_seed"))

    @property
    def endpoint(self) -> str:
        """The base URL without user info, query or trailing slash (used in signatures and cache keys)."""
        return public_url(self.base_url)

    @property
    def description(self) -> str:
        """One line for judge pickers and ``judge --list``: what the judge is (and, for ``lexicon``, its limit)."""
        if self.kind == "lexicon":
            from .lexicon import DESCRIPTION

            return DESCRIPTION
        evidence = " with evidence quote" if self.conflict_evidence else ""
        return (f"LLM judge {self.model} @ {self.endpoint}; conflict protocol {self.conflict_protocol}{evidence}, "
                f"affect order {self.affect_order}")

    def replace(self, **changes: Any) -> JudgeConfig:
        """A copy with some fields changed (e.g. ``concurrency``)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return JudgeConfig(**values)

    def as_dict(self) -> dict[str, Any]:
        """The configuration as plain data (contains no key: only the variable's name)."""
        return asdict(self)


@dataclass(frozen=True)
class EmbeddingConfig:
    """An OpenAI-compatible embeddings endpoint used for semantic similarity."""

    name: str
    base_url: str
    model: str
    api_key_env: str | None = None
    timeout: float = 60.0
    batch_size: int = 64
    max_retries: int = 4

    def __post_init__(self) -> None:
        _check_types(f"embedding {self.name!r}", self, _EMBEDDING_TYPES)
        if not _http_url(self.base_url):
            raise JudgeConfigError(f"embedding {self.name!r}: base_url must be an http(s) URL (http:// or "
                                   "https:// with a host)")
        if not self.model:
            raise JudgeConfigError(f"embedding {self.name!r}: model is required")
        _check_limits(f"embedding {self.name!r}", self, ("timeout", "batch_size", "max_retries"))

    @property
    def endpoint(self) -> str:
        """The base URL without user info, query or trailing slash."""
        return public_url(self.base_url)


LEXICON_JUDGE = JudgeConfig(name=LEXICON_NAME, kind="lexicon")


@dataclass
class JudgesFile:
    """The parsed config file: judges and embedding endpoints by name."""

    judges: dict[str, JudgeConfig]
    embeddings: dict[str, EmbeddingConfig]
    source: str = ""


def _http_url(url: str) -> bool:
    """Whether ``url`` is ``http://`` or ``https://`` with a host (``httpx://`` or ``http:/x`` is not)."""
    try:
        parts = urlsplit(url or "")
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def public_url(url: str) -> str:
    """``url`` without user info, query string or fragment (they may carry credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def _build(kind: type, section: str, name: str, raw: Any, source: str) -> Any:
    if not isinstance(raw, Mapping):
        raise JudgeConfigError(f"{source}: [{section}.{name}] must be a table of settings, got "
                               f"{type(raw).__name__} {str(raw)[:40]!r}")
    known = {f.name for f in fields(kind)} - {"name"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise JudgeConfigError(f"{source}: {name!r}: unknown setting(s) {', '.join(unknown)} "
                               f"(known: {', '.join(sorted(known))})")
    if "api_key" in raw:
        raise JudgeConfigError(f"{source}: {name!r}: put the key in an environment variable and name it in "
                               "api_key_env")
    try:
        return kind(name=name, **dict(raw))
    except JudgeConfigError as exc:
        raise JudgeConfigError(f"{source}: {exc}") from None
    except (TypeError, AttributeError) as exc:  # a setting of the wrong type (e.g. base_url = 3)
        raise JudgeConfigError(f"{source}: [{section}.{name}]: {exc}") from None


def parse_config(data: Mapping[str, Any], *, source: str = "<config>") -> JudgesFile:
    """Build a :class:`JudgesFile` from already-parsed TOML/JSON data."""
    if not isinstance(data, Mapping):
        raise JudgeConfigError(f"{source}: top level must be a table/object")
    unknown = sorted(set(data) - {"judges", "embeddings"})
    if unknown:
        raise JudgeConfigError(f"{source}: unknown section(s) {', '.join(unknown)} (use judges, embeddings)")
    judges_raw = data.get("judges")
    embeddings_raw = data.get("embeddings")
    judges_raw = {} if judges_raw is None else judges_raw  # JSON null: an empty section
    embeddings_raw = {} if embeddings_raw is None else embeddings_raw
    for key, section in (("judges", judges_raw), ("embeddings", embeddings_raw)):
        if not isinstance(section, Mapping):
            # e.g. `judges = 3`: each judge is a table [judges.NAME], so the section itself must be a table.
            raise JudgeConfigError(f"{source}: '{key}' must be a table of named {key} ([{key}.NAME] sections), "
                                   f"got {type(section).__name__} {str(section)[:40]!r}")
    judges = {name: _build(JudgeConfig, "judges", name, raw, source) for name, raw in judges_raw.items()}
    if LEXICON_NAME in judges and judges[LEXICON_NAME].kind != "lexicon":
        raise JudgeConfigError(f"{source}: the judge name {LEXICON_NAME!r} is reserved for the offline judge")
    embeddings = {name: _build(EmbeddingConfig, "embeddings", name, raw, source)
                  for name, raw in embeddings_raw.items()}
    return JudgesFile(judges=judges, embeddings=embeddings, source=source)


def load_config(path: str | Path) -> JudgesFile:
    """Read a judges config file (``.toml`` or ``.json``)."""
    path = Path(path)
    if not path.is_file():
        raise JudgeConfigError(f"{path}: config file not found")
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=unique_keys)
        elif tomllib is None:
            raise JudgeConfigError(f"{path}: TOML configs need Python 3.11+; use the same structure in .json")
        else:
            with path.open("rb") as handle:
                data = tomllib.load(handle)
    except JudgeConfigError:
        raise
    except DuplicateKeyError as exc:  # TOML refuses a repeated key itself; json keeps the last one silently
        raise JudgeConfigError(f"{path}: {exc} in one table (a JSON reader would keep only the last value)") from None
    except (ValueError, UnicodeDecodeError) as exc:  # TOMLDecodeError and JSONDecodeError are ValueErrors
        raise JudgeConfigError(f"{path}: cannot parse config ({exc})") from None
    return parse_config(data, source=str(path))


def default_config_path() -> Path | None:
    """``$EMPATHY_JUDGES_CONFIG``, else ``judges.toml`` / ``empathy-judges.toml`` in the working directory."""
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env)
    for name in DEFAULT_CONFIG_NAMES:
        if Path(name).is_file():
            return Path(name)
    return None


def available_judges(config: str | Path | JudgesFile | None = None) -> dict[str, JudgeConfig]:
    """Every judge the config defines plus the built-in ``lexicon`` judge."""
    if config is None:
        config = default_config_path()
    judges: dict[str, JudgeConfig] = {LEXICON_NAME: LEXICON_JUDGE}
    if config is not None:
        parsed = config if isinstance(config, JudgesFile) else load_config(config)
        judges.update(parsed.judges)
    return judges


def resolve_judge(judge: JudgeConfig | str | None, config: str | Path | JudgesFile | None = None
                  ) -> JudgeConfig:
    """A :class:`JudgeConfig` from a config object or a judge name (``None`` means ``lexicon``)."""
    if isinstance(judge, JudgeConfig):
        return judge
    if judge is None:
        return LEXICON_JUDGE
    if not isinstance(judge, str):
        raise TypeError(f"judge must be a JudgeConfig or a name, got {type(judge).__name__}")
    judges = available_judges(config)
    if judge not in judges:
        raise JudgeConfigError(f"unknown judge {judge!r} (available: {', '.join(sorted(judges))})")
    return judges[judge]


def resolve_embedding(name: str, config: str | Path | JudgesFile | None = None) -> EmbeddingConfig:
    """An :class:`EmbeddingConfig` by name from the config file."""
    if config is None:
        config = default_config_path()
    if config is None:
        raise JudgeConfigError(f"embedding {name!r}: no config file given")
    parsed = config if isinstance(config, JudgesFile) else load_config(config)
    if name not in parsed.embeddings:
        raise JudgeConfigError(f"unknown embedding {name!r} (available: "
                               f"{', '.join(sorted(parsed.embeddings)) or 'none'})")
    return parsed.embeddings[name]


def api_key(config: JudgeConfig | EmbeddingConfig, secrets: Mapping[str, Any] | None = None) -> str | None:
    """The key for ``config`` from the environment, else from ``secrets`` (e.g. ``st.secrets``).

    Returns ``None`` when ``api_key_env`` is unset (keyless local server). Raises JudgeConfigError naming
    the variable, never its value, when the variable is named but empty.
    """
    name = config.api_key_env
    if not name:
        return None
    value = os.environ.get(name)
    if not value and secrets is not None:
        try:
            value = secrets.get(name)  # type: ignore[assignment]
        except Exception:  # noqa: BLE001 - Streamlit raises its own error when no secrets file exists
            value = None
    if not value:
        raise JudgeConfigError(f"{config.name!r}: the environment variable {name} (api_key_env) is not set")
    return str(value)


_BEARER = re.compile(r"(?i)(bearer\s+)[^\s\"',]+")
_KEYLIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,})")


def redact(text: object, secrets: tuple[str, ...] | list[str] = ()) -> str:
    """``str(text)`` with the given secrets, bearer tokens and ``sk-...`` keys replaced by ``***``."""
    out = str(text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            out = out.replace(secret, "***")
    out = _BEARER.sub(r"\1***", out)
    return _KEYLIKE.sub("***", out)
