"""Benchmark: reading an outputs CSV with a wide header (one row, thousands of ``<rater>:<dimension>`` columns).

Issue 27: a CSV with 100,000 columns spent minutes reading one row. The reader did three things per column:
``read_table`` checked for repeated names with ``list(columns).count(c)`` for every column (quadratic in the
width), scanned every column for spreadsheet-quoted cells, and ``validate_outputs`` built a data frame per wide
rating column before concatenating them. Now the names are checked in one pass, the quoted-cell scan runs only
when the file's bytes have a cell starting with ``'``, and the rating columns are concatenated as arrays.

Baseline, measured in the same run on the same files: that reader as it was at commit c6b8a99 (reproduced
below: the same pandas call, the three per-column steps, and the current value validation, so only the header
handling differs). Both must return the same outputs and ratings (checked before timing). CPU time, the
fewest seconds of ``--repeats`` runs (on a shared machine other work only adds time). The old reader is timed
up to ``--widths``; the new one also at ``--new-widths``, to show its cost per column staying flat.

Run: ``python bench/bench_wide_header.py [--widths 1000,2000,5000,10000] [--new-widths 20000,50000,100000]
[--repeats 2]``; prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from machine import machine

from empathy import io
from empathy.escaping import unspreadsheet_cell


def write_wide(folder: Path, width: int) -> Path:
    """An outputs CSV: the four required columns and ``width`` CA columns ``judge<k>:ca`` (0/1), one row."""
    path = folder / f"wide_{width}.csv"
    header = ["item_id", "model", "reference", "generation", *(f"judge{k}:ca" for k in range(width))]
    row = ["1", "model-a", "The river rose.", "Water changed.", *(str(k % 2) for k in range(width))]
    path.write_text(",".join(header) + "\n" + ",".join(row) + "\n", encoding="utf-8")
    return path


def old_load_outputs(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``empathy.io.load_outputs`` of commit c6b8a99 for a CSV (the baseline), its checks of ids kept."""
    label = str(path)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], encoding="utf-8")
    for column in frame.columns:  # the quoted-cell scan, one column at a time
        values = frame[column]
        quoted = values.str.startswith("'", na=False)
        if quoted.any():
            frame.loc[quoted, column] = values[quoted].map(unspreadsheet_cell)
    frame.columns = [str(c).strip() for c in frame.columns]
    duplicated = [c for c in frame.columns if list(frame.columns).count(c) > 1]  # quadratic
    if duplicated:
        raise io.DataError(label, "duplicate column name", column=duplicated[0])
    frame.attrs.update(source=label, suffix=".csv")
    outputs = frame.copy()
    for column in ("item_id", "model", "reference", "generation"):
        outputs[column] = outputs[column].astype(object).where(outputs[column].notna(), "").astype(str)
    for column in ("item_id", "model"):
        outputs[column] = outputs[column].str.strip()
    outputs["task"] = ""
    if outputs.duplicated(["item_id", "model"]).any():
        raise io.DataError(label, "duplicate (item_id, model)")
    wide_columns = [c for c in outputs.columns if io.WIDE_SEPARATOR in c]
    rows = np.arange(len(outputs)) + 2
    parts = []
    for column in wide_columns:  # a data frame per rating column
        rater, _, dimension = column.partition(io.WIDE_SEPARATOR)
        part = pd.DataFrame({"item_id": outputs["item_id"], "model": outputs["model"], "rater": rater.strip(),
                             "dimension": dimension.strip(), "value": outputs[column]})
        part["_row"] = rows
        part["_column"] = column
        parts.append(part)
    outputs = outputs.drop(columns=wide_columns).reset_index(drop=True)
    ratings = io._validate_rating_values(pd.concat(parts, ignore_index=True), label, ".csv")
    return outputs, ratings


def cpu_seconds(repeats: int, work: Callable[[], object]) -> float:
    """The fewest CPU seconds ``work()`` took in ``repeats`` runs."""
    times = []
    for _ in range(max(1, repeats)):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def same_result(path: Path) -> None:
    """Raise SystemExit unless the old and the new reader give the same outputs and ratings."""
    old_outputs, old_ratings = old_load_outputs(path)
    new_outputs, new_ratings = io.load_outputs(path)
    columns = ["item_id", "model", "reference", "generation", "task"]
    pd.testing.assert_frame_equal(old_outputs[columns], new_outputs[columns], check_dtype=False)
    pd.testing.assert_frame_equal(old_ratings, new_ratings, check_dtype=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", default="1000,2000,5000,10000", help="widths timed with both readers")
    parser.add_argument("--new-widths", default="20000,50000,100000", help="widths timed with the new reader only")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    both = [int(w) for w in args.widths.split(",") if w]
    only_new = [int(w) for w in args.new_widths.split(",") if w]
    print(f"{machine()}, pandas {pd.__version__}, numpy {np.__version__}; CPU seconds, fewest of "
          f"{args.repeats}.\n")
    print("| rating columns | old reader (c6b8a99) s | new reader s | ratio (new / old) | new us per column |")
    print("|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="empathy-wide-") as scratch:
        for width in both + only_new:
            path = write_wide(Path(scratch), width)
            if width in both:
                same_result(path)
                old = cpu_seconds(args.repeats, lambda p=path: old_load_outputs(p))
            new = cpu_seconds(args.repeats, lambda p=path: io.load_outputs(p))
            old_cell = f"{old:.2f}" if width in both else "not run"
            ratio = f"{new / old:.3f}" if width in both else "-"
            print(f"| {width:,} | {old_cell} | {new:.2f} | {ratio} | {new / width * 1e6:.0f} |", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
