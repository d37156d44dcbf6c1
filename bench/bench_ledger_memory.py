"""Benchmark: the Python objects a team's ledger keeps beside its frames, against a baseline tree.

The job of ``bench_decision_cost.py`` (CA on 2,000 outputs, 10 models x 200 items, 3 LLM judges:
``bench_relabel_keypress.paper_data``) with ``--decided N`` decisions by other annotators in the store
(``team_store``: 3 rows per decision). In a fresh process per tree and size, with ``tracemalloc`` on: the ledger is
read (``empathy.labels.ledger.open_ledger``), then what the Relabel server keeps beside its frames is built, each
measured as the traced memory it leaves (its transients freed): the digest's sorted rows (``Ledger.digest``), the
decision counter (``Ledger.decision_total``, the sidebar's count) and the live metric's index of one judge's fresh
decisions by output (``empathy_app.overrides._by_output``). Then ``--keys`` decisions are written one at a time by
a new annotator and each is brought in (``updated_ledger``, the index patched: ``_patch_by_output``), and the
traced memory of everything held is measured again. Arrow's column buffers are not Python objects (the store's
read and the splices: ``bench_relabel_full_run.py`` and ``bench_decision_cost.py`` measure the process).

``--baseline REF``: the tree at a git revision, extracted into a temporary folder, run in the same session.

Run: ``python bench/bench_ledger_memory.py [--decided 0,1000,10000] [--keys 40] [--baseline REF]``; prints the
machine and a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from machine import machine  # noqa: E402

WORKER = r"""
import gc, json, sys, tracemalloc
root, store_path, outputs_path, keys = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, root)
import empathy
assert empathy.__file__.startswith(root), empathy.__file__
from empathy.io import load_outputs
from empathy.labels.ledger import ledger_status, open_ledger, updated_ledger
from empathy.labels.records import Change, dataset_name, output_hashes, text_hash
from empathy.labels.sqlite import OverrideStore
from empathy_app.overrides import _by_output, _patch_by_output

store = OverrideStore(store_path)
outputs, _ = load_outputs(outputs_path)
hashes = output_hashes(outputs)
name = dataset_name(outputs_path, store_path=store_path)

def traced():
    gc.collect()
    return tracemalloc.get_traced_memory()[0]

tracemalloc.start()
ledger = open_ledger(store, name, outputs, "latest", hashes=hashes)
sizes, start = {}, traced()
mark = start
for part, build in (("digest", lambda: ledger.digest), ("counter", lambda: ledger.decision_total),
                    ("index", lambda: _by_output(ledger.status.fresh, "judge0", "ca"))):
    held = build()
    now = traced()
    sizes[part], mark = now - mark, now
index = held
version = store.version()
for key in range(keys):
    row = outputs.iloc[key % len(outputs)]
    bound = text_hash(row["reference"], row["generation"])
    store.set_overrides(name, [Change(row["item_id"], row["model"], judge, "ca", float(key % 2), "", bound)
                               for judge in ("judge0", "judge1", "judge2")], annotator="bench")
    changed, rows = store.changed_decisions(name, version)
    version = store.version()
    ledger = updated_ledger(ledger, changed, rows, outputs, hashes=hashes)
    _ = ledger.digest, ledger.decision_total
    _patch_by_output(index, "judge0", "ca", changed, ledger_status(rows, outputs, hashes).fresh)
sizes["after_keys"] = traced() - start
print(json.dumps({"sizes": sizes, "rows": int(len(ledger.decisions)) - 3 * keys}))
"""


def run_tree(root: Path, template: Path | None, folder: Path, keys: int, work: Path) -> dict:
    from bench_relabel_keypress import fresh_store, worker_result

    store = fresh_store(template, work)
    return worker_result(WORKER, [str(root), str(store), str(folder / "outputs.csv"), str(keys)], root, cwd=work)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decided", default="0,1000,10000", help="decisions by others in the store, comma-separated")
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--baseline", default=None, help="a git revision to compare with (same session)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    from bench_relabel_keypress import team_job, team_store

    with tempfile.TemporaryDirectory(prefix="bench-ledger-memory-") as temp:
        temp_path = Path(temp)
        folder, trees = team_job(temp_path, args.baseline)
        print(f"Machine: {machine()}", flush=True)
        print(f"| tree | decision rows | digest's rows (MiB) | decision counter (MiB) | live index, one judge (MiB) | "
              f"all three after {args.keys} keys (MiB) |")
        print("|---|---:|---:|---:|---:|---:|")
        work = temp_path / "work"
        work.mkdir()
        for decided in (int(n) for n in args.decided.split(",")):
            template, rows = team_store(folder, work, decided)
            for label, root in trees:
                result = run_tree(root, template, folder, args.keys, work)
                if result["rows"] != rows:
                    raise RuntimeError(f"{label}: the ledger has {result['rows']} decision rows, not {rows}")
                sizes = {part: size / 2**20 for part, size in result["sizes"].items()}
                print(f"| {label} | {rows:,} | {sizes['digest']:.2f} | {sizes['counter']:.2f} | {sizes['index']:.2f} "
                      f"| {sizes['after_keys']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
