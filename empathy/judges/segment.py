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
revisits a reference shared by several models parses it once.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable

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
    to their first and last non-space token so that offsets do not depend on where whitespace was attached."""
    spans = []
    for sent in doc.sents:  # type: ignore[attr-defined]
        words = [token for token in sent if not token.is_space]
        if words:
            spans.append((offset + words[0].idx, offset + words[-1].idx + len(words[-1].text)))
    return spans


def sentence_spans(texts: Iterable[str], *, model: str | None = None, batch_size: int = 64
                   ) -> list[list[tuple[int, int]]]:
    """Character ``(start, end)`` offsets of each text's sentences under the Eq. 2 parse (see the module doc).

    Raises TypeError for a text that is not a string; the spaCy model is loaded once per process.
    """
    from empathy.distancing import MAX_PIECE_CHARS, load_model, resolve_model_name, split_long_text
    from empathy.distancing.rules import parse_text

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
        nlp = load_model(name)
        disable = [component for component in _NOT_FOR_BOUNDARIES if component in nlp.pipe_names]
        # the analyser's own rule for which texts are parsed whole and where longer ones are cut
        limit = min(MAX_PIECE_CHARS, nlp.max_length)
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
