"""Benchmark: validating a long ratings table (``empathy.io.validate_ratings``), vectorised vs row by row.

Issue 17 measured the row-by-row validation at 44 us per row. This script times the current vectorised
:func:`empathy.io.validate_ratings` against that per-row loop (reproduced below as it was at commit 869f450,
the baseline) in the same run, on the same tables: text cells as a CSV gives them, and float cells as JSONL or
Parquet gives them. Both must return the same values (checked before timing).

Run: ``python bench/bench_validation.py [--rows 100000] [--repeats 5]``; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time

import numpy as np
import pandas as pd

from empathy.io import BINARY_DIMENSIONS, DIMENSION_RANGES, RATER_KINDS, RATING_OPTIONAL, DataError, validate_ratings


def _string_column(values: pd.Series) -> pd.Series:
    return values.map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))


def _parse_value(raw: object, label: str, row: int, column: str) -> float:
    if raw is None:
        return math.nan
    if isinstance(raw, bool):
        return float(raw)
    if isinstance(raw, int | float | np.integer | np.floating):
        value = float(raw)
        if math.isinf(value):
            raise DataError(label, "value is infinite", row=row, column=column)
        return value
    text = str(raw).strip()
    if text == "" or text.lower() in ("nan", "na", "null", "none"):
        return math.nan
    try:
        value = float(text)
    except ValueError:
        raise DataError(label, f"not a number: {text[:40]!r}", row=row, column=column) from None
    if math.isinf(value):
        raise DataError(label, "value is infinite", row=row, column=column)
    return value


def row_by_row(frame: pd.DataFrame, label: str = "<ratings>") -> pd.DataFrame:
    """The validation before issue 17: one ``_parse_value`` and one ``.iat`` per row (baseline)."""
    rows = np.array([i + 2 for i in range(len(frame))])
    out = pd.DataFrame({c: _string_column(frame[c]).str.strip() for c in ("item_id", "model", "rater", "dimension")})
    for column in ("item_id", "model", "rater", "dimension"):
        blank = out[column] == ""
        if blank.any():
            position = int(np.flatnonzero(blank)[0])
            raise DataError(label, "empty value", row=int(rows[position]), column=column)
    values = np.empty(len(frame), dtype=float)
    for position, raw in enumerate(frame["value"].tolist()):
        values[position] = _parse_value(raw, label, int(rows[position]), "value")
        dimension = out["dimension"].iat[position]
        value = values[position]
        if math.isnan(value) or dimension not in DIMENSION_RANGES:
            continue
        low, high = DIMENSION_RANGES[dimension]
        if dimension in BINARY_DIMENSIONS and value not in (0.0, 1.0):
            raise DataError(label, f"'{dimension}' must be 0 or 1, got {raw!r}", row=int(rows[position]))
        if not low <= value <= high:
            raise DataError(label, f"'{dimension}' must be in [{low:g}, {high:g}], got {raw!r}",
                            row=int(rows[position]))
    out["value"] = values
    for column in RATING_OPTIONAL:
        out[column] = _string_column(frame[column]) if column in frame.columns else ""
    if (~out["rater_kind"].isin(RATER_KINDS)).any():
        raise DataError(label, "unknown rater_kind")
    if out.duplicated(["item_id", "model", "rater", "dimension"]).any():
        raise DataError(label, "duplicate rating")
    return out.reset_index(drop=True)


def tables(n_rows: int, seed: int = 0) -> dict[str, pd.DataFrame]:
    """``n_rows`` ratings over the paper's five dimensions, 3 % missing: as CSV text and as floats."""
    rng = np.random.default_rng(seed)
    dimensions = np.array(["e_ref", "e_gen", "u_ref", "u_gen", "ca"])
    n_items = n_rows // len(dimensions) + 1
    dimension = dimensions[np.arange(n_rows) % len(dimensions)]
    item = (np.arange(n_rows) // len(dimensions)).astype(str)
    value = np.where(dimension == "ca", rng.integers(0, 2, n_rows), rng.random(n_rows))
    value = np.where(np.isin(dimension, ["u_ref", "u_gen"]), rng.integers(0, 6, n_rows), value).astype(float)
    value[rng.random(n_rows) < 0.03] = np.nan
    assert n_items > 0
    base = {"item_id": item, "model": "m", "rater": "judge", "dimension": dimension, "rater_kind": "llm",
            "reason": "", "signature": "s"}
    text = pd.Series([("" if math.isnan(v) else f"{v:g}") for v in value], dtype="str")
    return {"CSV text cells": pd.DataFrame({**base, "value": text}).astype("str"),
            "float cells (JSONL, Parquet)": pd.DataFrame({**base, "value": value})}


def _time(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        function()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{args.rows:,} rating rows; CPU time, median of {args.repeats}. Python {platform.python_version()}, "
          f"pandas {pd.__version__}, {platform.machine()}, {os.cpu_count()} CPUs; load average "
          f"{' / '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| cells | row by row (baseline) ms | vectorised ms | us/row before -> after | speed-up |")
    print("|---|---|---|---|---|")
    for name, frame in tables(args.rows).items():
        expected = row_by_row(frame)["value"].to_numpy()
        got = validate_ratings(frame)["value"].to_numpy()
        if not np.allclose(expected, got, equal_nan=True):
            raise SystemExit(f"{name}: the two validations disagree")
        before = _time(lambda f=frame: row_by_row(f), args.repeats)
        after = _time(lambda f=frame: validate_ratings(f), args.repeats)
        print(f"| {name} | {before * 1000:.0f} | {after * 1000:.0f} | {before / args.rows * 1e6:.1f} -> "
              f"{after / args.rows * 1e6:.1f} | {before / after:.1f}x |")


if __name__ == "__main__":
    main()
