"""The text edits of the counterfactual probes (CheckList, Ribeiro et al. ACL 2020), one function per edit.

Each edit takes a generation (a response) and returns the edited text, or ``None`` where it does not apply (no
name to swap, no affect word to attenuate, no passive with a ``by`` agent), so that a probe's violation rate is
over the outputs it could test and says how many those were. Edits are deterministic: the same text gives the
same edit, so a probe can be re-run and its cache keys repeat.

Invariance edits (the label must not change): :func:`swap_names`, :func:`toggle_final_period`,
:func:`add_neutral_sentence`. Directional edits (the label must move one way): :func:`attenuate_affect`
(affect intensity must not rise), :func:`add_solution_sentence` (conflict avoidance must not fall),
:func:`add_graphic_detail` (the disturbing count must not fall), :func:`make_agentless` (the agentless density
of the distancing detector must rise).
"""

from __future__ import annotations

import re
from typing import Any

#: Person names swapped pairwise (both directions): common given names, balanced by the pairs.
NAME_PAIRS: tuple[tuple[str, str], ...] = (
    ("John", "Michael"), ("Mary", "Linda"), ("James", "Robert"), ("Sarah", "Emily"), ("David", "Daniel"),
    ("Anna", "Laura"), ("Tom", "Mark"), ("Lisa", "Karen"), ("Peter", "Paul"), ("Emma", "Olivia"),
    ("Alex", "Sam"), ("Maria", "Sofia"), ("Jack", "Henry"), ("Kate", "Jane"), ("Chris", "Ben"),
)
_SWAP: dict[str, str] = {a: b for a, b in NAME_PAIRS} | {b: a for a, b in NAME_PAIRS}
_NAME = re.compile(r"\b(" + "|".join(sorted(_SWAP, key=len, reverse=True)) + r")\b")
#: The neutral sentence appended by :func:`add_neutral_sentence`: no affect, no disturbing element, no advice.
NEUTRAL_SENTENCE = "The conversation took place on a Tuesday."
#: The solution-giving sentence appended by :func:`add_solution_sentence` (advice, the paper's CA criterion).
SOLUTION_SENTENCE = "You should make a list of three options and try the first one this week."
#: The graphic detail appended by :func:`add_graphic_detail` (death, injury and graphic detail of the checklist).
GRAPHIC_SENTENCE = "Two people were killed and blood covered the floor."
#: Strong affect words -> a weaker word of the same polarity (case kept for the first letter).
ATTENUATIONS: dict[str, str] = {
    "devastated": "disappointed", "devastating": "disappointing", "terrified": "worried", "terrifying": "worrying",
    "horrified": "surprised", "horrible": "unpleasant", "horrific": "unpleasant", "furious": "annoyed",
    "enraged": "annoyed", "heartbroken": "sad", "miserable": "unhappy", "desperate": "concerned",
    "overwhelmed": "busy", "overwhelming": "demanding", "panicked": "uneasy", "agonizing": "uncomfortable",
    "awful": "bad", "terrible": "bad", "hate": "dislike", "hated": "disliked", "ecstatic": "glad",
    "thrilled": "pleased", "elated": "pleased", "overjoyed": "glad", "adore": "like", "love": "like",
    "loved": "liked", "amazing": "good", "wonderful": "nice", "fantastic": "good", "furiously": "briskly",
    "grief": "sadness", "rage": "irritation", "despair": "doubt", "anguish": "discomfort", "agony": "discomfort",
    "scared": "unsure", "afraid": "unsure", "angry": "annoyed", "crushed": "let down", "shattered": "shaken",
}
#: Intensifiers dropped by :func:`attenuate_affect` (with the space after them).
INTENSIFIERS: tuple[str, ...] = ("extremely", "incredibly", "absolutely", "totally", "utterly", "really", "so",
                                 "very", "truly", "deeply", "terribly", "completely")
_STRONG = re.compile(r"\b(" + "|".join(sorted(ATTENUATIONS, key=len, reverse=True)) + r")\b", re.I)
#: Words after which ``so`` is a conjunction ("so they know", "so that"), kept by :func:`attenuate_affect`.
NOT_INTENSIFIED: tuple[str, ...] = ("that", "they", "we", "you", "i", "he", "she", "it", "there", "the", "a", "an",
                                    "this", "these", "those", "my", "your", "our", "their", "his", "her", "if", "far",
                                    "to", "as", "on")
_INTENSIFIER = re.compile(r"\b(?:" + "|".join(w for w in INTENSIFIERS if w != "so") + r"|so(?!\s+(?:"
                          + "|".join(NOT_INTENSIFIED) + r")\b))\s+(?=\w)", re.I)


def swap_names(text: str) -> str | None:
    """Every listed given name replaced by its partner (:data:`NAME_PAIRS`); ``None`` without one."""
    edited = _NAME.sub(lambda m: _SWAP[m.group(1)], text)
    return edited if edited != text else None


def toggle_final_period(text: str) -> str | None:
    """The final full stop removed, or one added after a final letter or digit; ``None`` otherwise (a text ending
    in ``!`` or ``?`` carries emphasis, which is not punctuation noise)."""
    stripped = text.rstrip()
    if not stripped:
        return None
    if stripped.endswith(".") and not stripped.endswith(".."):
        return stripped[:-1]
    if stripped[-1].isalnum():
        return stripped + "."
    return None


def _append(text: str, sentence: str) -> str | None:
    stripped = text.rstrip()
    if not stripped:
        return None
    joiner = " " if stripped[-1] in ".!?\"')" else ". "
    return f"{stripped}{joiner}{sentence}"


def add_neutral_sentence(text: str) -> str | None:
    """:data:`NEUTRAL_SENTENCE` appended; ``None`` for an empty text."""
    return _append(text, NEUTRAL_SENTENCE)


def add_solution_sentence(text: str) -> str | None:
    """:data:`SOLUTION_SENTENCE` appended; ``None`` for an empty text."""
    return _append(text, SOLUTION_SENTENCE)


def add_graphic_detail(text: str) -> str | None:
    """:data:`GRAPHIC_SENTENCE` appended; ``None`` for an empty text."""
    return _append(text, GRAPHIC_SENTENCE)


def _keep_case(word: str, replacement: str) -> str:
    if word.isupper() and len(word) > 1:
        return replacement.upper()
    return replacement[0].upper() + replacement[1:] if word[0].isupper() else replacement


def attenuate_affect(text: str) -> str | None:
    """Strong affect words weakened (:data:`ATTENUATIONS`), intensifiers dropped, ``!`` made ``.``, words in
    capitals lowered; ``None`` when nothing changed."""
    edited = _STRONG.sub(lambda m: _keep_case(m.group(1), ATTENUATIONS[m.group(1).lower()]), text)
    edited = _INTENSIFIER.sub("", edited)
    edited = re.sub(r"!+", ".", edited)
    edited = re.sub(r"\b[A-Z]{3,}\b", lambda m: m.group(0).lower(), edited)
    edited = re.sub(r"(^|[.?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), edited)
    return edited if edited != text else None


def make_agentless(text: str, nlp: Any) -> str | None:
    """The ``by`` agent of the first passive clause removed (``The plan was approved by the board`` -> ``The plan
    was approved``), found in the spaCy parse (``nlp``, the distancing detector's model): the ``agent``
    dependent of a past participle with a passive auxiliary; ``None`` where no clause has one."""
    doc = nlp(text)
    for token in doc:
        if token.dep_ != "agent" or token.head.tag_ != "VBN":
            continue
        if not any(child.dep_ == "auxpass" for child in token.head.children):
            continue
        span = doc[token.left_edge.i:token.right_edge.i + 1]
        start, end = span.start_char, span.end_char
        before = text[:start].rstrip()
        return before + text[end:] if text[end:end + 1] in ".,;:!?" or not text[end:] else before + " " + \
            text[end:].lstrip()
    return None
