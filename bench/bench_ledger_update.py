"""Benchmark: what one decision costs the ledger's update, under each label rule, against a baseline tree.

The job of ``bench_decision_cost.py`` (CA on 2,000 outputs, 10 models x 200 items, 3 LLM judges:
``bench_relabel_keypress.paper_data``) with ``--decided N`` decisions by other annotators in the store
(``decided_by_another``: 3 rows per decision). In a fresh process per tree, rule and size: the ledger is opened
(``empathy.labels.ledger.open_ledger``, its digest and counts asked for, as the Relabel page does), then ``--keys``
decisions are written one at a time by a new annotator (one output, every judge of it, the value alternating) and
each is brought into the ledger (``OverrideStore.changed_decisions`` then ``updated_ledger``, digest and counts
again). Measured: the process's CPU seconds of each update (``time.process_time``), median and 90th percentile.
The store write is not counted (the same in both trees). The Relabel server's own cost per key (the fragment's
run, the window) is ``bench_decision_cost.py``'s; this is the ledger's share, per rule (the browser benchmark runs
the default rule, ``latest``, only).

``--untouched``: each key on an output no decision of the store touches (with ``--scale 10``: 20,000 outputs, of
which at most 10,000 are decided), so that what grows with the ledger's size is told apart from what grows with
the decisions on the output decided (a key's rows are reduced by the label rule with that output's other
decisions: more decisions per output, more rows).

``--baseline REF``: the package at a git revision, extracted into a temporary folder, run in the same session;
the two trees alternate (this, baseline, baseline, this) per row.

Run: ``python bench/bench_ledger_update.py [--decided 0,1000,10000] [--rules latest,majority,adjudicated]
[--keys 40] [--scale 1] [--untouched] [--baseline REF]``; prints the machine, the load and a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from machine import machine  # noqa: E402

WORKER = r"""
import json, sys, time
root, store_path, outputs_path, rule, keys = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
untouched = sys.argv[6] == "untouched"
sys.path.insert(0, root)
import empathy
assert empathy.__file__.startswith(root), empathy.__file__
from empathy.io import load_outputs
from empathy.labels.ledger import open_ledger, updated_ledger
from empathy.labels.records import Change, dataset_name, output_hashes, text_hash
from empathy.labels.sqlite import OverrideStore

store = OverrideStore(store_path)
outputs, _ = load_outputs(outputs_path)
hashes = output_hashes(outputs)
name = dataset_name(outputs_path, store_path=store_path)
ledger = open_ledger(store, name, outputs, rule, hashes=hashes)
_ = ledger.digest, ledger.decision_counts, ledger.decision_total
before = int(len(ledger.decisions))
version = store.version()
costs = []
chosen = outputs
if untouched:  # the outputs no decision touches, spread over the data set
    decided = set(zip(ledger.decisions["item_id"].astype(str), ledger.decisions["model"].astype(str)))
    free = [k for k, key in enumerate(zip(outputs["item_id"].astype(str), outputs["model"].astype(str)))
            if key not in decided]
    if len(free) < keys:
        raise SystemExit(f"only {len(free)} outputs without a decision for {keys} keys: a larger --scale")
    chosen = outputs.iloc[free[::max(1, len(free) // keys)][:keys]]
for key in range(keys):
    row = chosen.iloc[key % len(chosen)]
    bound = text_hash(row["reference"], row["generation"])
    store.set_overrides(name, [Change(row["item_id"], row["model"], judge, "ca", float(key % 2), "", bound)
                               for judge in ("judge0", "judge1", "judge2")], annotator="bench")
    now = store.version()
    changed, rows = store.changed_decisions(name, version)
    start = time.process_time()
    ledger = updated_ledger(ledger, changed, rows, outputs, hashes=hashes)
    _ = ledger.digest, ledger.decision_counts, ledger.decision_total
    costs.append(time.process_time() - start)
    version = now
print(json.dumps({"costs": costs, "rows": before}))
"""


def run_tree(root: Path, template: Path | None, folder: Path, rule: str, keys: int, work: Path, *,
             untouched: bool = False) -> dict:
    """One fresh process: the ledger of a copy of ``template`` (``None``: a new store) under ``rule``, ``keys``
    decisions brought in (``untouched``: on outputs no decision of the store touches)."""
    from bench_relabel_keypress import fresh_store, worker_result

    store = fresh_store(template, work)
    result = worker_result(WORKER, [str(root), str(store), str(folder / "outputs.csv"), rule, str(keys),
                                    "untouched" if untouched else "any"], root, cwd=work)
    costs = sorted(result["costs"])
    return {"median_ms": 1000 * statistics.median(costs), "p90_ms": 1000 * costs[int(0.9 * (len(costs) - 1))],
            "rows": result["rows"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decided", default="0,1000,10000", help="decisions by others in the store, comma-separated")
    parser.add_argument("--rules", default="latest,majority,adjudicated")
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--scale", type=int, default=1, help="the data set's items, in 200s (1: 2,000 outputs)")
    parser.add_argument("--untouched", action="store_true",
                        help="each key on an output no decision of the store touches (needs --scale > decided/2000)")
    parser.add_argument("--baseline", default=None, help="a git revision to compare with (same session)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    from bench_relabel_keypress import team_job, team_store

    with tempfile.TemporaryDirectory(prefix="bench-ledger-") as temp:
        temp_path = Path(temp)
        folder, trees = team_job(temp_path, args.baseline, args.scale)
        print(f"Machine: {machine()}; load average {os.getloadavg()[0]:.1f} at the start", flush=True)
        print("| tree | decision rows before | rule | update CPU per decision, median (ms) | p90 (ms) | load |")
        print("|---|---:|---|---:|---:|---:|")
        work = temp_path / "work"
        work.mkdir()
        for decided in (int(n) for n in args.decided.split(",")):
            template, rows = team_store(folder, work, decided)
            for rule in args.rules.split(","):
                order = trees + trees[::-1] if len(trees) > 1 else trees
                results: dict[str, list[dict]] = {}
                for label, root in order:
                    result = run_tree(root, template, folder, rule, args.keys, work, untouched=args.untouched)
                    if result["rows"] != rows:
                        raise RuntimeError(f"{label}: the ledger has {result['rows']} decision rows, not {rows}")
                    results.setdefault(label, []).append(result)
                for label, _ in trees:
                    runs = results[label]
                    median = statistics.median(run["median_ms"] for run in runs)
                    p90 = statistics.median(run["p90_ms"] for run in runs)
                    print(f"| {label} | {rows:,} | {rule} | {median:.1f} | {p90:.1f} | {os.getloadavg()[0]:.1f} |",
                          flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
