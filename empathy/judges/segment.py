"""The judges' sentences: those of the spaCy parse whose count is ``d`` and ``q`` of Eq. 2.

EGM (paper, Eq. 2) divides a text's disturbing-content count ``U`` by its sentence count. The count comes from
the judges (one disturbing-content request per sentence, Appendix B); the sentence count comes from
:mod:`empathy.distancing` (``DistancingResult.sentences``, the sentences of a spaCy parse that contain a
non-space token). So that numerator and denominator rest on the same sentences, the judges take their
sentences from the same parse: the same pipeline (:func:`empathy.distancing.load_model`), the same text
preparation (:func:`empathy.distancing.rules.parse_text`) and the same rule for which sentences count.
``tests/test_judges_offline.py`` checks on every demo text that the two counts agree.

Only the parser decides sentence boundaries in the English pipelines (the tagger, attribute ruler and
lemmatizer run beside or after it), so they are switched off here for speed; the boundaries are unchanged.

A sentence is handed to a judge with its internal whitespace collapsed to single spaces (as the regex
splitter does), so a line break inside a sentence does not change the prompt or its cache key.

Texts longer than :data:`empathy.distancing.MAX_PIECE_CHARS` are parsed in the very pieces the distancing
analyser parses them in (:func:`empathy.distancing.split_long_text`, the same limit), so that cost and
memory stay linear in the length and the sentences still agree with ``d``/``q``.

Parsed boundaries are memoised per process (:data:`MEMO_TEXTS` most recent texts), so a judge run that
revisits a reference shared by several models parses it once, and kept in the distancing cache beside the
distancing results (:meth:`empathy.distancing.DistancingCache.get_sentences`): :func:`empathy.distancing.analyze`
stores the offsets of every text it parses, so the sentences of a text analysed before are read from there and
the spaCy model is not loaded (the app's Inspect and Relabel pages draw their marks on them: issue 25).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from empathy.distancing.cache import DistancingCache

#: Texts whose sentence boundaries are memoised per process.
MEMO_TEXTS = 4096
#: Components that do not decide sentence boundaries (switched off when present).
_NOT_FOR_BOUNDARIES = ("tagger", "attribute_ruler", "lemmatizer", "morphologizer", "ner")

_memo: OrderedDict[tuple[str, str], tuple[tuple[int, int], ...]] = OrderedDict()
_memo_lock = threading.Lock()


def segmentation_signature(model: str | None = None) -> str:
    """``spacy:<model>-<version>``: names the parse the sentences come from.

    The detector rule version is left out on purpose: the rules read the parse but do not change its sentence
    boundaries, and naming them would mark every judge run stale whenever a detector word list changes.
    """
    from empathy.distancing import model_info

    info = model_info(model)
    return f"spacy:{info['model']}-{info['version']}"


def _spans_of(doc: object, offset: int) -> list[tuple[int, int]]:
    """Sentences with a non-space token (the rule of ``empathy.distancing.rules.count_sentences``), trimmed
    to their first and last non-space token so that offsets do not depend on where whitespace was attached
    (:func:`empathy.distancing.sentence_offsets`, the rule the distancing cache stores them under)."""
    from empathy.distancing import sentence_offsets

    return sentence_offsets(doc, offset)


def _stored(name: str, texts: Iterable[str], cache: DistancingCache | bool | None
            ) -> dict[str, tuple[tuple[int, int], ...]]:
    """The offsets of ``texts`` found in the distancing cache (``cache`` as for :func:`sentence_spans`), by text;
    none when there is no cache or it cannot be opened."""
    from empathy.distancing import _resolve_cache
    from empathy.distancing.cache import text_key
    from empathy.distancing.model import model_version

    try:
        store = _resolve_cache(cache)
    except ValueError:  # an unwritable cache folder: parse, as without a cache
        return {}
    if store is None:
        return {}
    keys = {text: text_key(text) for text in texts}
    found = store.get_sentences(name, model_version(name), list(keys.values()))
    return {text: found[key] for text, key in keys.items() if key in found}


def _keep(name: str, found: dict[str, list[tuple[int, int]]], cache: DistancingCache | bool | None) -> None:
    """Store freshly parsed offsets in the distancing cache (when there is one)."""
    from empathy.distancing import _resolve_cache
    from empathy.distancing.cache import text_key
    from empathy.distancing.model import model_version

    try:
        store = _resolve_cache(cache)
    except ValueError:
        return
    if store is not None:
        store.put_sentences(name, model_version(name), ((text_key(text), spans) for text, spans in found.items()))


def _parse(name: str, texts: Iterable[str], batch_size: int) -> dict[str, list[tuple[int, int]]]:
    """Each text's sentence offsets from a parse (the model loaded once per process): texts up to the analyser's
    piece limit parsed whole, longer ones in its pieces (:func:`empathy.distancing.split_long_text`)."""
    from empathy.distancing import MAX_PIECE_CHARS, load_model, split_long_text
    from empathy.distancing.rules import parse_text

    nlp = load_model(name)
    disable = [component for component in _NOT_FOR_BOUNDARIES if component in nlp.pipe_names]
    # the analyser's own rule for which texts are parsed whole and where longer ones are cut
    limit = min(MAX_PIECE_CHARS, nlp.max_length)
    todo = list(texts)
    whole = [text for text in todo if len(text) <= limit]
    found: dict[str, list[tuple[int, int]]] = {}
    docs = nlp.pipe((parse_text(text) for text in whole), batch_size=batch_size, disable=disable)
    for text, doc in zip(whole, docs, strict=True):
        found[text] = _spans_of(doc, 0)
    for text in todo:
        if text in found:
            continue
        pieces = split_long_text(text, limit)
        spans: list[tuple[int, int]] = []
        chunk_docs = nlp.pipe((parse_text(text[a:b]) for a, b in pieces), batch_size=1, disable=disable)
        for (a, _), doc in zip(pieces, chunk_docs, strict=True):
            spans.extend(_spans_of(doc, a))
        found[text] = spans
    return found


def sentence_spans(texts: Iterable[str], *, model: str | None = None, batch_size: int = 64,
                   cache: DistancingCache | bool | None = True) -> list[list[tuple[int, int]]]:
    """Character ``(start, end)`` offsets of each text's sentences under the Eq. 2 parse (see the module doc).

    ``cache``: where parsed offsets are looked up first and stored (as for :func:`empathy.distancing.analyze`:
    ``True`` for the default distancing cache, a :class:`empathy.distancing.DistancingCache`, ``False``/``None``
    for none). Raises TypeError for a text that is not a string; the spaCy model is loaded once per process, and
    only when a text is neither memoised nor in the cache.
    """
    from empathy.distancing import resolve_model_name

    items = list(texts)
    for position, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"text #{position} must be a string, got {type(text).__name__}")
    if not items:
        return []
    name = resolve_model_name(model)
    out: list[list[tuple[int, int]] | None] = [None] * len(items)
    todo: dict[str, list[int]] = {}
    with _memo_lock:
        for position, text in enumerate(items):
            key = (name, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
            if key in _memo:
                _memo.move_to_end(key)
                out[position] = list(_memo[key])
            else:
                todo.setdefault(text, []).append(position)
    if todo:
        for text, spans in _stored(name, todo, cache).items():
            with _memo_lock:
                for position in todo.pop(text):
                    out[position] = list(spans)
                _memo[(name, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())] = spans
                while len(_memo) > MEMO_TEXTS:
                    _memo.popitem(last=False)
    if todo:
        found = _parse(name, todo, batch_size)
        _keep(name, found, cache)
        with _memo_lock:
            for text, positions in todo.items():
                for position in positions:
                    out[position] = list(found[text])
                key = (name, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
                _memo[key] = tuple(found[text])
                while len(_memo) > MEMO_TEXTS:
                    _memo.popitem(last=False)
    return [spans if spans is not None else [] for spans in out]


def spacy_sentences(texts: Iterable[str], *, model: str | None = None) -> list[list[str]]:
    """Each text's sentences under the Eq. 2 parse, whitespace collapsed; an empty text has none."""
    texts = list(texts)
    spans = sentence_spans(texts, model=model)
    return [[" ".join(text[a:b].split()) for a, b in text_spans] for text, text_spans in zip(texts, spans,
                                                                                              strict=True)]


def clear_memo() -> None:
    """Forget the memoised boundaries (tests, or after switching models)."""
    with _memo_lock:
        _memo.clear()
