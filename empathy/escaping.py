"""One place where untrusted data strings meet Markdown, HTML, chart labels, spreadsheets and terminals.

Everything that comes from data (texts, model, rater and item names, conversation columns) is untrusted. Each
function here makes a string *literal* for one consumer:

- :func:`markdown_literal` for anything Streamlit renders as Markdown (``st.markdown`` without HTML,
  ``st.success``/``st.info``/``st.caption`` messages, widget labels): every ASCII punctuation character is
  written as a numeric character reference, so no Markdown, Streamlit directive (``:blue[...]``), KaTeX
  (``$...$``), link or image can form; bare URLs get an invisible word joiner so they do not autolink; line
  breaks become spaces.
- :func:`html_literal` for text placed inside HTML (``unsafe_allow_html=True``) or a Plotly label, which
  Plotly renders as a subset of HTML (``<span style=...>``, ``<b>``, ``<br>``).
- :func:`spreadsheet_cell` for CSV files meant for people: a cell starting with ``= + - @``, tab or CR is
  prefixed with ``'`` so spreadsheets do not evaluate it (OWASP "CSV injection"), and a cell holding a
  control character (an ANSI escape that would act on a terminal showing the file) or a bidirectional control
  (U+202E, which reorders what a spreadsheet or editor shows) is written as ``'\\`` followed by the text with
  those characters as ``\\x1b``, ``\\u202e`` and each ``\\`` doubled; :func:`unspreadsheet_cell` is its exact
  inverse. Machine formats (JSON, JSONL, Parquet) stay exact and are never passed through it.
- :func:`terminal_literal` for names printed to a terminal: control characters (ANSI escapes, ``\\r``) are
  shown as ``\\xNN`` escapes instead of acting on the terminal.
"""

from __future__ import annotations

import html
import re
import string

#: Cell prefixes that spreadsheets treat as formulas (OWASP CSV injection guidance).
FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
#: What a people's CSV never carries raw: C0 controls but tab, line feed and carriage return (which texts hold
#: and CSV quoting keeps), DEL, C1 controls, and the bidirectional controls (marks, embeddings, overrides,
#: isolates). Such a cell is written escaped, behind :data:`ESCAPED_PREFIX`.
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: The start of a cell written with backslash escapes (an original text starting with ``'`` gets a second one,
#: so no original cell is ever mistaken for it).
ESCAPED_PREFIX = "'\\"
_ESCAPE = re.compile(r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4})")
_ASCII_PUNCTUATION = frozenset(string.punctuation)
#: U+2060 WORD JOINER: invisible, and neither a word character nor punctuation for the autolink finder.
WORD_JOINER = "\u2060"
# What GitHub-flavoured Markdown turns into a link without any bracket: "http://", "https://", "www." and
# e-mail addresses. Streamlit finds them in the *decoded* text, after character references are resolved, so
# escaping the punctuation does not stop them (found by tests/test_browser_payload.py).
_AUTOLINK_START = re.compile(r"(?i)(?:https?|ftp|mailto|xmpp)(?=:)|www(?=\.)|(?=@)")


def markdown_literal(value: object) -> str:
    """``value`` as text that Streamlit's Markdown shows verbatim (no formatting, links, images or maths).

    Besides the numeric references, a word joiner (invisible) goes between ``http``/``https``/``www`` and
    what follows and before ``@``, so bare URLs and e-mail addresses read the same but never autolink.
    """
    pieces = []
    for character in _AUTOLINK_START.sub(lambda m: m.group(0) + WORD_JOINER, str(value)):
        if character in _ASCII_PUNCTUATION:
            pieces.append(f"&#{ord(character)};")
        elif character in "\r\n\t\v\f":
            pieces.append(" ")
        else:
            pieces.append(character)
    return "".join(pieces)


def html_literal(value: object) -> str:
    """``value`` HTML-escaped (quotes included), for HTML blocks and Plotly labels.

    Quotes are numeric references (``&#34;`` ``&#39;``): Plotly's label renderer decodes numeric references
    and only ``&lt; &gt; &amp;`` of the named ones, so ``&quot;`` would show as six characters.
    """
    return html.escape(str(value), quote=True).replace("&quot;", "&#34;").replace("&#x27;", "&#39;")


def spreadsheet_cell(text: str) -> str:
    """Neutralise a CSV cell for people: no formula, no terminal control, no bidirectional reordering.

    Text holding a control or bidirectional character is written as :data:`ESCAPED_PREFIX` and the text with
    each ``\\`` doubled and each such character as ``\\xNN`` / ``\\uNNNN`` (it then starts with ``'``, so it is
    no formula either). Otherwise text starting with ``= + - @``, tab or CR gets a leading ``'``, and text
    already starting with ``'`` gets a second one, so :func:`unspreadsheet_cell` restores every string exactly.
    """
    if _UNSAFE.search(text):
        return ESCAPED_PREFIX + _UNSAFE.sub(_code, text.replace("\\", "\\\\"))
    if text.startswith(FORMULA_PREFIXES) or text.startswith("'"):
        return "'" + text
    return text


def _code(found: re.Match[str]) -> str:
    point = ord(found.group(0))
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def unspreadsheet_cell(text: str) -> str:
    """Inverse of :func:`spreadsheet_cell`; a cell starting with :data:`ESCAPED_PREFIX` that it would not have
    written (a person's own ``'\\...``, holding no escaped character) is kept as written."""
    if text.startswith(ESCAPED_PREFIX):
        decoded = _ESCAPE.sub(lambda found: "\\" if found.group(1) == "\\" else chr(int(found.group(1)[1:], 16)),
                              text[len(ESCAPED_PREFIX):])
        return decoded if spreadsheet_cell(decoded) == text else text
    if text.startswith("'") and len(text) > 1 and (text[1] in FORMULA_PREFIXES or text[1] == "'"):
        return text[1:]
    return text


def terminal_literal(value: object) -> str:
    """``value`` with control characters (C0, DEL, C1) shown as ``\\xNN`` so they cannot act on a terminal."""
    return "".join(character if character.isprintable() or character == " " else f"\\x{ord(character):02x}"
                   if ord(character) < 0x100 else f"\\u{ord(character):04x}" for character in str(value))
