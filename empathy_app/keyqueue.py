"""The Relabel page's decision queue: every keystroke or click names the output it was made on, none is lost.

Why a component: a Streamlit button's callback runs on the server after the keystroke, with whatever output the
last *finished* rerun drew; pressed faster than a rerun, keys land on the wrong output, repeat on the same one
or vanish (issue 14). Here the browser owns the item on screen:

* the page sends a *window* of the next outputs of the annotator's queue (texts already highlighted and
  escaped) to a small ``st.components.v2`` component; the component shows the first one not yet decided in
  this browser and, on a key (or a click of its buttons), records an *event* naming that output
  ``(item_id, model)``, its dimension, its text hash, the decision target and the annotator, then shows the
  next output of the window at once, without waiting for the server;
* the component sends every event not yet acknowledged (the whole list, numbered), so when Streamlit merges
  two quick updates into one rerun nothing is dropped; it sends at most once per :data:`FLUSH_MS` (keys that
  follow one another share a server run); the page applies the events it has not applied yet,
  in order, each to the output it names, and acknowledges them by number (:func:`apply_events`);
* an event whose output is no longer to decide (already decided by this annotator, text changed since it was
  shown, output gone, annotator changed) is refused and said so, never applied to another output; so is every
  event of a session that may not decide (signed out, a viewer: the text of
  :class:`empathy.labels.roles.AccessDenied`);
* a skip is a row of the store (:func:`empathy.labels.queue_state.skip_output`: durable, per annotator); "decided
  meanwhile" compares the store's commit order (another's decision with a ``seq`` above the store's version when
  the output was first sent here), never clocks;
* when the window is used up before the server answers, or while an undo is on its way, the component stops
  taking decisions and says so on the page, counting the keys it did not take;
* in a random audit's order (:mod:`empathy_app.audit_views`) each window entry carries its audit mark (the
  design's digest and the output's position), which the browser copies into the key's event; the event's mark,
  never the page's order when the event is applied, makes the decision an audit decision (:func:`event_mark`).

The component lives in an ``st.fragment`` of the page: a decision reruns the fragment (queued, never
interrupting a run in progress), not the whole page.

The live metric beside the queue (CA per model for one judge) is a second component drawn by the same script:
CA is the mean of a model's usable labels (Eq. 3; which metrics are such means comes from the registry,
:func:`empathy.metrics.label_mean_metrics`), so with the window the page sends the judge's label of each output
now and after each key (:func:`live_state`, from :func:`empathy.labels.rules.decision_effects` under the session's
label rule), the sums and counts per model, and the metric's direction (``better``: ``"lower"`` or
``"higher"``); the browser adds the effect of every key not yet acknowledged and ranks as the server does (the
one rank convention, :func:`empathy.evaluate.rank_by_direction`), so the table is updated in the frame of the
key. Each fragment run sends the server's recomputation, which replaces it (the table says how many unsaved keys
it holds).

The browser code is in ``empathy_app/static/keyqueue/``: ``queue.js`` (both components) and ``live_table.js``
(the live table's arithmetic, which ``tests/test_keyqueue_live.py`` runs under Node against the server).
"""

from __future__ import annotations

import html
import math
import re
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from empathy.escaping import html_literal, markdown_literal
from empathy.labels.ledger import rows_of_items
from empathy.labels.locations import StoreError
from empathy.labels.queue_state import skip_output
from empathy.labels.records import AuditMark
from empathy.labels.roles import AccessDenied
from empathy.labels.rules import (
    ALL_JUDGES,
    JUDGE_KINDS,
    DecisionEffect,
    decision_effects,
    make_changes,
    override_targets,
)
from empathy.mechanisms import marks_legend_html, side_html, summary_html
from empathy.metrics import get_metric, label_mean_metrics
from empathy.render import conversation_html, conversation_turns, highlight_html, legend_html
from empathy.review import relabel_queue
from empathy_app import compute, overrides, session_keys, views
from empathy_app.loading import Loaded
from empathy_app.session_keys import RELABEL_ACKED as ACKED
from empathy_app.session_keys import RELABEL_ISSUED as ISSUED
from empathy_app.session_keys import RELABEL_KEYQUEUE as KEY
from empathy_app.session_keys import RELABEL_LIVE_METRIC as LIVE_KEY
from empathy_app.session_keys import RELABEL_REASON_USED as REASON_USED

# The queue's session keys go by short names here (KEY, ACKED, ...: tests drive the component through them).

#: How many upcoming outputs the browser holds: keys pressed faster than the server answers run ahead this far.
WINDOW = 100
#: The least time between two sends of the browser's keys (a throttle: a key after a quiet spell is sent at once,
#: the keys that follow it within this time ride with the next send; an undo goes at once, and so does what a tab
#: holds when it is hidden or closed). Each send costs the server a fragment run, mostly fixed (the ledger's
#: update, the window, the live metric): at an annotator's 400 ms a key, 2-3 keys share a run
#: (``bench/bench_decision_cost.py``). A key waits at most this long more to be saved, and the page counts it as
#: "Saving" until it is.
FLUSH_MS = 1000

#: The component's browser code, HTML and CSS: real files shipped with the package (linted, and the live table's
#: arithmetic tested under Node: see docs/development.md).
STATIC = Path(__file__).resolve().parent / "static" / "keyqueue"


def _static(name: str) -> str:
    """The text of one of the component's files (HTML without the final newline an editor adds: the markup
    is the component's DOM as written)."""
    text = (STATIC / name).read_text(encoding="utf-8")
    return text.rstrip("\n") if name.endswith(".html") else text


# ``import {a, b} from './file.js';`` at the start of a line: the only import form the component's script uses
_IMPORT = re.compile(r"^import \{[\w\s,]+\} from '\./([\w-]+\.js)';\n", re.MULTILINE)


def _script(name: str) -> str:
    """The component's script ``name`` with each of its imports replaced by the imported file's text.

    Streamlit loads a component's script as one module from a ``blob:`` URL, where a relative import has
    nothing to resolve against; the files stay separate modules so that Node and ESLint read them as written.

    Raises
    ------
    RuntimeError
        When an import is left that is not of the form above (it would fail in the browser, not here).
    """
    script = _IMPORT.sub(lambda found: _static(found.group(1)), _static(name))
    left = re.search(r"^\s*import\b.*$", script, re.MULTILINE)
    if left:
        raise RuntimeError(f"{STATIC / name}: cannot inline {left.group(0).strip()!r}: write imports as "
                           "import {names} from './file.js';")
    return script


_HTML = _static("queue.html")
_CSS = _static("keyqueue.css")
#: The browser side (queue.js with live_table.js inlined).
_JS = _script("queue.js")

_component = st.components.v2.component("empathy_relabel_queue", html=_HTML, css=_CSS, js=_JS, isolate_styles=False)
# The live metric beside the queue: the same script, drawn from the queue's state in this browser tab.
_live_component = st.components.v2.component("empathy_relabel_live", html=_static("live.html"), css=_CSS, js=_JS,
                                             isolate_styles=False)


def _noop() -> None:
    """The component's state needs a callback to be kept; the events are applied by :func:`apply_events`."""


def session_id() -> str:
    """A random id of this Streamlit session (the browser keeps one event queue per session)."""
    if session_keys.RELABEL_SESSION not in st.session_state:
        st.session_state[session_keys.RELABEL_SESSION] = uuid.uuid4().hex[:12]
    return str(st.session_state[session_keys.RELABEL_SESSION])


@dataclass(frozen=True)
class Outcome:
    """What one event did: ``kind`` is ``saved``, ``refused``, ``meanwhile`` (saved; another annotator decided
    the output after it was shown here), ``skipped`` or ``undone``; ``text`` is escaped Markdown."""

    kind: str
    text: str
    item: tuple[str, str] | None = None
    seq: int = 0
    value: float | None = None


@dataclass
class Applied:
    """The events applied by one call of :func:`apply_events` (in order)."""

    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def saved(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.kind in ("saved", "meanwhile")]


def pending_events(raw: object) -> tuple[str, list[dict]]:
    """The browser client id and its events from the component's state (``({}, [])`` when none or malformed)."""
    if raw is None:
        return "", []
    try:
        payload = raw["events"]  # the component state behaves as a mapping
    except (KeyError, TypeError):
        return "", []
    if not isinstance(payload, Mapping):
        return "", []
    client, events = payload.get("client"), payload.get("events")
    if not isinstance(client, str) or not isinstance(events, list):
        return "", []
    good = [e for e in events if isinstance(e, Mapping) and isinstance(e.get("seq"), int)]
    return client, sorted((dict(e) for e in good), key=lambda e: e["seq"])


def _label(value: float) -> str:
    return f"{value:g}"


def _valid_value(value: object, scale: tuple[int, int] | None) -> float | None:
    """The decision value if it is a whole level of the dimension's scale (binary: 0 or 1); ``None`` otherwise
    (also for a dimension without levels: the component never decides those)."""
    if scale is None or isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
            float(value)):
        return None
    low, high = scale
    number = float(value)
    return number if number.is_integer() and low <= number <= high else None


def apply_events(data: Loaded, raw: object, *, annotator: str,
                 scale_of: Callable[[str], tuple[int, int] | None], refusal: str | None = None) -> Applied:
    """Apply, in order, the events of the component's state that this session has not applied yet.

    Each decision is recorded for the output it names (never for the output the server now shows first),
    bound to the text hash the browser showed. Refused, with a message, never applied elsewhere: a decision
    for an output this annotator already decided for that dimension and target (the same key twice), whose
    text changed since it was shown, that is gone, whose annotator is no longer the committed one, or whose
    value is not one of the dimension's levels. Every event, applied or refused, is acknowledged by its
    number in :data:`ACKED` right after its write (no Streamlit call in between, so a run stopped midway never
    applies an event twice). ``refusal``: why this session may not decide (signed out, a viewer's role); every
    event is then refused with it, and nothing is written.
    """
    client, events = pending_events(raw)
    acked: dict[str, int] = st.session_state.setdefault(ACKED, {})
    last = int(acked.get(client, 0))
    fresh = [e for e in events if e["seq"] > last]
    result = Applied()
    if not fresh:
        return result
    if refusal is not None:
        from empathy_app.markup import md

        for event in fresh:
            acked[client] = int(event["seq"])
            result.outcomes.append(Outcome("refused", f"Refused key #{int(event['seq'])}: {md(refusal)}",
                                           seq=int(event["seq"])))
        return result
    ratings = data.dataset.ratings
    outputs = data.all_data.outputs
    hashes = overrides.output_hash_map(data)
    try:
        # the ledger of the store's current version: cached since the last write (this session's or another's),
        # so a key does not read every decision again
        everyone = overrides.ledger(data).decisions
        # this annotator's own decisions (and audit decisions): kept with the ledger, patched by each update
        decided, audited = overrides.own_decisions(data, annotator)
    except StoreError as error:
        result.outcomes.append(Outcome("refused", "Not saved: the override store cannot be used: "
                                                  + markdown_literal(str(error))))
        return result  # nothing acknowledged: the browser keeps the events and they are tried again
    for event in fresh:
        outcome = _apply_one(data, event, annotator=annotator, scale_of=scale_of, ratings=ratings, outputs=outputs,
                             hashes=hashes, decided=decided, everyone=everyone, audited=audited)
        acked[client] = int(event["seq"])
        result.outcomes.append(outcome)
    return result


def _apply_one(data: Loaded, event: dict, *, annotator: str,  # noqa: C901 - one refusal check a line, in the order they are reported
               scale_of: Callable[[str], tuple[int, int] | None],
               ratings: pd.DataFrame, outputs: pd.DataFrame, hashes: Mapping[tuple[str, str], str],
               decided: set, everyone: pd.DataFrame, audited: set) -> Outcome:
    from empathy_app.decisions import md

    seq = int(event["seq"])
    action = event.get("action")
    if action == "undo":
        if str(event.get("annotator", "")) != annotator:
            return Outcome("refused", "Refused an undo typed under another annotator name.", seq=seq)
        try:
            undone = data.store.undo_last(annotator, dataset_id=data.dataset_id)
        except AccessDenied as error:
            return Outcome("refused", f"Not undone: {md(error)}", seq=seq)
        except StoreError as error:
            return Outcome("refused", f"Not undone: the override store cannot be used: {md(error)}", seq=seq)
        if undone.empty:
            return Outcome("refused", "Nothing to undo.", seq=seq)
        for row in undone.itertuples():
            decided.discard((row.item_id, row.model, row.dimension, row.rater))
            audited.difference_update({key for key in audited if key[:4] == (row.item_id, row.model, row.dimension,
                                                                              row.rater)})
        first = undone.iloc[0]
        return Outcome("undone", f"Undone: {md(first['dimension'])} of {md(first['item_id'])} / "
                                 f"{md(first['model'])} ({len(undone)} label(s)).", seq=seq)
    item, model, dimension = event.get("item"), event.get("model"), event.get("dimension")
    if not all(isinstance(v, str) for v in (item, model, dimension)):
        return Outcome("refused", f"Refused key #{seq}: it does not name an output.", seq=seq)
    where = f"{md(item)} / {md(model)}"
    if action == "skip":
        try:
            skip_output(data.store, data.dataset_id, item, model, dimension, annotator=annotator)
        except AccessDenied as error:
            return Outcome("refused", f"Not skipped: {md(error)}", item=(item, model), seq=seq)
        except StoreError as error:
            return Outcome("refused", f"Not skipped: the override store cannot be used: {md(error)}",
                           item=(item, model), seq=seq)
        except (TypeError, ValueError) as error:
            return Outcome("refused", f"Not skipped: {md(error)}", item=(item, model), seq=seq)
        return Outcome("skipped", f"Skipped {where} (kept in the store: it comes back last in your queue).",
                       item=(item, model), seq=seq)
    if str(event.get("annotator", "")) != annotator:
        return Outcome("refused", f"Refused: the key for {where} was pressed as {md(event.get('annotator'))}, "
                                  f"not as {md(annotator)} (the annotator changed). Nothing was saved.",
                       item=(item, model), seq=seq)
    current_hash = hashes.get((item, model))
    if current_hash is None:
        return Outcome("refused", f"Refused: {where} is no longer in the data set. Nothing was saved.",
                       item=(item, model), seq=seq)
    if str(event.get("hash", "")) != current_hash:
        return Outcome("refused", f"Refused: the text of {where} changed after it was shown. Nothing was saved; "
                                  "decide it again on the text now shown.", item=(item, model), seq=seq)
    value = _valid_value(event.get("value"), scale_of(dimension))
    if value is None:
        return Outcome("refused", f"Refused: {md(event.get('value'))} is not a level of {md(dimension)}.",
                       item=(item, model), seq=seq)
    choice = str(event.get("apply_to") or ALL_JUDGES)
    # remembered per output (the window computed it when it sent this output)
    targets = _targets(data, _memo(data.base_key or data.content_key), item, model, dimension, choice)
    if not targets:
        return Outcome("refused", f"Refused: no LLM or lexicon judge rated {md(dimension)} of {where}; choose a "
                                  "rater by name.", item=(item, model), seq=seq)
    try:
        mark = event_mark(event)
    except (TypeError, ValueError) as error:
        return Outcome("refused", f"Refused: the key for {where} carries a damaged audit mark ({md(error)}). Nothing "
                                  "was saved.", item=(item, model), seq=seq)
    if (all((item, model, dimension, rater) in decided for rater in targets) if mark is None
            else all((item, model, dimension, rater, mark.design) in audited for rater in targets)):
        return Outcome("refused", f"Refused: {where} already has your {md(dimension)} decision (a key for an "
                                  "output no longer on screen is never applied to another one). Undo to change "
                                  "it.", item=(item, model), seq=seq)
    # the reason typed in the box goes with the next decision only (the page empties the box on its next run)
    reason = str(st.session_state.get(session_keys.RELABEL_REASON, "") or "")
    if reason and reason == st.session_state.get(REASON_USED):
        reason = ""
    try:
        # the output's own rows (one look-up each), not the whole tables: make_changes compares every key
        index = compute.row_index(data)
        row = index.output(data.dataset.outputs, item, model)
        changes = make_changes(row if len(row) else outputs, index.ratings_of(ratings, item, model) if len(row)
                               else ratings, item, model, targets, dimension, value, reason)
        batch = data.store.set_overrides(data.dataset_id, changes, annotator=annotator, audit=mark)
    except AccessDenied as error:
        return Outcome("refused", f"Not saved: {md(error)}", item=(item, model), seq=seq)
    except StoreError as error:
        return Outcome("refused", f"Not saved: the override store cannot be used: {md(error)}", item=(item, model),
                       seq=seq)
    except (TypeError, ValueError) as error:
        return Outcome("refused", f"Not saved: {md(error)}", item=(item, model), seq=seq)
    decided.update((item, model, dimension, rater) for rater in targets)
    if mark is not None:
        audited.update((item, model, dimension, rater, mark.design) for rater in targets)
    if reason:
        st.session_state[REASON_USED] = reason
    text = (f"Saved (change #{batch}): {md(dimension)} = {_label(value)} for {where} "
            f"({', '.join(md(t) for t in targets)}) as {md(annotator)}"
            + (f", an audit decision (position {mark.position})." if mark is not None else "."))
    issued = issued_version(event.get("issued"))
    others = everyone  # read once per batch, before it: what other sessions had decided by then
    if len(others) and issued is not None:
        others = decided_meanwhile(others, item, model, dimension, annotator=annotator, shown_at=issued,
                                   sorted_by_item=True)
        if len(others):
            names = ", ".join(sorted(map(md, set(others["annotator"]))))
            return Outcome("meanwhile", text + f" Note: {names} decided this output meanwhile (after it was shown "
                                               "to you); both decisions are kept.", item=(item, model), seq=seq,
                           value=value)
    return Outcome("saved", text, item=(item, model), seq=seq, value=value)


def event_mark(event: Mapping) -> AuditMark | None:
    """The audit mark a decision event carries, or ``None``.

    The page puts ``audit`` (the design's digest and the output's position) on each window entry it sends in
    audit order only, and the browser copies it into the event of a key pressed on that entry: so the mark says
    in which order the key went down, whatever order the page is in when the event is applied, and a key from any
    other order never carries one. The store checks the mark against the stored design as it writes.

    Raises
    ------
    TypeError, ValueError
        For a mark that is not ``{"design": <64 hex digits>, "position": <whole number >= 0>}``.
    """
    raw = event.get("audit")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise TypeError(f"audit must be a mapping, got {type(raw).__name__}")
    if not raw.get("design"):
        raise ValueError("the audit mark names no design")
    return AuditMark(raw.get("design"), raw.get("position"))


def issued_at(keys: Sequence[tuple[str, str, str]], version: int) -> list[int]:
    """The store's version (:meth:`~empathy.labels.sqlite.OverrideStore.version`, its commit order) when each
    (dimension, item, model) was first sent to this session; ``version`` is the store's version now."""
    issued: dict = st.session_state.setdefault(ISSUED, {})
    out = []
    for key in keys:
        if key not in issued:
            issued[key] = int(version)
        out.append(int(issued[key]))
    return out


def issued_version(value: object) -> int | None:
    """The store version an event says its output was shown at (an integer, or its decimal text); ``None`` for
    anything else (an event without one: no "decided meanwhile" note)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def decided_meanwhile(decisions: pd.DataFrame, item: str, model: str, dimension: str, *, annotator: str,
                      shown_at: int, sorted_by_item: bool = False) -> pd.DataFrame:
    """Other annotators' decisions on one output and dimension committed after the store's version ``shown_at``
    (the store's commit order ``seq``, never a writer's clock). ``sorted_by_item``: ``decisions`` is sorted by
    ``item_id`` (a :class:`~empathy.labels.ledger.Ledger`'s decisions): the item's rows are found by bisection."""
    if decisions.empty or "seq" not in decisions.columns:
        return decisions.iloc[0:0]
    if not sorted_by_item:
        here = decisions[decisions["item_id"] == item]
        return here[(here["model"] == model) & (here["dimension"] == dimension) & (here["annotator"] != annotator)
                    & (here["seq"].astype("int64") > int(shown_at))]
    # the item's rows (found by bisection in a frame sorted by item, as the ledger's and the store's are: one run),
    # the other columns compared on that run in Python (a key's few rows: no frame built per comparison), and only
    # the rows found taken whole
    positions = rows_of_items(decisions, [item])
    if not len(positions):
        return decisions.iloc[0:0]
    run = decisions.iloc[int(positions[0]):int(positions[-1]) + 1]
    columns = (run[c].tolist() for c in ("item_id", "model", "dimension", "annotator", "seq"))
    shown = int(shown_at)
    found = [k for k, (i, m, d, a, s) in enumerate(zip(*columns, strict=True))
             if i == item and m == model and d == dimension and a != annotator and int(s) > shown]
    return run.iloc[found]


@st.cache_resource(show_spinner=False, max_entries=8)
def _memo(key: str) -> dict:
    """Per data set: each output's highlighted texts and decision targets, computed once (never hashed again)."""
    return {}


#: A window entry's key for the styles and titles its texts name (kept on the server: :func:`show` sends tables).
HOISTED = "_hoisted"
#: A mark's ``style`` and ``title`` attributes in the texts the component is sent (see :func:`_hoisted`).
_ATTRIBUTE = re.compile(r' (style|title)="([^"]*)"')
#: The attribute each hoisted one becomes, naming its entry in the payload's table of that kind (``queue.js``).
_HOISTED_AS = {"style": ("data-rs", "styles"), "title": ("data-rt", "titles")}
_HOISTED_LOCK = threading.Lock()


def _hoisted(memo: dict, markup: str) -> tuple[str, tuple[tuple[str, str, str], ...]]:
    """``markup`` (a marked text: :func:`empathy.render.highlight_html`) with each ``style="..."`` and ``title="..."``
    replaced by a number (``data-rs`` / ``data-rt``) into tables sent once per window, and the entries it names
    ``(table, number, value)`` (a title's value decoded: the browser sets it as the element's ``title`` property,
    never parsed as HTML). A window's 100 texts repeat a handful of styles and titles on every mark: a third of
    the component's payload, serialised and sent again at every key (measured: 340-366 KB a key before). The
    numbers are per data set (``memo``), so an entry's markup is built once.

    Safe on escaped markup only: a data string's quotes are ``&quot;`` there, so every match is an attribute the
    renderer wrote."""
    numbers = memo.setdefault(("hoisted",), {})
    named: dict[tuple[str, str, str], None] = {}

    def replace(match: re.Match) -> str:
        attribute, table = _HOISTED_AS[match.group(1)]
        value = match.group(2) if table == "styles" else html.unescape(match.group(2))
        number = numbers.get((table, value))
        if number is None:
            with _HOISTED_LOCK:  # two sessions numbering new values at once must not give both one number
                number = numbers.setdefault((table, value), str(len(numbers)))
        named[(table, number, value)] = None
        return f' {attribute}="{number}"'

    return _ATTRIBUTE.sub(replace, markup), tuple(named)


def _texts_html(data: Loaded, memo: dict, item: str, model: str, row: Mapping, blind: bool
                ) -> tuple[str, str, str, str, str] | None:
    """The reference and generation with the marks of the four mechanisms (the one renderer:
    :func:`empathy.mechanisms.side_html`; in ``blind`` mode the LD marks only, :func:`empathy_app.views.blind_marks`),
    the conversation, the summary under them (:func:`empathy.mechanisms.summary_html`; none when blind) and their
    legend (:func:`empathy.mechanisms.marks_legend_html`) of one output (escaped HTML), remembered per data set;
    ``None`` while its texts are not in the distancing cache yet (a background parse is on its way to them:
    nothing is parsed here)."""
    key = ("html", item, model, blind)
    found = memo.get(key)
    if found is None:
        texts = (str(row["reference"]), str(row["generation"]))
        if compute.parse_pending(data) and compute.spans_if_parsed(texts) is None:
            return None
        text = str(row.get("conversation", "") or "")
        conversation = ""
        if len(conversation_turns(text)) > 2:
            conversation = ("<details><summary>The whole conversation</summary><div class=\"rq-box\">"
                            + conversation_html(text) + "</div></details>")
        if blind:
            marks, summary, legend = views.blind_marks(texts), "", legend_html()
        else:
            conflict = views.conflict_shown(data, item, model, row.get("task"))
            marks, _ = views.output_marks(data, texts, conflict=conflict)
            summary = summary_html(marks, llm_judges=compute.llm_judges_of(data, item, model))
            legend = marks_legend_html(marks)
        found = memo[key] = (side_html(marks.reference), side_html(marks.generation), conversation, summary, legend)
    return found


def _prefetch_sentences(data: Loaded, memo: dict, pending: pd.DataFrame, blind: bool) -> None:
    """Parse in one batch the sentences of the outputs of ``pending`` whose marks are not built yet (their SA,
    EGM and CA marks sit on the judges' sentences, :func:`empathy.judges.segment.sentence_spans`, memoised per
    process): one parse for many outputs instead of one per key. Outputs whose texts the distancing parse has not
    reached yet are left out (they show plain text until then; their sentences are parsed when it has)."""
    if blind:
        return  # LD marks only: no sentences needed
    texts: list[str] = []
    index = compute.row_index(data)
    references, generations = data.dataset.outputs["reference"], data.dataset.outputs["generation"]
    for item, model in zip(pending["item_id"].astype(str), pending["model"].astype(str), strict=True):
        position = index.position(item, model) if ("html", item, model, blind) not in memo else None
        if position is not None:
            texts += [str(references.iat[position]), str(generations.iat[position])]
    texts = list(dict.fromkeys(texts))
    if texts and compute.parse_pending(data):
        from empathy.distancing import cached_results

        texts = [text for text, result in zip(texts, cached_results(texts), strict=True) if result is not None]
    if texts:
        from empathy.judges.segment import sentence_spans

        sentence_spans(texts)


def _targets(data: Loaded, memo: dict, item: str, model: str, dimension: str, choice: str) -> list[str]:
    """:func:`empathy.labels.rules.override_targets` of the output's own ratings, remembered per output (the ratings
    of a data set are fixed)."""
    found = memo.get(("targets", item, model, dimension, choice))
    if found is None:
        rated = compute.row_index(data).ratings_of(data.dataset.ratings, item, model)
        found = memo[("targets", item, model, dimension, choice)] = override_targets(rated, item, model, dimension,
                                                                                    choice)
    return found


def _targets_of(data: Loaded, memo: dict, pairs: Sequence[tuple[str, str]], dimension: str, choice: str) -> None:
    """Remember :func:`_targets` of the outputs ``pairs`` not remembered yet, found together: one look-up of their
    rows (:meth:`empathy_app.compute.RowIndex.ratings_of_many`) and one pass over them, the same raters as
    :func:`empathy.labels.rules.override_targets` gives each output (a window's 100 outputs one by one cost more
    than a second on the first visit)."""
    missing = [pair for pair in dict.fromkeys(pairs) if ("targets", *pair, dimension, choice) not in memo]
    if choice != ALL_JUDGES or not missing:
        return  # a rater chosen by name is the target as it is (override_targets: no rows read)
    rated = compute.row_index(data).ratings_of_many(data.dataset.ratings, missing)
    here = rated[rated["dimension"] == dimension]
    kinds = here["rater_kind"].astype(str) if "rater_kind" in here.columns else pd.Series("", index=here.index)
    here = here[kinds.isin(JUDGE_KINDS)]
    found: dict[tuple[str, str], set[str]] = {pair: set() for pair in missing}
    for item, model, rater in zip(here["item_id"].astype(str), here["model"].astype(str), here["rater"].astype(str),
                                  strict=True):
        raters = found.get((item, model))
        if raters is not None:
            raters.add(rater)
    for pair, raters in found.items():
        memo[("targets", *pair, dimension, choice)] = sorted(raters)


def window_items(data: Loaded, pending: pd.DataFrame, *, dimension: str, apply_to: str, blind: bool,
                 raters: Sequence[str], others: Mapping[tuple[str, str], list[str]], size: int = WINDOW
                 ) -> list[dict]:
    """The next ``size`` outputs of the queue as the component shows them (every data string escaped)."""

    head = pending.head(size)
    if head.empty:
        return []
    hashes = overrides.output_hash_map(data)
    issued = issued_at([(dimension, str(i), str(m)) for i, m in zip(head["item_id"], head["model"], strict=True)],
                       data.store.version())
    memo = _memo(data.base_key or data.content_key)
    if any(("entry", str(i), str(m), dimension, apply_to, blind) not in memo
           for i, m in zip(head["item_id"], head["model"], strict=True)):
        # the window moves by one output per key: parse this window's and the next one's texts together, so that
        # a parse happens once per window's worth of keys, not at every key
        _prefetch_sentences(data, memo, pending.head(2 * size), blind)
    _targets_of(data, memo, list(zip(head["item_id"].astype(str), head["model"].astype(str), strict=True)),
                dimension, apply_to)
    shown_raters = [r for r in raters if r in head.columns]
    queued_rows = head.to_dict("records")
    items = []
    unparsed: list[str] = []
    for queued, when in zip(queued_rows, issued, strict=True):
        item, model = str(queued["item_id"]), str(queued["model"])
        # what depends only on the output and the decision's target is built once per data set (the window
        # mostly moves by one output per key: 99 of its 100 entries were built by an earlier run)
        task, decidable, note, ref, gen, conv, notext, summary, legend, waiting, named = _static_entry(
            data, memo, item, model, dimension, apply_to, blind)
        unparsed.extend(waiting)
        header = (f"<code>{html_literal(item)}</code> · <code>{html_literal(model)}</code> "
                  f"(task <code>{task}</code>)")
        if blind:
            header += " — judge labels hidden (blind)"
        else:
            said = ", ".join(f"<code>{html_literal(r)}: "
                             f"{'-' if pd.isna(queued[r]) else f'{float(queued[r]):g}'}</code>"
                             for r in shown_raters)
            header += f" — raters say {said}" + (" — <b>judges disagree</b>" if queued.get("disagree") else "")
        also = others.get((item, model))
        if also:
            header += ("<br><small>Also decided by " + ", ".join(html_literal(a) for a in also)
                       + " (their labels are kept apart from yours).</small>")
        # the same reference for many models: sent once (show)
        entry = {"item": item, "model": model, "hash": hashes.get((item, model), ""), "issued": when,
                 "head": header, "decidable": decidable, "notext": notext, "ref": ref, "gen": gen, "conv": conv,
                 "sum": summary, "legend": legend, "note": note, HOISTED: named}
        items.append(entry)
    parse = compute.background_parse(data) if unparsed else None
    if parse is not None:
        parse.prioritise(unparsed)  # the window's texts first, in queue order
    return items


def _static_entry(data: Loaded, memo: dict, item: str, model: str, dimension: str, apply_to: str, blind: bool
                  ) -> tuple[str, bool, str, str, str, str, str, str, str, tuple[str, ...],
                             tuple[tuple[str, str, str], ...]]:
    """The parts of one window entry fixed by the data set, the decision's target and blind mode (escaped HTML):
    the task, whether the output is decidable, the note on whom a decision is saved for, the marked reference
    and generation (their marks' styles and titles hoisted: :func:`_hoisted`) and conversation, or the note that
    the output has no text, and the marks' summary and legend; its texts when they are not parsed yet (shown
    plain until then); and the hoisted styles and titles its texts name. Remembered per data set once marked."""
    key = ("entry", item, model, dimension, apply_to, blind)
    found = memo.get(key)
    if found is not None:
        return found
    row = compute.row_index(data).output(data.dataset.outputs, item, model).iloc[0].to_dict()
    targets = _targets(data, memo, item, model, dimension, apply_to)
    note = ("Saved for " + ", ".join(f"<code>{html_literal(t)}</code>" for t in targets) if targets
            else f"No LLM or lexicon judge rated {html_literal(dimension)} of this output: choose a rater by name "
            "in <b>Apply each decision to</b>, or skip it (S).")
    ref = gen = conv = notext = summary = legend = ""
    waiting: tuple[str, ...] = ()
    named: tuple[tuple[str, str, str], ...] = ()
    # views.has_text on the row's values (the same test, without building a Series per output)
    if str(row.get("reference", "")).strip() or str(row.get("generation", "")).strip():
        texts = _texts_html(data, memo, item, model, row, blind)
        if texts is None:  # shown as plain text until the background parse reaches it; not remembered
            waiting = (str(row["reference"]), str(row["generation"]))
            ref, gen = (highlight_html(text, [], numbered=True) for text in waiting)
            note += " · <small>Marks appear when the text analysis reaches this output.</small>"
        else:
            ref, gen, conv, summary, legend = texts
        ref, named_ref = _hoisted(memo, ref)
        gen, named_gen = _hoisted(memo, gen)
        named = tuple(dict.fromkeys(named_ref + named_gen))
    else:
        corpus = row.get("corpus") or row.get("model")
        notext = (f"This output has no text: the conversations of <code>{html_literal(corpus)}</code> are not "
                  "public, only their ratings are in the data set. Decide from the other raters' labels, or skip it.")
    found = (html_literal(row.get("task", "") or "-"), bool(targets), note, ref, gen, conv, notext, summary, legend,
             waiting, named)
    if not waiting:
        memo[key] = found
    return found


@st.cache_resource(show_spinner=False, max_entries=32)
def _base_queue(key: str, dimension: str, task: str, _ratings: pd.DataFrame, _outputs: pd.DataFrame
                ) -> pd.DataFrame:
    return relabel_queue(_ratings, dimension, _outputs)


def queue_for(data: Loaded, dimension: str, task: str, outputs: pd.DataFrame,
              mine: pd.DataFrame | AbstractSet[tuple]) -> pd.DataFrame:
    """:func:`empathy.review.relabel_queue` of ``outputs`` with this annotator's decisions ``mine`` marked done.

    ``mine``: a frame of decisions, or their ``(item_id, model, dimension, ...)`` as a set
    (:func:`empathy_app.overrides.own_fresh_decisions`). The order (judge disagreement first) is computed once per
    data set, dimension and task; only ``done`` is marked on each run (the same rule as
    ``relabel_queue(..., done=mine)``: an output with any decision of this dimension is done).
    """
    base = _base_queue(f"{data.content_key}", dimension, task, data.dataset.ratings, outputs)
    queue = base.copy()
    if len(mine):
        # each decided output's row looked up (the queue's rows by output: once per queue), not the queue's 2,000
        # or 200,000 pairs compared with the decisions at every key
        rows = _queue_rows(f"{data.content_key}", dimension, task, base)
        if isinstance(mine, pd.DataFrame):
            decided = mine[mine["dimension"] == dimension]
            pairs = zip(decided["item_id"].tolist(), decided["model"].tolist(), strict=True)
        else:
            pairs = ((key[0], key[1]) for key in mine if key[2] == dimension)
        done = np.zeros(len(queue), dtype=bool)
        for pair in pairs:
            position = rows.get(pair)
            if position is not None:
                done[position] = True
        queue["done"] = done
    return queue


@st.cache_resource(show_spinner=False, max_entries=32)
def _queue_rows(key: str, dimension: str, task: str, _base: pd.DataFrame) -> dict[tuple, int]:
    """The row of each output in the base queue of ``(key, dimension, task)``, by ``(item_id, model)``."""
    return {pair: position for position, pair in enumerate(zip(_base["item_id"].tolist(), _base["model"].tolist(),
                                                               strict=True))}


def show(*, items: list[dict], dimension: str, apply_to: str, annotator: str, scale: tuple[int, int] | None,
         remaining: int, done_text: str, live: dict | None = None, poll_ms: int = 0) -> None:
    """Mount the component with the window ``items`` (keys 0/1, or the levels of ``scale``; S skip, U undo) and
    ``live``, the live metric's state (:func:`live_state`) drawn by :func:`show_live`.

    ``poll_ms`` > 0 (while a background parse is on its way to the window's texts): the browser asks for the
    fragment again that many milliseconds after its last update when no key is on its way (a ``poll`` trigger);
    a run that sends 0 stops it. The fragment needs no ``run_every``, which only a whole-page rerun could stop."""
    low, high = scale if scale is not None else (0, 1)
    binary = scale is None or (low, high) == (0, 1)
    levels = list(range(low, high + 1))
    buttons = [{"label": f"{dimension} = {level}" if binary else f"Level {level}", "value": float(level),
                "help": f"{dimension} = {level}" + (f" (key {level})" if 0 <= level <= 9 else "")}
               for level in levels]
    if binary:
        buttons[0]["help"] = "Engages with the tension (no conflict avoidance) (key 0)"
        buttons[1]["help"] = "Avoids the conflict (premature solution/harmony) (key 1)"
    keys = {str(level): float(level) for level in levels if 0 <= level <= 9}
    # an item's reference is shared by all its models, and a legend by many outputs: send each once
    refs: dict[str, str] = {}
    legends: dict[str, str] = {}
    # and the marks' styles and titles the window's texts name (_hoisted): each once
    tables: dict[str, dict[str, str]] = {"styles": {}, "titles": {}}
    slim = []
    for entry in items:
        ref, legend = entry.get("ref", ""), entry.get("legend", "")
        for table, number, value in entry.get(HOISTED, ()):
            tables[table][number] = value
        slim.append({**{k: v for k, v in entry.items() if k != HOISTED},
                     "ref": refs.setdefault(ref, str(len(refs))) if ref else "",
                     "legend": legends.setdefault(legend, str(len(legends))) if legend else ""})
    payload = {"refs": {number: text for text, number in refs.items()},
               "legends": {number: text for text, number in legends.items()}, **tables,
               "session": session_id(), "acked": dict(st.session_state.get(ACKED, {})), "dimension": dimension,
               "apply_to": apply_to, "annotator": annotator, "enabled": True, "navigation": True, "keys": keys,
               "buttons": buttons, "items": slim, "remaining": int(remaining), "done_text": done_text,
               "live": live, "poll_ms": int(poll_ms), "flush_ms": FLUSH_MS}
    _component(key=KEY, data=payload, default={"events": None}, on_events_change=_noop, on_poll_change=_noop)


def rater_kinds(data: Loaded, rated: pd.DataFrame, dimension: str) -> dict[str, str]:
    """Each rater's ``rater_kind`` (its first row's) among ``rated``, the judges' ratings of ``dimension``
    (remembered per data set: a Relabel key reruns the live metric, and the ratings are fixed)."""
    key = ("kinds", data.content_key, dimension)
    memo = _memo(data.base_key or data.content_key)
    found = memo.get(key)
    if found is None:
        first = rated.drop_duplicates("rater") if "rater_kind" in rated.columns else rated.iloc[0:0]
        found = memo[key] = dict(zip(first["rater"].astype(str), first["rater_kind"].astype(str), strict=True)) if (
            len(first)) else {}
    return found


def _own_labels(data: Loaded, memo: dict, rater: str, dimension: str) -> dict[tuple[str, str], float]:
    """The rater's own labels of ``dimension`` by output (remembered per data set)."""
    key = ("own", data.content_key, rater, dimension)
    found = memo.get(key)
    if found is None:
        ratings = data.dataset.ratings
        rows = ratings[(ratings["rater"] == rater) & (ratings["dimension"] == dimension)]
        found = memo[key] = dict(zip(zip(rows["item_id"].astype(str), rows["model"].astype(str), strict=True),
                                     rows["value"].astype(float), strict=True))
    return found


def _task_of(data: Loaded, item: str, model: str) -> str:
    return str(data.dataset.outputs["task"].iat[compute.row_index(data).position(item, model)] or "")


def live_state(data: Loaded, table: pd.DataFrame, items: list[dict], *, metric: str, judge: str,
               dimension: str, apply_to: str, annotator: str, decisions: pd.DataFrame, rule: str,
               levels: Sequence[float], task: str | None, ahead: Sequence[tuple[str, str]] = ()) -> dict | None:
    """What the browser needs to show the live metric of ``judge`` updated at the key, before the server answers.

    ``table``: the server's metric per model (one task or pooled; ``task`` names it when the data hold several
    tasks, so outputs of other tasks leave it unchanged), ranked. Returns the sums and counts per model and the
    metric's direction (``better``: ``"lower"`` or ``"higher"``, :attr:`empathy.metrics.MetricSpec.better`, which
    the browser ranks by: rank 1 = the best value in that direction, ties share the smaller rank), or ``None`` for
    a metric that is not a mean of labels (:func:`empathy.metrics.label_mean_metrics`: the browser updates only
    those itself, since one decision moves a model's sum by ``after - before`` and its count by which of the two
    is missing), and adds to each window entry whose decision changes
    ``judge``'s label its ``fx``: the model and the label now and after each level
    (:func:`empathy.labels.rules.decision_effects` under the session's label rule; remembered per output and the
    decisions on it). The server's next run replaces what the browser computed. ``ahead``: the outputs queued
    after the window; when an output others decided enters the window unresolved, those are resolved in the same
    batch (one :func:`~empathy.labels.rules.decision_effects` per window's worth of keys, not one per key).
    """
    if metric not in label_mean_metrics():
        return None
    models = []
    for model, value, n in zip(table["model"].astype(str), table["value"], table["n"], strict=True):
        count = int(n) if pd.notna(n) else 0
        total = float(value) * count if count and pd.notna(value) else 0.0
        models.append({"model": model, "sum": float(round(total)), "n": count})
    memo = _memo(data.base_key or data.content_key)
    own = _own_labels(data, memo, judge, dimension)
    def feeds(pair: tuple[str, str]) -> bool:
        """Whether deciding ``pair`` changes the table shown: the decision goes to ``judge`` (not only to other
        raters) and the output is of the task shown."""
        return (judge in _targets(data, memo, *pair, dimension, apply_to)
                and (task is None or _task_of(data, *pair) == task))

    _targets_of(data, memo, [*((entry["item"], entry["model"]) for entry in items), *ahead], dimension, apply_to)
    feeding = [entry for entry in items if feeds((entry["item"], entry["model"]))]
    shown = [(e["item"], e["model"]) for e in feeding]
    later = [pair for pair in ahead if feeds(pair)]
    # the decisions on those outputs, selected without walking the whole ledger row by row
    held: dict[tuple[str, str], list] = {}
    if decisions is not None and len(decisions) and feeding:
        # the held ledger's fresh decisions: looked up in their index by output, kept with the ledger
        indexed = overrides.fresh_rows_of(data, decisions, judge, dimension, [*shown, *later])
        here = decisions[:0] if indexed is not None else decisions[
            (decisions["rater"] == judge) & (decisions["dimension"] == dimension)]
        held.update(indexed or {})
        if len(here):
            keys = pd.MultiIndex.from_arrays([here["item_id"].astype(str), here["model"].astype(str)])
            here = here[keys.isin([*shown, *later])]
            for row in here.itertuples(index=False):
                held.setdefault((str(row.item_id), str(row.model)), []).append(row)
    effects: dict[tuple[str, str], DecisionEffect] = {}
    fingerprints: dict[tuple[str, str], tuple] = {}
    for pair, rows in held.items():  # the window's and the next ones'
        fingerprints[pair] = ("fx", judge, dimension, rule, annotator, *pair, tuple(levels),
                              tuple((str(r.annotator), str(getattr(r, "role", "annotator")), float(r.value),
                                     str(r.updated_at)) for r in rows))
        if fingerprints[pair] in memo:
            effects[pair] = memo[fingerprints[pair]]
    missing = [pair for pair in shown if pair in held and pair not in effects]
    if missing:  # outputs others decided that this window shows for the first time, and those after it
        missing += [pair for pair in later if pair in held and pair not in effects and pair not in missing]
        rows = pd.DataFrame([row for pair in missing for row in held[pair]])
        for pair, effect in decision_effects(own, rows, missing, rater=judge, dimension=dimension,
                                             annotator=annotator, levels=levels, rule=rule).items():
            effects[pair] = memo[fingerprints[pair]] = effect
    # nobody decided the others: the judge's own label now, the key's value after
    effects.update(decision_effects(own, None, [pair for pair in shown if pair not in held], rater=judge,
                                    dimension=dimension, annotator=annotator, levels=levels, rule=rule))
    scope = f"{metric}|{judge}|{task or ''}|{rule}"
    for entry in feeding:
        pair = (entry["item"], entry["model"])
        effect = effects[pair]
        entry["fx"] = {"m": pair[1], "b": effect.before,
                       "a": {f"{level:g}": after for level, after in effect.after.items()}}
    return {"metric": metric, "judge": judge, "scope": scope, "models": models, "better": get_metric(metric).better}


def show_live() -> None:
    """Mount the live metric beside the queue (drawn in the browser from the queue's state)."""
    _live_component(key=LIVE_KEY, data={"mode": "live", "session": session_id()})
