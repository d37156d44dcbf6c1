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
  prefixed with ``'`` so spreadsheets do not evaluate it (OWASP "CSV injection"); :func:`unspreadsheet_cell`
  is its exact inverse. Machine formats (JSON, JSONL, Parquet) stay exact and are never passed through it.
- :func:`terminal_literal` for names printed to a terminal: control characters (ANSI escapes, ``\\r``) are
  shown as ``\\xNN`` escapes instead of acting on the terminal.
"""

from __future__ import annotations

import html
import re
import string

#: Cell prefixes that spreadsheets treat as formulas (OWASP CSV injection guidance).
FORMULA_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
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
    """Neutralise a CSV cell for spreadsheets: prefix ``'`` to text starting with ``= + - @``, tab or CR.

    Text already starting with ``'`` gets a second one, so :func:`unspreadsheet_cell` restores every string
    exactly.
    """
    if text.startswith(FORMULA_PREFIXES) or text.startswith("'"):
        return "'" + text
    return text


def unspreadsheet_cell(text: str) -> str:
    """Inverse of :func:`spreadsheet_cell`."""
    if text.startswith("'") and len(text) > 1 and (text[1] in FORMULA_PREFIXES or text[1] == "'"):
        return text[1:]
    return text


def terminal_literal(value: object) -> str:
    """``value`` with control characters (C0, DEL, C1) shown as ``\\xNN`` so they cannot act on a terminal."""
    return "".join(character if character.isprintable() or character == " " else f"\\x{ord(character):02x}"
                   if ord(character) < 0x100 else f"\\u{ord(character):04x}" for character in str(value))
