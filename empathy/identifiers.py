"""What an identifier is: visible text with one spelling, and the near misses of a known name.

Identifiers (``item_id``, ``model``, ``task``, ``rater``, ``dimension``) are keys: two cells are the same item
exactly when their (whitespace-stripped) texts are equal. A character that a screen shows as nothing would make
two keys look identical and stay different (``1`` and ``1`` + U+200B ZERO WIDTH SPACE, two items), or make a
key look empty. The rule is therefore to *reject*, never to normalise silently: an identifier holding an
invisible character (:data:`INVISIBLE`) is an error naming the character, so the file is fixed once and every
table, store and export that carries the key afterwards holds the one spelling. (Normalising would have to be
repeated identically by every reader of every file, the override store and the exports, or the keys drift.)

*Invisible* is Unicode's ``Default_Ignorable_Code_Point`` property (DerivedCoreProperties.txt): zero-width
spaces and joiners, bidirectional controls (U+202A-U+202E, U+2066-U+2069), the soft hyphen, the word joiner,
variation selectors, the Hangul fillers, tag characters and the byte-order mark. The zero-width joiner and
non-joiner shape some scripts and emoji; in an identifier they are still rejected, since ``x`` and ``x`` +
U+200D cannot be told apart on a screen.

A *near miss* of a known name (the paper's dimensions ``e_ref`` ... ``ca``) is a different text that becomes
the known name under :func:`fold`: NFKC (full-width letters), case folding (``CA``) and removing invisible
characters. It is an error naming the known name: such a dimension would otherwise be an unknown rubric,
kept unchecked and scored by no metric.

Standard library only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# Default_Ignorable_Code_Point, Unicode 15.1 (DerivedCoreProperties.txt), as (first, last) code points.
_DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
#: A character class of the invisible characters, written with the characters themselves (not ``\\u``
#: escapes) so that both Python's ``re`` and pandas' Arrow string engine (RE2) read it the same way.
INVISIBLE_CLASS = "[" + "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in _DEFAULT_IGNORABLE) + "]"
#: Matches one invisible character.
INVISIBLE = re.compile(INVISIBLE_CLASS)


def invisible_character(text: str) -> str | None:
    """The first invisible character of ``text`` (:data:`INVISIBLE`), or ``None``."""
    found = INVISIBLE.search(text)
    return found.group(0) if found else None


def describe_character(character: str) -> str:
    """``U+200B ZERO WIDTH SPACE``: a character by code point and Unicode name (for messages)."""
    name = unicodedata.name(character, "")
    return f"U+{ord(character):04X}" + (f" {name}" if name else "")


def identifier_problem(text: str) -> str | None:
    """Why ``text`` (already whitespace-stripped) is not an identifier, or ``None`` when it is one.

    Empty text is left to the caller's "empty value" check; text made only of invisible characters and
    whitespace, or holding any invisible character, gets a message naming the character.
    """
    character = invisible_character(text)
    if character is None:
        return None
    if not INVISIBLE.sub("", text).strip():
        return f"empty value (only invisible characters, e.g. {describe_character(character)})"
    return (f"invisible character {describe_character(character)} in an identifier (two ids that look the same "
            "must be the same text): remove it")


def fold(text: str) -> str:
    """``text`` as compared with known names: invisible characters removed, NFKC, case-folded, stripped."""
    return unicodedata.normalize("NFKC", INVISIBLE.sub("", text)).casefold().strip()


def near_misses(texts: Iterable[str], known: Iterable[str]) -> dict[str, str]:
    """Each of ``texts`` that is a different spelling of one of ``known`` (equal under :func:`fold`) -> that name.

    A text that is itself one of ``known`` is not a near miss. Linear in the number of texts.
    """
    folded = {fold(name): name for name in known}
    exact = set(folded.values())
    misses = {}
    for text in texts:
        if text not in exact:
            name = folded.get(fold(text))
            if name is not None:
                misses[text] = name
    return misses


def person_name_problem(name: str) -> str | None:
    """Why ``name`` (an annotator, already stripped) cannot name a person in the record, or ``None``.

    A control character (an ANSI escape's ESC, a carriage return) or an invisible one (zero-width, or a
    bidirectional control: U+202E + ``lorac`` shows as ``carol``) would let one name pass for another on a
    screen, in an audit trail and in a role file: such a name is refused, not cleaned.
    """
    for character in name:
        code = ord(character)
        if code < 32 or 127 <= code < 160:
            return f"an annotator name cannot hold control characters (found {describe_character(character)})"
    character = invisible_character(name)
    if character is not None:
        return (f"an annotator name cannot hold invisible characters (found {describe_character(character)}: "
                "it would show as another name)")
    return None
