"""A small, dependency-free sentence splitter used by the judges.

The disturbing-content protocol (paper, Appendix B) judges one sentence at a time, and the offline judges
score sentence by sentence, so the judges need sentences without loading a spaCy model. The rule is
deliberately simple and documented so that a sentence count can be reproduced by hand:

1. A line break that ends a non-empty line followed by a blank line, or a bullet/numbered-list line start,
   is always a boundary (paragraphs and list items are separate sentences).
2. Inside a paragraph, a boundary follows ``.``, ``!``, ``?`` or ``…`` (optionally followed by closing quotes
   or brackets) when whitespace and then an upper-case letter, a digit, an opening quote or bracket follows.
3. No boundary after a known abbreviation (``Mr.``, ``Dr.``, ``U.S.``, ``e.g.``, ``No.`` before a digit ...),
   a single initial (``J. Smith``) or a dotted acronym. Known limit: a sentence that really ends with such
   an abbreviation ("... moved to the U.S. Then ...") is not split.

CJK full stops (``。！？``) end a sentence without needing whitespace. Empty pieces are dropped.

Version: :data:`SPLITTER_VERSION` (part of every disturbing-content signature).
"""

from __future__ import annotations

import re

SPLITTER_VERSION = "regex-v1"

ABBREVIATIONS: frozenset[str] = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "gen", "gov", "sen", "rep", "col", "lt",
    "sgt", "capt", "cmdr", "adm", "rev", "hon", "pres", "vs", "etc", "e.g", "i.e", "cf", "al", "approx",
    "vol", "fig", "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "u.n", "a.m", "p.m", "d.c", "ph.d",
})

_PARAGRAPH = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")
# The look-behind makes a candidate start only at the first mark of a run ("!!!"), so a long run of marks is
# not rescanned from every position (which would be quadratic).
_CANDIDATE = re.compile(r"(?<![.!?…])([.!?…]+)([\"'”’)\]]*)(\s+)(?=[\"'“‘(\[]?[A-Z0-9])")
_CJK_END = re.compile(r"(?<=[。！？])")
_INITIAL_OR_ACRONYM = re.compile(r"[a-z]|(?:[a-z]\.)+[a-z]")


def _last_token(paragraph: str, end: int) -> str:
    """The whitespace-delimited token ending at ``end`` (the paragraph is whitespace-flattened)."""
    # rfind walks back only over the token itself; tokens before different candidates do not overlap, so the
    # total work over a paragraph is linear in its length.
    return paragraph[paragraph.rfind(" ", 0, end) + 1:end]


def _is_abbreviation(token: str, next_char: str) -> bool:
    token = token.lstrip("\"'“‘([").lower()
    if not token:
        return False
    if token in ABBREVIATIONS:
        return True
    # "No. 5" is an abbreviation, "said no. The" is a sentence end.
    if token in ("no", "nos") and next_char.isdigit():
        return True
    # A single capital initial ("J.") or a dotted acronym ("U.S") is not a sentence end.
    return bool(_INITIAL_OR_ACRONYM.fullmatch(token))


def _split_paragraph(paragraph: str) -> list[str]:
    """Split one whitespace-flattened paragraph; linear in its length (no copy of the rest per candidate)."""
    pieces: list[str] = []
    start = 0
    for match in _CANDIDATE.finditer(paragraph):
        if match.group(1) == "." and _is_abbreviation(_last_token(paragraph, match.start(1)),
                                                      paragraph[match.end():match.end() + 1]):
            continue
        pieces.append(paragraph[start:match.end(2)])
        start = match.end(3)
    pieces.append(paragraph[start:])
    out: list[str] = []
    for piece in pieces:
        out.extend(_CJK_END.split(piece))
    return out


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences with the documented regex rules (see the module docstring).

    Returns the stripped, non-empty sentences in order; an empty or blank text gives ``[]``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    sentences: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        flat = " ".join(paragraph.split())
        if not flat:
            continue
        sentences.extend(s.strip() for s in _split_paragraph(flat) if s.strip())
    return sentences
