"""Exhibits: outputs pinned with a note, shown side by side with their labels and what their override changes.

An exhibit is one (item, model) output of a data set with a note. The ordered list of a data set lives in the
override store (:func:`empathy.labels.exhibit_list.pin_exhibit`, ``exhibits`` table). :func:`exhibit_view`
gathers what a demo shows about one output: the reference and generation with the distancing spans, every
judge's label (and the human override, if any), and the **metric delta** the override causes: each metric of
the data set evaluated by the metric plan (:class:`empathy.review.Recompute`, the same path as every results
table) with all applied overrides, and again with all of them *except* this output's, so the delta is this
output's own contribution given everything else the team decided. Only rows that change are kept.

:func:`exhibit_html` renders one exhibit as an HTML fragment in the style of :mod:`empathy.render` (every data
string through :func:`empathy.escaping.html_literal`; the texts with the marks of all four mechanisms, LD, EGM,
SA and CA, through the one renderer :func:`empathy.mechanisms.mechanisms_html`, with its legend);
:func:`export_html` wraps a list of them into one self-contained page (inline CSS, no script, no external
resource, so it opens offline on a projector); :func:`export_png` screenshots that page with headless
Chromium when one is installed.

The bundled demo ships a curated list (``data/exhibits.csv``: item_id, model, mechanism, note), one clear
example of each mechanism, read by :func:`read_curated`.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from empathy import metrics as m
from empathy.escaping import html_literal
from empathy.io import DataError, read_table
from empathy.mechanisms import MechanismMarks, mechanism_marks, mechanisms_html
from empathy.metrics import DIMENSIONS

#: The curated exhibit list of the bundled demo.
CURATED_FILENAME = "exhibits.csv"
CURATED_COLUMNS: tuple[str, ...] = ("item_id", "model", "mechanism", "note")
#: The mechanisms a curated exhibit can illustrate: the registry's metrics (the paper's four at import;
#: :func:`read_curated` reads the registry when it runs, so a registered metric is a mechanism too).
MECHANISMS: tuple[str, ...] = tuple(m.METRIC_SPECS)
DELTA_COLUMNS: tuple[str, ...] = ("task", "metric", "scorer", "model", "without", "with", "delta")
LABEL_COLUMNS: tuple[str, ...] = ("dimension", "rater", "judge", "label", "overridden")

#: texts -> distancing spans of each text (objects or dicts with start, end, label, rule).
SpanFinder = Callable[[Sequence[str]], Sequence[Sequence[object]]]


def distancing_spans(texts: Sequence[str]) -> list[list[object]]:
    """Spans of the spaCy distancing detectors (:mod:`empathy.distancing`, cached on disk)."""
    from empathy.distancing import analyze

    return [list(result.spans) for result in analyze(list(texts))]


@dataclass(frozen=True)
class ExhibitView:
    """Everything an exhibit shows about one output."""

    item_id: str
    model: str
    task: str
    note: str
    reference: str
    generation: str
    spans: tuple[Sequence[object], Sequence[object]] = field(repr=False)
    #: one row per (dimension, rater): :data:`LABEL_COLUMNS` (judge = the judge's value, label = the value in
    #: effect, overridden = a human decision replaced the judge's)
    labels: pd.DataFrame = field(repr=False)
    #: the metric rows this output's override changes: :data:`DELTA_COLUMNS` (empty without an override)
    delta: pd.DataFrame = field(repr=False)
    #: the marks of the four mechanisms on the two texts (:func:`empathy.mechanisms.mechanism_marks`)
    marks: MechanismMarks = field(repr=False)
    #: the LLM judges that rated this output (the SA and CA marks are the lexicon's, not theirs: said under the texts)
    llm_judges: tuple[str, ...] = ()

    @property
    def overridden(self) -> bool:
        return bool(self.labels["overridden"].any()) if len(self.labels) else False


def _key_mask(frame: pd.DataFrame, item_id: str, model: str) -> pd.Series:
    return (frame["item_id"].astype(str) == str(item_id)) & (frame["model"].astype(str) == str(model))


def _labels(judge_ratings: pd.DataFrame, mine: pd.DataFrame, item_id: str, model: str) -> pd.DataFrame:
    base = judge_ratings[_key_mask(judge_ratings, item_id, model)][["dimension", "rater", "value"]]
    base = base.rename(columns={"value": "judge"})
    decided = mine[["dimension", "rater", "value"]].drop_duplicates(["dimension", "rater"], keep="last")
    labels = base.merge(decided, on=["dimension", "rater"], how="outer")
    labels["overridden"] = labels["value"].notna() & _has_override(labels, decided)
    labels["label"] = labels["value"].where(labels["overridden"], labels["judge"])
    # the paper's order of the dimensions (e_ref, e_gen, u_ref, u_gen, ca), then any other, then by rater
    order = {name: position for position, name in enumerate(DIMENSIONS)}
    labels = labels.assign(_order=[order.get(d, len(order)) for d in labels["dimension"]])
    labels = labels.sort_values(["_order", "dimension", "rater"], kind="stable").reset_index(drop=True)
    return labels[list(LABEL_COLUMNS)]


def _has_override(labels: pd.DataFrame, decided: pd.DataFrame) -> pd.Series:
    keys = set(zip(decided["dimension"], decided["rater"], strict=True))
    return pd.Series([(d, r) in keys for d, r in zip(labels["dimension"], labels["rater"], strict=True)],
                     index=labels.index, dtype=bool)


def metric_delta(recompute: object, overrides: pd.DataFrame | None, item_id: str, model: str) -> pd.DataFrame:
    """Each metric with every applied override minus the same without this output's overrides.

    ``recompute`` is an :class:`empathy.review.Recompute` (the data set's metric plan); ``overrides`` the
    applied overrides (item_id, model, rater, dimension, value). Returns the changed rows,
    :data:`DELTA_COLUMNS`; empty when the output has no override.
    """
    if overrides is None or overrides.empty or not _key_mask(overrides, item_id, model).any():
        return pd.DataFrame(columns=list(DELTA_COLUMNS))
    others = overrides[~_key_mask(overrides, item_id, model)]
    keys = ["task", "metric", "scorer", "model"]
    with_it = recompute.report(overrides).table[[*keys, "value"]].rename(columns={"value": "with"})
    without = recompute.report(others if len(others) else None).table[[*keys, "value"]].rename(
        columns={"value": "without"})
    # overrides only add or change ratings, so every group of "without" is in "with"; a left merge keeps the
    # results table's order (paper order of the metrics)
    both = with_it.merge(without, on=keys, how="left")
    both["delta"] = both["with"] - both["without"]
    changed = (both["with"].isna() != both["without"].isna()) | (both["delta"].abs() > 1e-12)
    return both[changed][list(DELTA_COLUMNS)].reset_index(drop=True)


#: The task whose outputs are judged on CA (the paper's counseling rows): their exhibits show the CA marks.
CONFLICT_TASK = "counseling"


def exhibit_view(outputs: pd.DataFrame, judge_ratings: pd.DataFrame, overrides: pd.DataFrame | None,
                 item_id: str, model: str, *, note: str = "", recompute: object | None = None,
                 spans: Sequence[Sequence[object]] | SpanFinder | None = None,
                 sentence_spans: Sequence[Sequence[tuple[int, int]]] | None = None) -> ExhibitView:
    """The exhibit of output ``(item_id, model)``.

    Parameters
    ----------
    outputs, judge_ratings
        The data set's outputs and judge-only ratings (:class:`empathy.io.Dataset`).
    overrides
        The applied human overrides (``Ledger.applied``), or ``None``.
    recompute
        The data set's :class:`empathy.review.Recompute`; without it the delta is not computed (empty).
    spans
        The two texts' spans (reference, generation), or a :data:`SpanFinder`; default
        :func:`distancing_spans`.
    sentence_spans
        The sentences of the two texts the judges rate (for the EGM and SA marks); default the spaCy parse of a
        judge run. CA marks are drawn on outputs of the ``counseling`` task and on any output with a ``ca`` label.
    """
    row = outputs[_key_mask(outputs, item_id, model)]
    if row.empty:
        raise ValueError(f"output ({item_id}, {model}) is not in the data set")
    row = row.iloc[0]
    texts = (str(row["reference"]), str(row["generation"]))
    if spans is None or callable(spans):
        spans = (spans or distancing_spans)(list(texts))
    if len(spans) != 2:
        raise ValueError(f"spans must hold two lists (reference, generation), got {len(spans)}")
    mine = (overrides[_key_mask(overrides, item_id, model)] if overrides is not None and len(overrides)
            else pd.DataFrame(columns=["dimension", "rater", "value"]))
    delta = (metric_delta(recompute, overrides, item_id, model) if recompute is not None
             else pd.DataFrame(columns=list(DELTA_COLUMNS)))
    task = str(row.get("task", "") or "")
    labels = _labels(judge_ratings, mine, item_id, model)
    marks = mechanism_marks(texts[0], texts[1], distancing=spans, sentence_spans=sentence_spans,
                            conflict=task == CONFLICT_TASK or bool((labels["dimension"] == "ca").any()))
    return ExhibitView(item_id=str(item_id), model=str(model), task=task, note=str(note), reference=texts[0],
                       generation=texts[1], spans=(list(spans[0]), list(spans[1])), labels=labels, delta=delta,
                       marks=marks, llm_judges=_llm_judges(judge_ratings, item_id, model))


def _llm_judges(judge_ratings: pd.DataFrame, item_id: str, model: str) -> tuple[str, ...]:
    if "rater_kind" not in judge_ratings.columns:
        return ()
    mine = judge_ratings[_key_mask(judge_ratings, item_id, model)]
    return tuple(sorted(set(mine.loc[mine["rater_kind"].astype(str) == "llm", "rater"].astype(str))))


# ------------------------------------------------------------------------------------------------ HTML

EXHIBIT_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:24px;color:#111827;
background:#fff}
h1{font-size:1.4rem;margin:0 0 16px}
section.exhibit{border:1px solid #d1d5db;border-radius:8px;padding:16px 20px;margin:0 0 28px;
page-break-after:always;break-after:page}
.exhibit h2{font-size:1.15rem;margin:0 0 4px}
.exhibit .meta{color:#4b5563;font-size:.9rem;margin-bottom:8px}
.exhibit .note{background:#f3f4f6;border-left:4px solid #6366f1;padding:8px 12px;margin:8px 0 12px;
white-space:pre-wrap}
.exhibit .sides{display:flex;gap:16px}
.exhibit .side{flex:1 1 0;border:1px solid #e5e7eb;border-radius:6px;padding:8px 12px}
.exhibit .side h3{font-size:.95rem;margin:0 0 6px}
.exhibit table{border-collapse:collapse;margin:10px 0;font-size:.9rem}
.exhibit th,.exhibit td{border:1px solid #e5e7eb;padding:3px 8px;text-align:left}
.exhibit td.num{text-align:right;font-variant-numeric:tabular-nums}
.exhibit .over{font-weight:600;color:#b91c1c}
.ld-legend{margin:6px 0}
.exhibit .mechanism-summary p{margin:4px 0;color:#374151;font-size:.9rem}
footer{color:#6b7280;font-size:.8rem}
"""


def _number(value: object, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return "-"
    number = float(value)  # type: ignore[arg-type]
    return f"{number:g}" if number == round(number) else f"{number:.{digits}f}"


def _signed(value: object) -> str:
    if value is None or pd.isna(value):
        return "-"
    return f"{float(value):+.3f}"  # type: ignore[arg-type]


def _labels_table(labels: pd.DataFrame) -> str:
    if labels.empty:
        return "<p>No judge rated this output.</p>"
    rows = ["<table><tr><th>label</th><th>rater</th><th>judge</th><th>in effect</th></tr>"]
    for record in labels.itertuples():
        effect = _number(record.label)
        if record.overridden:
            effect = f'<span class="over">{effect} (human override)</span>'
        rows.append(f"<tr><td>{html_literal(record.dimension)}</td><td>{html_literal(record.rater)}</td>"
                    f'<td class="num">{_number(record.judge)}</td><td class="num">{effect}</td></tr>')
    rows.append("</table>")
    return "".join(rows)


def _delta_table(view: ExhibitView) -> str:
    if not view.overridden:
        return "<p>No human override on this output: the metrics are the judges'.</p>"
    if view.delta.empty:
        return "<p>The override on this output changes no metric value.</p>"
    rows = ["<table><tr><th>task</th><th>metric</th><th>judge</th><th>model</th><th>without this override</th>"
            "<th>with it</th><th>change</th></tr>"]
    for record in view.delta.to_dict("records"):
        rows.append(f"<tr><td>{html_literal(record['task'])}</td><td>{html_literal(record['metric'])}</td>"
                    f"<td>{html_literal(record['scorer'])}</td><td>{html_literal(record['model'])}</td>"
                    f'<td class="num">{_number(record["without"])}</td>'
                    f'<td class="num">{_number(record["with"])}</td>'
                    f'<td class="num">{_signed(record["delta"])}</td></tr>')
    rows.append("</table>")
    return "".join(rows)


def exhibit_html(view: ExhibitView, *, position: int | None = None) -> str:
    """One exhibit as an HTML ``<section>``: title, note, legend, the two texts with the marks of the four
    mechanisms (:func:`empathy.mechanisms.mechanisms_html`), labels, delta.

    Every data string is escaped (:func:`empathy.escaping.html_literal`; texts by
    :func:`empathy.render.highlight_html`), so the fragment is safe to show with ``unsafe_allow_html``.
    """
    number = f"{position}. " if position is not None else ""
    parts = ['<section class="exhibit">',
             f"<h2>{number}{html_literal(view.item_id)} &middot; {html_literal(view.model)}</h2>",
             f'<div class="meta">task {html_literal(view.task or "-")}'
             f'{" &middot; human override" if view.overridden else ""}</div>']
    if view.note.strip():
        parts.append(f'<div class="note">{html_literal(view.note)}</div>')
    titles = (("Client narrative (reference)", "Response (generation)") if view.task == CONFLICT_TASK
              else ("Reference", "Generation"))
    parts.append(mechanisms_html(view.marks, titles=titles, llm_judges=view.llm_judges))
    parts.append("<h3>Labels</h3>" + _labels_table(view.labels))
    parts.append("<h3>What this output's override changes</h3>" + _delta_table(view))
    parts.append("</section>")
    return "".join(parts)


def dataset_title(name: str) -> str:
    """The name an exported page gives a data set: never a path of this machine.

    A data set loaded from a path is known in the app by its outputs file's path; an export names it by its
    folder when the file is ``outputs.*`` (a data folder, the layout the app looks for) and by the file's name
    otherwise, so the page does not show how the machine's disks are laid out. Other names (``demo data``, an
    upload's file name, an importer's title) are returned as they are.
    """
    if "/" not in name and "\\" not in name:
        return name
    parts = [part for part in re.split(r"[\\/]+", name.strip()) if part not in ("", ".")]
    if not parts:
        return "data set"
    last = parts[-1]
    if last.rsplit(".", 1)[0].lower() == "outputs" and len(parts) > 1 and parts[-2] not in ("..", "~"):
        return parts[-2]
    return last


def export_html(views: Sequence[ExhibitView], *, title: str = "Exhibits", dataset: str | None = None,
                signature: str | None = None) -> str:
    """A self-contained HTML page of the exhibits in order: inline CSS, no script, no external resource.

    ``dataset`` (the app's name of the data set, a path for one loaded by path) is named in the title through
    :func:`dataset_title`, never as a path.
    """
    if dataset is not None:
        title = f"{title}: {dataset_title(dataset)}"
    body = "".join(exhibit_html(view, position=k) for k, view in enumerate(views, start=1))
    if not views:
        body = "<p>No exhibits pinned.</p>"
    footer = f"<footer>signature: {html_literal(signature)}</footer>" if signature else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html_literal(title)}</title><style>{EXHIBIT_CSS}</style></head><body>"
            f"<h1>{html_literal(title)}</h1>{body}{footer}</body></html>\n")


def chromium_path() -> str | None:
    """The headless Chromium used for PNG export, or ``None`` when none is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def export_png(page: str, path: str | Path, *, width: int = 1280, height: int = 2000, timeout: float = 60.0) -> Path:
    """Screenshot the HTML ``page`` into ``path`` with headless Chromium (offline: the page fetches nothing).

    Raises ``OSError`` when no Chromium is installed or it fails.
    """
    browser = chromium_path()
    if browser is None:
        raise OSError("PNG export needs Chromium (apt install chromium); export HTML instead")
    target = Path(path).resolve()
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "exhibits.html"
        source.write_text(page, encoding="utf-8")
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                   "--no-first-run", f"--user-data-dir={folder}/profile", f"--window-size={width},{height}",
                   f"--screenshot={target}", source.as_uri()]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise OSError(f"Chromium did not finish the screenshot within {timeout:g} s") from None
    if done.returncode != 0 or not target.exists():
        raise OSError(f"Chromium failed to write {target} (exit {done.returncode})")
    return target


# --------------------------------------------------------------------------------------- curated list


def read_curated(path: str | Path, outputs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The curated exhibit list (:data:`CURATED_COLUMNS`), checked: known mechanism, and with ``outputs``, every
    (item_id, model) present. A bad row raises :class:`empathy.io.DataError` naming the file, row and column."""
    frame = read_table(path)
    missing = [c for c in CURATED_COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(path, f"missing column(s) {', '.join(missing)}", column=missing[0])
    frame = frame[list(CURATED_COLUMNS)].fillna("").astype(str)
    keys = None if outputs is None else set(zip(outputs["item_id"].astype(str), outputs["model"].astype(str),
                                                strict=True))
    mechanisms = tuple(m.METRIC_SPECS)
    for position, record in enumerate(frame.itertuples(index=False)):
        if record.mechanism not in mechanisms:
            raise DataError(path, f"mechanism {record.mechanism!r} is not one of {', '.join(mechanisms)}",
                            row=position + 2, column="mechanism")
        if keys is not None and (record.item_id, record.model) not in keys:
            raise DataError(path, f"output ({record.item_id}, {record.model}) is not in the data set",
                            row=position + 2, column="item_id")
    return frame.reset_index(drop=True)
