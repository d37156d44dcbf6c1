"""Benchmark: warm ``distancing`` and ``metrics`` runs against reading their inputs (issue 25 item 4).

A *warm* run finds every text in the parse cache. It should cost what reading its inputs costs: the target is
within 1.2x of ``python -c "import empathy"`` plus reading the inputs. The stand-ins for "import empathy plus
reading the inputs" are fresh processes that import ``empathy`` and read exactly what the command reads, with
the project's own readers and nothing else:

* ``distancing FILE``: the text file's lines, their cached results (``DistancingCache.get_many``, decoded), and
  the JSON lines written to stdout;
* ``metrics OUTPUTS --ratings A --ratings B``: ``empathy.io.load_dataset`` of the three files and the cached
  results of every distinct text. ``metrics`` computes by default 1,000 item-bootstrap resamples of every value's
  interval, work beyond reading; ``metrics --resamples 0`` (same values, no intervals) is measured beside it, so
  that what loading costs and what the intervals cost are both visible. The command line starts OpenBLAS on one
  thread (``empathy.blas.one_blas_thread_from_start``: the threads it starts at NumPy's import spin for a while);
  the stand-in is measured both as it is and started the same way (``OPENBLAS_NUM_THREADS=1``), the like-for-like
  reading of what the command adds to reading.

Data: the demo data scaled 1x and 10x with distinct texts (``bench_cli_scaling.scaled_demo``); the cache is
filled by one cold ``metrics`` run per scale (not timed). Every case is a fresh process (CPU = user + system of
that child, ``os.wait4``; Python's bytecode cached in a temporary folder, as for an installed package), the
cases interleaved in each of ``--runs`` rounds, medians reported. ``--before REV`` runs the same two commands on
the package as of git revision ``REV`` (extracted to a temporary folder; same cache keys) in the same rounds, and
checks its output equals the current one. Reference row: loading the spaCy
model alone (what a warm run used to pay first).

Run: ``python bench/bench_warm_runs.py [--scales 1 10] [--runs 7] [--before e9c37ea]``; prints a Markdown table,
the machine and the load averages.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_cli_scaling import ROOT, load, machine, run_child, scaled_demo

_READ_TEXTS = """
import json, sys
import empathy
from empathy.distancing.cache import DistancingCache, text_key
from empathy.distancing.model import detector_key
with open(PATH, encoding="utf-8") as handle:
    lines = [line.rstrip("\\n") for line in handle]
keys = [text_key(line) for line in lines]
found = DistancingCache().get_many(*detector_key(), keys)
out = sys.stdout
for key in keys:
    out.write(json.dumps(found[key].to_json(), ensure_ascii=False))
    out.write("\\n")
"""

_READ_DATASET = """
import pandas as pd
import empathy
from empathy.distancing.cache import DistancingCache, text_key
from empathy.distancing.model import detector_key
from empathy.io import load_dataset
dataset = load_dataset(OUTPUTS, RATINGS)
texts = pd.unique(pd.concat([dataset.outputs["reference"], dataset.outputs["generation"]]))
found = DistancingCache().get_many(*detector_key(), [text_key(text) for text in texts])
assert len(found) == len(texts)
"""

#: The stand-in of ``metrics``, and the same started as the command starts (OpenBLAS on one thread: the command
#: line sets ``OPENBLAS_NUM_THREADS=1`` before NumPy loads, ``empathy.blas.one_blas_thread_from_start``).
STAND_IN = "import empathy + load_dataset + read the cached results"
STAND_IN_ONE_THREAD = "import empathy + load_dataset + read the cached results, OpenBLAS started on one thread"

_LOAD_MODEL = """
import spacy
from empathy.distancing.model import UNUSED_COMPONENTS, resolve_model_name
spacy.load(resolve_model_name(), exclude=list(UNUSED_COMPONENTS))
"""


def _texts_file(outputs: Path, folder: Path) -> Path:
    """The outputs' distinct texts, one per line (the ``distancing`` command's input; no text has a newline)."""
    import pandas as pd

    frame = pd.read_csv(outputs, dtype=str, keep_default_na=False)
    texts = pd.unique(pd.concat([frame["reference"], frame["generation"]]))
    path = folder / f"{outputs.stem}_texts.txt"
    path.write_text("".join(text.replace("\n", " ").replace("\r", " ") + "\n" for text in texts), encoding="utf-8")
    return path


def _checked(run: dict[str, object], label: str) -> bytes:
    if run["rc"] != 0:
        raise SystemExit(f"{label} failed ({run['rc']}): {run['stderr'].decode()[-2000:]}")  # type: ignore[union-attr]
    return run["stdout"]  # type: ignore[return-value]


def measure(scales: list[int], runs: int, before: str | None) -> list[dict[str, object]]:
    """Median CPU / wall / peak RSS of every case at every scale."""
    python = sys.executable
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        old = folder / "before"
        if before is not None:
            old.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", before, "empathy"], check=True,
                                     capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        # Bytecode is cached as for an installed package (pip compiles site-packages; a sandbox that sets
        # PYTHONDONTWRITEBYTECODE would otherwise compile every module of this source tree in every child).
        env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
               "EMPATHY_CACHE_DIR": str(folder / "cache"), "PYTHONPATH": str(ROOT),
               "PYTHONPYCACHEPREFIX": str(folder / "pycache")}
        for scale in scales:
            outputs, author, lexicon, n_texts = scaled_demo(scale, folder)
            texts = _texts_file(outputs, folder)
            metrics = [python, "-m", "empathy", "metrics", str(outputs), "--ratings", str(author), "--ratings",
                       str(lexicon), "--format", "json"]
            distancing = [python, "-m", "empathy", "distancing", str(texts)]
            expected_metrics = json.loads(_checked(run_child(metrics, env), "cold metrics"))  # fills the cache
            read_dataset = [python, "-c", f"OUTPUTS, RATINGS = {str(outputs)!r}, {[str(author), str(lexicon)]!r}\n"
                            f"{_READ_DATASET}"]
            cases: dict[str, tuple[list[str], Path] | tuple[list[str], Path, dict[str, str]]] = {
                "python -c 'import empathy'": ([python, "-c", "import empathy"], ROOT),
                "import empathy + read the texts and their cached results, write the JSON lines":
                    ([python, "-c", f"PATH = {str(texts)!r}\n{_READ_TEXTS}"], ROOT),
                "`distancing` warm (now)": (distancing, ROOT),
                STAND_IN: (read_dataset, ROOT),
                STAND_IN_ONE_THREAD: (read_dataset, ROOT, {"OPENBLAS_NUM_THREADS": "1"}),
                "`metrics` warm (now)": (metrics, ROOT),
                "`metrics --resamples 0` warm (now)": ([*metrics, "--resamples", "0"], ROOT),
                "reference: import spaCy and load the model": ([python, "-c", _LOAD_MODEL], ROOT),
            }
            if before is not None:
                cases[f"`distancing` warm (before, {before})"] = (distancing, old)
                cases[f"`metrics` warm (before, {before})"] = (metrics, old)
            samples: dict[str, list[dict[str, object]]] = {name: [] for name in cases}
            outputs_seen: dict[str, bytes] = {}
            loads = [os.getloadavg()[0]]
            for _ in range(runs):
                for name, (command, cwd, *extra) in cases.items():
                    run = run_child(command, {**env, **(extra[0] if extra else {})}, cwd)
                    outputs_seen[name] = _checked(run, name)
                    samples[name].append(run)
                loads.append(os.getloadavg()[0])
            distancing_now = outputs_seen["`distancing` warm (now)"]
            if outputs_seen["import empathy + read the texts and their cached results, write the JSON lines"] \
                    != distancing_now:
                raise SystemExit("the stand-in does not write what the command writes")
            for name, output in outputs_seen.items():
                # the current tree's JSON exactly; an older tree's to float rounding (a formula may have changed
                # the last bit, e.g. Spearman's rho of 0.19999999999999998 is now 0.2)
                exact = "(before" not in name
                if name.startswith("`metrics`") and not _same(json.loads(output), expected_metrics, exact):
                    raise SystemExit(f"{name}: not the cold run's JSON")
                if name.startswith("`metrics --resamples 0`") and _values(json.loads(output)) != _values(
                        expected_metrics):
                    raise SystemExit(f"{name}: not the cold run's values")
                if name.startswith("`distancing`") and output != distancing_now:
                    raise SystemExit(f"{name}: not the current command's output")
            for name, runs_of in samples.items():
                rows.append({"scale": scale, "texts": n_texts, "case": name,
                             "cpu": statistics.median(float(r["cpu"]) for r in runs_of),
                             "wall": statistics.median(float(r["wall"]) for r in runs_of),
                             "rss": statistics.median(float(r["rss_mib"]) for r in runs_of),
                             "load": (min(loads), max(loads))})
    return rows


def _same(a: object, b: object, exact: bool) -> bool:
    """Whether two JSON values are equal (``exact``) or equal but for floats within 1e-12 of each other."""
    if exact:
        return a == b
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], exact) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, exact) for x, y in zip(a, b, strict=True))
    return a == b


def _values(result: dict[str, list[dict[str, object]]]) -> list[tuple[object, ...]]:
    """The metric values of a ``metrics --format json`` result, without their intervals."""
    return [tuple(row[k] for k in ("task", "model", "scorer", "metric", "estimator", "value"))
            for row in result["metrics"]]


def markdown(rows: list[dict[str, object]]) -> str:
    """The table for docs/benchmarks.md: each command's CPU over its stand-in's."""
    lines = ["| scale | distinct texts | case | CPU (s) | wall (s) | peak RSS (MiB) | CPU / stand-in | "
             "CPU / stand-in on one BLAS thread | load avg |",
             "|---:|---:|---|---:|---:|---:|---:|---:|---|"]
    for row in rows:
        same_scale = {r["case"]: r["cpu"] for r in rows if r["scale"] == row["scale"]}
        case = str(row["case"])
        stand_in = like_for_like = None
        if case.startswith("`distancing`"):
            stand_in = same_scale["import empathy + read the texts and their cached results, write the JSON lines"]
        elif case.startswith("`metrics"):
            stand_in, like_for_like = same_scale[STAND_IN], same_scale[STAND_IN_ONE_THREAD]
        ratio = f"{float(row['cpu']) / float(stand_in):.2f}" if stand_in else ""
        ratio_one = f"{float(row['cpu']) / float(like_for_like):.2f}" if like_for_like else ""
        low, high = row["load"]  # type: ignore[misc]
        lines.append(f"| {row['scale']}x | {row['texts']:,} | {case} | {row['cpu']:.3f} | {row['wall']:.3f} | "
                     f"{row['rss']:.0f} | {ratio} | {ratio_one} | {low:.1f}-{high:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--before", metavar="REV", help="also run the two commands on the package at git REV")
    args = parser.parse_args()
    print(machine())
    print(load())
    rows = measure(args.scales, args.runs, args.before)
    print(markdown(rows))
    print(load())


if __name__ == "__main__":
    main()
