"""Benchmark: the app's live recompute after a human override, at the paper's scale.

Scale: 10 models x 3 judges x 200 items, every judge rating e_ref, e_gen, u_ref, u_gen and ca (30,000 rating
rows), with 50 overrides in the SQLite store. What one rerun of an app page does after an override:

1. read the data set's overrides from SQLite through the ledger, as the app does
   (:func:`empathy.labels.ledger.open_ledger`: the decisions, their status against the texts, the label rule);
2. recompute every metric, ranking input and inter-judge Spearman (:meth:`empathy.review.Recompute.report`:
   the data set's cached :class:`empathy.evaluate.MetricPlan` evaluated on the patched rating values).

Text analysis (spaCy) is not part of the recompute: it depends on the texts only and is cached once per data
set, so synthetic sentence counts and densities stand in for it. For comparison the full
:func:`empathy.evaluate.compute_metrics` on the effective ratings is timed too.

Run: ``python bench/bench_recompute.py [--repeats 30]``; prints a Markdown table.

``--baseline DIR`` compares two versions of the package in one run: DIR holds another version's ``empathy/``
(e.g. ``git archive <commit> empathy | tar -x -C DIR``); this script runs itself under that version and
under the current one, alternating, ``--rounds`` times each, and prints the medians and their ratio.

``--lab`` (issue 25 items 2-3): one decision at a lab's scale, 10 models x 3 judges x ``--items`` items (20,000:
200,000 outputs, 600,000 judge units, 3 million rating rows), with 0, 1,000 and 10,000 CA decisions already in
the store (``--ledgers``). Per decision (``--decisions`` of them, each on a new output), the CPU milliseconds of
each library step a page pays after it: the SQLite write, the ledger read again (``open_ledger``), its digest
(the signature's ``ledger`` field), the effective ratings (before: ``apply_overrides``; now:
``EffectiveRatings``, the rating keys indexed once per data set), and the recompute: before
(``MetricPlan.evaluate`` of the patched values, what ``Recompute.report`` ran before) and now
(``Recompute.report``: ``LiveMetrics``, the changed units only), the two checked equal after every decision.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from empathy.evaluate import TextFeatures, compute_metrics
from empathy.review import Recompute

try:
    from empathy.labels.ledger import apply_overrides, open_ledger
    from empathy.labels.records import Change, dataset_id, output_hashes
    from empathy.labels.sqlite import OverrideStore
except ImportError:  # --baseline runs this script on a package from before empathy.labels (issue 22)
    from empathy.overrides import open_ledger
    from empathy.store import Change, OverrideStore, apply_overrides, dataset_id, output_hashes

TARGET_MS = 50.0


def synthetic(n_models: int = 10, n_judges: int = 3, n_items: int = 200, seed: int = 0
              ) -> tuple[pd.DataFrame, pd.DataFrame, TextFeatures]:
    """Outputs, long ratings and text features of the paper's scale."""
    rng = np.random.default_rng(seed)
    models = [f"model-{i}" for i in range(n_models)]
    items = [f"item-{k:03d}" for k in range(n_items)]
    outputs = pd.DataFrame([(i, m, "counseling", f"ref {i}", f"gen {i} {m}") for m in models for i in items],
                           columns=["item_id", "model", "task", "reference", "generation"])
    size = n_models * n_items
    parts = []
    for j in range(n_judges):
        values = {"e_ref": rng.random(size), "e_gen": rng.random(size), "u_ref": rng.integers(0, 5, size),
                  "u_gen": rng.integers(0, 5, size), "ca": rng.integers(0, 2, size)}
        for dimension, column in values.items():
            parts.append(pd.DataFrame({"item_id": outputs["item_id"], "model": outputs["model"],
                                       "rater": f"judge-{j}", "dimension": dimension,
                                       "value": np.asarray(column, dtype=float)}))
    ratings = pd.concat(parts, ignore_index=True).assign(rater_kind="llm", reason="", signature="bench")
    n = len(outputs)
    features = TextFeatures(rng.integers(1, 9, n).astype(float), rng.integers(1, 9, n).astype(float),
                            rng.random((n, 3)), rng.random((n, 3)), "bench-analyser")
    return outputs, ratings, features


def _time(function, repeats: int) -> list[float]:
    function()  # warm-up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def measure(repeats: int, n_overrides: int) -> tuple[float, list[tuple[str, list[float]]]]:
    """(preparation ms, [(step, samples ms)]) of the live recompute at the paper's scale."""
    outputs, ratings, features = synthetic()
    key = dataset_id(outputs)
    hashes = output_hashes(outputs)  # computed once per data set, as the app does
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as folder:
        store = OverrideStore(Path(folder) / "bench.sqlite")
        picks = ratings[ratings["dimension"] == "ca"].sample(n_overrides, random_state=1)
        for row in picks.itertuples():
            store.set_overrides(key, [Change(row.item_id, row.model, row.rater, "ca", float(rng.integers(0, 2)),
                                             text_hash=hashes[(row.item_id, row.model)])], annotator="bench")
        start = time.perf_counter()
        engine = Recompute(outputs, ratings, features)
        prepare_ms = (time.perf_counter() - start) * 1000

        def applied() -> pd.DataFrame:
            return open_ledger(store, key, outputs, hashes=hashes).applied

        current = applied()

        def rerun() -> None:
            engine.report(applied())

        def report_only() -> None:
            engine.report(current)

        def full() -> None:
            effective = applied()
            compute_metrics(outputs, apply_overrides(ratings, effective), features=features,
                            n_overrides=len(effective))

        def write_one() -> None:
            store.set_override(key, "item-000", "model-0", "judge-0", "ca", 1.0, annotator="bench",
                               text_hash=hashes[("item-000", "model-0")])

        rows = [("SQLite write of one override (committed, synchronous=FULL)", _time(write_one, repeats)),
                ("SQLite read of the overrides", _time(applied, repeats)),
                ("**App recompute after an override** (read + Recompute.report)", _time(rerun, repeats)),
                ("Recompute.report alone (overrides already read)", _time(report_only, repeats)),
                ("Full compute_metrics on effective ratings (reference path)", _time(full, max(5, repeats // 3)))]
        effective = applied()
        check = engine.report(effective)
        reference = compute_metrics(outputs, apply_overrides(ratings, effective), features=features,
                                    n_overrides=len(effective))
        pd.testing.assert_frame_equal(check.table, reference.table, check_exact=False, rtol=1e-12, atol=1e-12)
        if len(effective) != n_overrides + 1 - int(("item-000", "model-0", "judge-0") in set(
                zip(picks["item_id"], picks["model"], picks["rater"], strict=True))):
            raise RuntimeError(f"the ledger applies {len(effective)} overrides, not every stored one")
    return prepare_ms, rows


def compare(baseline: str, rounds: int, repeats: int, n_overrides: int) -> None:
    """Run this script under ``baseline``'s package and the current one, alternating; print medians and ratios."""
    here = str(Path(__file__).resolve().parents[1])
    medians: dict[str, dict[str, list[float]]] = {"baseline": {}, "current": {}}
    for _ in range(rounds):
        for label, root in (("baseline", baseline), ("current", here)):
            env = {**os.environ, "PYTHONPATH": root}
            result = subprocess.run([sys.executable, __file__, "--json", "--repeats", str(repeats),
                                     "--overrides", str(n_overrides)], env=env, check=True, capture_output=True,
                                    text=True)
            for step, value in json.loads(result.stdout).items():
                medians[label].setdefault(step, []).append(value)
    print(f"Baseline {baseline} vs current {here}: {rounds} alternating rounds of {repeats} repeats; median of "
          f"the rounds' medians; load average {os.getloadavg()[0]:.2f}.\n")
    print("| step | baseline ms | current ms | current / baseline |")
    print("|---|---:|---:|---:|")
    for step, values in medians["baseline"].items():
        base = statistics.median(values)
        now = statistics.median(medians["current"][step])
        print(f"| {step} | {base:.1f} | {now:.1f} | {now / base:.2f} |")


def _cpu_ms(function) -> tuple[object, float]:
    start = time.process_time()
    result = function()
    return result, (time.process_time() - start) * 1000


def lab(n_items: int, ledgers: list[int], decisions: int) -> None:
    """Per ledger size, the median and max CPU ms of each step after one decision (see the module docstring)."""
    from empathy.review import EffectiveRatings  # here: --baseline runs this script on packages without it

    start = time.process_time()
    outputs, ratings, features = synthetic(n_items=n_items)
    hashes = output_hashes(outputs)
    build_s = time.process_time() - start
    start = time.process_time()
    engine = Recompute(outputs, ratings, features)
    engine.report(None)
    prepare_s = time.process_time() - start
    plan = engine.plan
    effective, effective_ms = _cpu_ms(lambda: EffectiveRatings(ratings))
    ca = ratings[ratings["dimension"] == "ca"].reset_index(drop=True)
    rng = np.random.default_rng(2)
    order = rng.permutation(len(ca))
    print(f"Scale: 10 models x 3 judges x {n_items:,} items = {len(outputs):,} outputs, {len(plan.values):,} judge "
          f"units, {len(ratings):,} rating rows; data built in {build_s:.1f} s CPU, Recompute prepared (plan + first "
          f"report) in {prepare_s:.1f} s CPU, EffectiveRatings in {effective_ms / 1000:.1f} s CPU. Python "
          f"{platform.python_version()}, pandas {pd.__version__}, {platform.machine()}; load average "
          f"{os.getloadavg()[0]:.2f}.\n")
    print("| decisions in the store | step | median CPU ms | max CPU ms |")
    print("|---:|---|---:|---:|")
    used = 0
    for size in ledgers:
        with tempfile.TemporaryDirectory() as folder:
            store = OverrideStore(Path(folder) / "lab.sqlite")

            def change(row: int) -> Change:
                rating = ca.iloc[int(order[row])]
                return Change(rating["item_id"], rating["model"], rating["rater"], "ca", 1.0 - rating["value"],
                              text_hash=hashes[(rating["item_id"], rating["model"])])

            if size:
                store.set_overrides("lab", [change(used + k) for k in range(size)], annotator="bench")
            used += size
            engine.report(open_ledger(store, "lab", outputs, hashes=hashes).applied)  # the page's state so far
            samples: dict[str, list[float]] = {}
            for _ in range(decisions):
                steps: list[tuple[str, float]] = []
                _, ms = _cpu_ms(lambda: store.set_overrides("lab", [change(used)], annotator="bench"))  # noqa: B023
                used += 1
                steps.append(("SQLite write of the decision", ms))
                ledger, ms = _cpu_ms(lambda: open_ledger(store, "lab", outputs, hashes=hashes))  # noqa: B023
                steps.append(("`open_ledger` (decisions read, status, label rule)", ms))
                steps.append(("`Ledger.digest`", _cpu_ms(lambda: ledger.digest)[1]))  # noqa: B023
                applied = ledger.applied
                full, ms = _cpu_ms(lambda: apply_overrides(ratings, applied))  # noqa: B023
                steps.append(("effective ratings before: `apply_overrides`", ms))
                fast, ms = _cpu_ms(lambda: effective(applied))  # noqa: B023
                steps.append(("**effective ratings now: `EffectiveRatings` (keys indexed once)**", ms))
                pd.testing.assert_frame_equal(fast, full, check_exact=True)
                before, ms = _cpu_ms(lambda: plan.evaluate(plan.patch(applied), n_overrides=len(applied)))  # noqa: B023
                steps.append(("recompute before: `MetricPlan.evaluate` of the patched values", ms))
                after, ms = _cpu_ms(lambda: engine.report(applied))  # noqa: B023
                steps.append(("**recompute now: `Recompute.report` (`LiveMetrics`)**", ms))
                pd.testing.assert_frame_equal(after.table, before.table, check_exact=True)
                pd.testing.assert_frame_equal(after.agreement, before.agreement, check_exact=True)
                for name, ms in steps:
                    samples.setdefault(name, []).append(ms)
            for name, values in samples.items():
                print(f"| {size:,} | {name} | {statistics.median(values):.1f} | {max(values):.1f} |")
    print(f"\nLoad average after the run: {os.getloadavg()[0]:.2f}.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--overrides", type=int, default=50)
    parser.add_argument("--baseline", help="folder holding another version's empathy/ package to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--lab", action="store_true", help="one decision at a lab's scale (see the docstring)")
    parser.add_argument("--items", type=int, default=20_000, help="--lab: items per model (20,000: 200,000 outputs)")
    parser.add_argument("--ledgers", type=int, nargs="+", default=[0, 1_000, 10_000],
                        help="--lab: decisions in the store before the measured ones")
    parser.add_argument("--decisions", type=int, default=15, help="--lab: measured decisions per ledger size")
    args = parser.parse_args()
    if args.lab:
        lab(args.items, args.ledgers, args.decisions)
        return
    if args.baseline:
        compare(args.baseline, args.rounds, args.repeats, args.overrides)
        return
    prepare_ms, rows = measure(args.repeats, args.overrides)
    if args.json:
        print(json.dumps({"Recompute.__init__ (one-off)": prepare_ms,
                          **{name: statistics.median(samples) for name, samples in rows}}))
        return
    print(f"Scale: 10 models x 3 judges x 200 items (30000 rating rows), {args.overrides} overrides; "
          f"{args.repeats} repeats; Python {platform.python_version()}, pandas {pd.__version__}, "
          f"{platform.machine()}; load average {os.getloadavg()[0]:.2f}.")
    print(f"One-off preparation per data set (Recompute.__init__): {prepare_ms:.1f} ms.\n")
    print("| step | median ms | p95 ms | max ms |")
    print("|---|---:|---:|---:|")
    for name, samples in rows:
        ordered = sorted(samples)
        p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
        print(f"| {name} | {statistics.median(samples):.1f} | {p95:.1f} | {max(samples):.1f} |")
    recompute = statistics.median(rows[2][1])
    verdict = "meets" if recompute < TARGET_MS else "MISSES"
    print(f"\nRecompute median {recompute:.1f} ms {verdict} the {TARGET_MS:.0f} ms target; the fast path's table "
          "equals compute_metrics (checked above).")


if __name__ == "__main__":
    main()
