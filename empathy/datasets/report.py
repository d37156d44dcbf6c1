"""The report of a data set import, shared by every importer (:mod:`empathy.datasets`).

An importer returns an :class:`ImportResult`: outputs and long ratings in the data model of :mod:`empathy.io`
and an :class:`ImportReport` that accounts for every file read and every row or column dropped, merged,
ignored, changed or cross-checked, with the reason. The CLI prints :meth:`ImportReport.format` (or
:meth:`ImportReport.to_dict` as JSON) and the app's Data page shows it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd


@dataclass
class FileStats:
    """What was read from one rating file and what became of its rows."""

    path: str
    rater: str
    corpus: str
    rows_read: int = 0
    key_column: str = ""
    line_endings: str = "LF"
    index_columns_dropped: list[str] = field(default_factory=list)
    extra_columns: list[str] = field(default_factory=list)
    items: int = 0
    ratings: int = 0
    missing_values: int = 0
    fractional_values: int = 0
    out_of_scale: int = 0
    blank_keys_dropped: int = 0
    exact_duplicates_dropped: int = 0
    repeated_run_rows_merged: int = 0


@dataclass
class Event:
    """One thing the importer dropped, merged, ignored, changed or checked, with a count and the reason."""

    file: str
    action: str
    count: int
    why: str


@dataclass
class ImportReport:
    """Structured account of an import: rows read per file, ratings per rater and dimension, and every
    row or column dropped, merged, changed or cross-checked, with the reason."""

    directory: str
    run_policy: str = ""
    include_seeker: bool = False
    title: str = ""
    files: list[FileStats] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    checks: list[Event] = field(default_factory=list)
    items: dict[str, dict[str, int]] = field(default_factory=dict)
    counts: pd.DataFrame = field(default_factory=pd.DataFrame)

    def add(self, file: str, action: str, count: int, why: str) -> None:
        """Record something dropped, merged, ignored or changed (zero counts are kept: they prove a check ran)."""
        self.events.append(Event(file, action, int(count), why))

    def check(self, file: str, ok: bool, count: int, why: str) -> None:
        """Record a cross-check of the data against another file of the data set."""
        self.checks.append(Event(file, "ok" if ok else "MISMATCH", int(count), why))

    def events_where(self, action: str) -> list[Event]:
        """The events with the given action (``dropped``, ``merged``, ``ignored``, ``changed``)."""
        return [e for e in self.events if e.action == action]

    def to_dict(self) -> dict[str, object]:
        """A JSON-serialisable form of the report."""
        return {
            "directory": self.directory,
            "run_policy": self.run_policy,
            "include_seeker": self.include_seeker,
            "items": self.items,
            "files": [asdict(f) for f in self.files],
            "events": [asdict(e) for e in self.events],
            "checks": [asdict(c) for c in self.checks],
            "counts": self.counts.to_dict(orient="records"),
        }

    def format(self) -> str:
        """The report as plain text for a terminal."""
        lines = [f"{self.title or 'Data set'} import from {self.directory}"]
        if self.run_policy:
            lines.append(f"repeated-run policy: {self.run_policy}")
        lines += [f"seeker self-ratings: {'imported' if self.include_seeker else 'not imported'}", ""]
        lines.append("Items (outputs rows) per corpus:")
        for corpus, info in self.items.items():
            lines.append(f"  {corpus:<20} {info['items']:>4} items, {info['with_text']:>3} with text")
        lines.append("")
        lines.append("Rows read per file:")
        lines += [_file_line(f) for f in self.files]
        lines.append("")
        lines += self._count_lines()
        lines.append("")
        lines.append("Dropped / merged / ignored / changed:")
        for e in self.events:
            lines.append(f"  {e.action:<8} {e.count:>4}  {e.file}: {e.why}")
        lines.append("")
        lines.append("Cross-checks:")
        for c in self.checks:
            lines.append(f"  {c.action:<8} {c.count:>4}  {c.file}: {c.why}")
        return "\n".join(lines)

    def _count_lines(self) -> list[str]:
        """The ratings per (corpus, dimension) and rater, with the missing ones in brackets."""
        lines = ["Ratings per dimension and rater (missing ratings in brackets when any):"]
        if self.counts.empty:
            return lines
        raters = list(dict.fromkeys(self.counts["rater"]))
        lines.append(f"  {'corpus':<20} {'dimension':<28} " + " ".join(f"{r:>8}" for r in raters))
        for (corpus, dimension), part in self.counts.groupby(["corpus", "dimension"], sort=False):
            by_rater = part.set_index("rater")
            cells = []
            for rater in raters:
                if rater not in by_rater.index:
                    cells.append(f"{'-':>8}")
                    continue
                n, missing = int(by_rater.at[rater, "ratings"]), int(by_rater.at[rater, "missing"])
                cells.append(f"{n}({missing})".rjust(8) if missing else f"{n:>8}")
            lines.append(f"  {corpus:<20} {dimension:<28} " + " ".join(cells))
        lines.append(f"  total: {int(self.counts['ratings'].sum())} ratings "
                     f"({int(self.counts['missing'].sum())} missing) over "
                     f"{self.counts['dimension'].nunique()} dimensions and {len(raters)} raters")
        return lines


@dataclass
class ImportResult:
    """Outputs and long ratings of the import, with the :class:`ImportReport` that explains them."""

    outputs: pd.DataFrame
    ratings: pd.DataFrame
    report: ImportReport

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write ``outputs.csv``, ``ratings.csv`` and ``import_report.json`` into ``out_dir``.

        The two CSV files load with ``empathy.io.load_dataset(out/outputs.csv, [out/ratings.csv])``.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"outputs": out / "outputs.csv", "ratings": out / "ratings.csv",
                 "report": out / "import_report.json"}
        self.outputs.to_csv(paths["outputs"], index=False)
        self.ratings.to_csv(paths["ratings"], index=False)
        paths["report"].write_text(json.dumps(self.report.to_dict(), indent=2) + "\n", encoding="utf-8")
        return paths


def _file_line(f: FileStats) -> str:
    """One line of the report per file read: rows, key, items, ratings and what was dropped or merged."""
    extras = []
    if f.index_columns_dropped:
        extras.append("index column " + ", ".join(f.index_columns_dropped) + " dropped")
    if f.fractional_values:
        extras.append(f"{f.fractional_values} fractional values")
    if f.repeated_run_rows_merged:
        extras.append(f"{f.repeated_run_rows_merged} repeated-run rows merged")
    if f.exact_duplicates_dropped:
        extras.append(f"{f.exact_duplicates_dropped} exact duplicates dropped")
    if f.missing_values:
        extras.append(f"{f.missing_values} empty cells")
    if f.out_of_scale:
        extras.append(f"{f.out_of_scale} out-of-scale values set missing")
    if f.line_endings != "LF":
        extras.append(f.line_endings)
    note = f"  ({'; '.join(extras)})" if extras else ""
    return (f"  {f.path:<50} {f.rows_read:>4} rows, key {f.key_column!r}, "
            f"{f.items:>3} items, {f.ratings:>4} ratings{note}")
