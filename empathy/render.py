"""Safe HTML rendering of texts with the marks of the four mechanisms (LD, EGM, SA, CA) highlighted.

:func:`highlight_html` is the only producer of HTML that the app passes to ``st.markdown(...,
unsafe_allow_html=True)``. Every character of the text, label and rule is HTML-escaped (``html.escape`` with
``quote=True``) before any markup is added, so data can never inject elements or attributes. Characters that
Markdown or Streamlit's LaTeX would interpret (``* _ [ ] ` # ~ $ \\ |`` and friends) are written as numeric
character references and newlines as ``<br>``; the result is a single line inside one ``<div>``, which
CommonMark treats as a raw HTML block, so Markdown never sees the text.

Overlapping or nested spans are split at every boundary; each piece is wrapped in one ``<mark>`` per span
covering it, outermost first (earlier start, then longer span, then label order, then rule), so the output
is a deterministic function of the input whatever the order of ``spans``. With ``numbered=True`` every piece
carries ``data-mark="k"``, ``k`` the span's place in that order, so that the pieces of one split span can be
told apart from several spans (what a test or a reader counts is spans, not pieces).

The marks (labels) and how they are drawn, so that all four can overlap and stay visible:

* LD ``nominalization``, ``impersonal``, ``agentless``: a coloured background;
* EGM ``disturbing:<category>``: a red bottom border; ``judged:<judge>``: a dotted purple underline, lower;
* SA ``affect:word`` / ``affect:emphasis``: an orange top border whose width and opacity follow the span's
  ``strength`` (0-1), with its ``weight`` (share of ``E``) in ``data-weight`` and the tooltip;
* CA ``cue:<category>``: a wavy underline, teal for avoidance cues, green for exploration cues;
  ``tension:<category>`` (on a client narrative): a dashed blue underline; ``evidence:<judge>``: the passage an
  LLM judge quoted as evidence of its CA label, boxed in purple.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: The three distancing labels, their CSS class, colour and legend text.
LABELS: dict[str, tuple[str, str, str]] = {
    "nominalization": ("ld-nominalization", "#fde68a", "Nominalization"),
    "impersonal": ("ld-impersonal", "#bfdbfe", "Impersonal subject"),
    "agentless": ("ld-agentless", "#fbcfe8", "Agentless clause"),
}
OTHER_LABEL: tuple[str, str, str] = ("ld-other", "#e5e7eb", "Other")
#: Disturbing content (EGM, Eq. 2): labels ``disturbing:<category>`` of :mod:`empathy.mechanisms`, drawn as a
#: red underline rather than a background so that they stay visible inside or around a distancing highlight.
DISTURBING_PREFIX = "disturbing:"
DISTURBING_COLOUR = "#dc2626"
#: Sentences in which an LLM judge counted disturbing content (labels ``judged:<judge>``): a dotted purple
#: underline, below the lexicon's red one.
JUDGED_PREFIX = "judged:"
JUDGED_COLOUR = "#7c3aed"
DISTURBING_CATEGORIES: dict[str, str] = {"death": "death", "violence": "violence", "injury": "injury",
                                         "graphic": "graphic detail", "abuse": "abuse or torture"}
#: SA (Eq. 1): the lexicon judge's affect words (labels ``affect:word``, ``affect:emphasis``).
AFFECT_PREFIX = "affect:"
AFFECT_COLOUR = "234,88,12"  # rgb of the top border; its opacity follows the span's strength
#: CA (Eq. 3): the lexicon's conflict-avoidance cues on a response (``cue:<category>``) and the client's tension
#: on the narrative (``tension:<category>``). Category -> (side, legend name) for the cues.
CUE_PREFIX = "cue:"
TENSION_PREFIX = "tension:"
EVIDENCE_PREFIX = "evidence:"
CUE_COLOURS: dict[str, str] = {"avoidance": "#0f766e", "exploration": "#16a34a"}
TENSION_COLOUR = "#2563eb"
CUE_NAMES: dict[str, tuple[str, str]] = {
    "solution": ("avoidance", "solution-giving"), "compromise": ("avoidance", "compromise"),
    "deflection": ("avoidance", "deflection"), "reassurance": ("avoidance", "reassurance"),
    "closure": ("avoidance", "closure"), "normalising": ("avoidance", "normalising (minimising)"),
    "question": ("exploration", "open question"), "reflection": ("exploration", "reflection"),
}
_LABEL_ORDER = {label: position for position, label in enumerate(LABELS)}
# Characters Markdown (or Streamlit's $...$ LaTeX) could act on, written as numeric references instead.
_MARKDOWN_SPECIAL = frozenset("*_[]()`#~$\\|!{}:")


@dataclass(frozen=True)
class Span:
    """A character span ``[start, end)`` of a text with a label and the rule that found it.

    ``weight`` (a mark's share of a score, e.g. of ``E`` for SA) and ``strength`` (0-1, how strongly to draw it)
    are optional; only the SA marks use them.
    """

    start: int
    end: int
    label: str
    rule: str = ""
    text: str = ""
    weight: float | None = None
    strength: float | None = None


def _field(span: object, name: str, default: object = None) -> object:
    if isinstance(span, Mapping):
        return span.get(name, default)
    return getattr(span, name, default)


def coerce_span(span: object, text_length: int) -> Span:
    """Read a span from a dict or an object with ``start, end, label, rule, text`` and check its offsets.

    Raises ``TypeError`` for non-integer offsets and ``ValueError`` for offsets outside ``[0, text_length]``
    or ``start > end``.
    """
    start, end = _field(span, "start"), _field(span, "end")
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
            raise TypeError(f"span {name} must be an integer, got {type(value).__name__} ({span!r})")
    start, end = int(start), int(end)  # type: ignore[arg-type]
    if not 0 <= start <= end <= text_length:
        raise ValueError(f"span offsets [{start}, {end}) outside the text of length {text_length} ({span!r})")
    label = str(_field(span, "label", "") or "")
    rule = str(_field(span, "rule", "") or "")
    numbers = [_optional_number(span, name) for name in ("weight", "strength")]
    return Span(start, end, label, rule, str(_field(span, "text", "") or ""), *numbers)


def _optional_number(span: object, name: str) -> float | None:
    value = _field(span, name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) and not hasattr(value, "__float__"):
        raise TypeError(f"span {name} must be a number, got {type(value).__name__} ({span!r})")
    number = float(value)  # type: ignore[arg-type]
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"span {name} must be finite, got {number!r} ({span!r})")
    return number


def escape_text(text: str) -> str:
    """HTML-escape ``text`` (quotes included) and neutralise Markdown; newlines become ``<br>``."""
    # one C-level pass (str.translate): a loop over the characters cost ~20 % of Relabel's first window
    return text.translate(_ESCAPES)


def _escape_table() -> dict[int, str | None]:
    """Character -> replacement for :func:`escape_text`: a Markdown special as a numeric reference (before
    anything else), a newline as ``<br>``, a carriage return dropped, and the HTML specials escaped."""
    table: dict[int, str | None] = {ord(c): html.escape(c, quote=True) for c in "&<>\"'"}
    table[ord("\r")] = None
    table[ord("\n")] = "<br>"
    table.update({ord(c): f"&#{ord(c)};" for c in _MARKDOWN_SPECIAL})
    return table


_ESCAPES = _escape_table()


def _attribute(text: str) -> str:
    # Attribute values are never parsed as Markdown; only HTML escaping (and no raw newlines) is needed.
    return html.escape(" ".join(text.split()), quote=True)


def _style(label: str) -> tuple[str, str, str]:
    return LABELS.get(label, OTHER_LABEL)


def _overlay(css: str, style: str, title: str, extra: str = "") -> str:
    """A mark drawn over the text without a background (EGM, SA, CA), so that LD's background shows through."""
    return (f'<mark class="{css}" style="background-color:transparent;color:inherit;{style}"{extra} '
            f'title="{_attribute(title)}">')


def _open_disturbing(span: Span) -> str:
    category = span.label.removeprefix(DISTURBING_PREFIX)
    name = DISTURBING_CATEGORIES.get(category, category or "other")
    title = f"Disturbing content: {name} ({span.rule})" if span.rule else f"Disturbing content: {name}"
    css = f"egm-{category}" if category in DISTURBING_CATEGORIES else "egm-other"
    return _overlay(f"egm-disturbing {css}", f"border-bottom:3px solid {DISTURBING_COLOUR};padding:0 1px", title)


def _open_judged(span: Span) -> str:
    judge = span.label.removeprefix(JUDGED_PREFIX)
    title = f"Judge {judge}: {span.rule}" if span.rule else f"Judge {judge}"
    return _overlay("egm-judged", f"text-decoration:underline dotted {JUDGED_COLOUR};text-decoration-thickness:2px;"
                    "text-underline-offset:7px", title)


def _open_affect(span: Span) -> str:
    strength = min(1.0, max(0.0, span.strength if span.strength is not None else 0.5))
    weight = f' data-weight="{span.weight!r}"' if span.weight is not None else ""
    title = f"SA, affect intensity: {span.rule}" if span.rule else "SA, affect intensity"
    return _overlay("sa-affect", f"border-top:{1 + round(3 * strength)}px solid "
                    f"rgba({AFFECT_COLOUR},{0.35 + 0.65 * strength:.2f});padding:0 1px", title, weight)


def _open_cue(span: Span) -> str:
    category = span.label.removeprefix(CUE_PREFIX)
    side, name = CUE_NAMES.get(category, ("avoidance", category or "other"))
    css = f"ca-{category}" if category in CUE_NAMES else "ca-other"
    title = f"CA cue ({side}): {name}" + (f" ({span.rule})" if span.rule else "")
    return _overlay(f"ca-cue ca-{side} {css}", f"text-decoration:underline wavy {CUE_COLOURS[side]};"
                    "text-decoration-thickness:1.5px;text-underline-offset:3px", title)


def _open_tension(span: Span) -> str:
    category = span.label.removeprefix(TENSION_PREFIX)
    title = f"Client tension: {category}" + (f" ({span.rule})" if span.rule else "")
    return _overlay("ca-tension", f"text-decoration:underline dashed {TENSION_COLOUR};text-decoration-thickness:1.5px;"
                    "text-underline-offset:4px", title)


def _open_evidence(span: Span) -> str:
    judge = span.label.removeprefix(EVIDENCE_PREFIX)
    title = f"CA evidence quoted by judge {judge}" + (f": {span.rule}" if span.rule else "")
    return _overlay("ca-evidence", f"outline:2px solid {JUDGED_COLOUR};outline-offset:1px;border-radius:2px", title)


_OPENERS = ((DISTURBING_PREFIX, _open_disturbing), (JUDGED_PREFIX, _open_judged), (AFFECT_PREFIX, _open_affect),
            (CUE_PREFIX, _open_cue), (TENSION_PREFIX, _open_tension), (EVIDENCE_PREFIX, _open_evidence))


def _open_mark(span: Span) -> str:
    for prefix, opener in _OPENERS:
        if span.label.startswith(prefix):
            return opener(span)
    css, colour, name = _style(span.label)
    label_name = name if span.label in LABELS else span.label or name
    title = f"rule: {span.rule} ({label_name})" if span.rule else label_name
    return (f'<mark class="{css}" style="background-color:{colour};padding:0 1px;border-radius:2px" '
            f'title="{_attribute(title)}">')


def highlight_html(text: str, spans: Iterable[object] = (), *, numbered: bool = False) -> str:
    """HTML of ``text`` with each span wrapped in ``<mark class="ld-LABEL" title="rule: RULE (Label)">``.

    Parameters
    ----------
    text
        The raw text (any characters; it is escaped).
    spans
        Objects or dicts with ``start``, ``end`` (character offsets, end exclusive), ``label`` and ``rule``
        (and, optionally, ``weight`` and ``strength``). Empty spans are ignored; out-of-range offsets raise
        ``ValueError``.
    numbered
        Give every piece of a span ``data-mark="k"`` (see the module docstring).

    Returns
    -------
    str
        One line of HTML: ``<div class="ld-text">...</div>``.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    checked = [coerce_span(span, len(text)) for span in spans]
    checked = [span for span in checked if span.end > span.start]
    checked.sort(key=lambda s: (s.start, -s.end, _LABEL_ORDER.get(s.label, len(LABELS)), s.label, s.rule))
    boundaries = sorted({0, len(text), *(s.start for s in checked), *(s.end for s in checked)})
    parts = ['<div class="ld-text" style="line-height:1.7">']
    for left, right in zip(boundaries, boundaries[1:], strict=False):
        piece = escape_text(text[left:right])
        covering = [(k, s) for k, s in enumerate(checked) if s.start <= left and right <= s.end]
        for k, span in covering:
            opened = _open_mark(span)
            parts.append(opened[:-1] + f' data-mark="{k}">' if numbered else opened)
        parts.append(piece)
        parts.append("</mark>" * len(covering))
    parts.append("</div>")
    return "".join(parts)


def _sample(style: str, text: str, css: str) -> str:
    return (f'<mark class="{css}" style="background-color:transparent;color:inherit;{style};padding:0 4px">'
            f"{html.escape(text)}</mark>")


def legend_html(*, disturbing: bool = False, judged: bool = False, affect: bool = False, conflict: bool = False,
                tension: bool = False, evidence: bool = False) -> str:
    """A one-line HTML legend of the highlights (static markup, no data).

    The three distancing colours (LD, Eq. 4) and, with ``disturbing``, the red underline of disturbing content
    (EGM, Eq. 2), with ``judged`` also the dotted underline of the sentences an LLM judge counted disturbing
    content in; with ``affect`` the SA marks (Eq. 1), with ``conflict`` the CA cues (Eq. 3), with ``tension``
    the client's tension on a narrative, with ``evidence`` the quotes of LLM judges. Hovering a highlight in the
    text names its rule, checklist phrase, weight or judge and count.
    """
    items = []
    for css, colour, name in LABELS.values():
        items.append(f'<mark class="{css}" style="background-color:{colour};padding:0 4px;border-radius:2px">'
                     f"{html.escape(name)}</mark>")
    groups = ["LD (distancing): " + " &nbsp; ".join(items)]
    if disturbing:
        dotted = (" &nbsp; " + _sample(f"text-decoration:underline dotted {JUDGED_COLOUR};text-decoration-thickness:"
                                       "2px;text-underline-offset:7px", "sentences an LLM judge counted", "egm-judged")
                  if judged else "")
        groups.append("EGM (disturbing content, lexicon checklist): " + _sample(
            f"border-bottom:3px solid {DISTURBING_COLOUR}", "death, violence, injury, graphic detail, abuse",
            "egm-disturbing") + dotted)
    if affect:
        groups.append("SA (affect, lexicon judge): " + _sample(
            f"border-top:3px solid rgba({AFFECT_COLOUR},0.9)", "affect word or !/?; thicker = stronger", "sa-affect"))
    if conflict:
        groups.append("CA (lexicon cues): " + _sample(
            f"text-decoration:underline wavy {CUE_COLOURS['avoidance']}", "avoidance: solution-giving, compromise, "
            "deflection, reassurance, closure, normalising", "ca-cue ca-avoidance") + " &nbsp; " + _sample(
            f"text-decoration:underline wavy {CUE_COLOURS['exploration']}", "exploration: open question, reflection",
            "ca-cue ca-exploration"))
    if tension:
        groups.append(_sample(f"text-decoration:underline dashed {TENSION_COLOUR}", "client tension", "ca-tension"))
    if evidence:
        groups.append(_sample(f"outline:2px solid {JUDGED_COLOUR}", "CA evidence an LLM judge quoted", "ca-evidence"))
    if len(groups) > 1:
        groups.append("hover a highlight for its rule")
    return '<div class="ld-legend">' + " &nbsp;&nbsp;|&nbsp;&nbsp; ".join(groups) + "</div>"


#: Speakers whose name is shown in bold at the start of a conversation turn.
SPEAKERS: tuple[str, ...] = ("Seeker", "Supporter")


def conversation_turns(text: str) -> list[str]:
    """The non-blank lines of a ``conversation`` column, one turn each, stripped."""
    if not isinstance(text, str):
        raise TypeError(f"conversation must be a string, got {type(text).__name__}")
    return [line.strip() for line in text.splitlines() if line.strip()]


def conversation_html(text: str) -> str:
    """HTML of a multi-turn conversation, one turn per line, the speaker of a known turn in bold.

    Every character of the turns goes through :func:`escape_text` (HTML-escaped and Markdown-neutralised), and
    the result is one line inside one ``<div>`` (a raw HTML block for CommonMark), so no link, image, maths,
    emphasis or Streamlit directive in the conversation can form; only the ``<b>`` of a speaker name in
    :data:`SPEAKERS` and the ``<br>`` between turns are markup.
    """
    lines = []
    for turn in conversation_turns(text):
        speaker, separator, rest = turn.partition(":")
        if separator and speaker in SPEAKERS:
            lines.append(f"<b>{speaker}:</b> {escape_text(rest.strip())}")
        else:
            lines.append(escape_text(turn))
    return '<div class="conversation">' + "<br>".join(lines) + "</div>"
