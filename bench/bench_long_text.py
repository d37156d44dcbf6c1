"""Benchmark: one long text (0.5, 1, 2 and 5 MB) through distancing, standard and metrics: time and peak RSS.

Run: ``python bench/bench_long_text.py [--sizes 0.5,1,2,5] [--json]`` (figures go to docs/benchmarks.md,
section "Long texts").

The long text is built from real sentences (the UD English EWT dev sentences when ``../shared`` has them,
else the demo data's texts), drawn with a fixed seed and grouped into paragraphs of 3-8 sentences. Each
measurement runs in a fresh subprocess, so its peak resident memory (``ru_maxrss``) is its own:

* ``distancing``: ``analyze([text], cache=False)``;
* ``standard``: ``compute_standard`` (ROUGE-L, chrF, CIDEr-D, tfidf-cosine) on the demo outputs with the
  first generation replaced by the long text;
* ``metrics``: the Python API of ``python -m empathy metrics``: ``load_dataset`` of that outputs file (CSV)
  with the demo ratings, then ``compute_metrics`` with an empty distancing cache;
* ``rouge-both``: ROUGE-L of a pair where *both* texts are long (the quadratic-time case; bounded memory).

Baselines from the same run: each command on the unchanged demo data (size 0), subtracted to give the cost
of the long text; scaling is reported as the time per MB and the ratio of each size's time to the
smallest size's, against the ratio of their lengths (linear: the two ratios match).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine

ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000
CASES = ("distancing", "standard", "metrics", "rouge-both")


def sentences() -> list[str]:
    """Real English sentences: UD EWT dev when available, else the demo outputs' texts split at '. '."""
    from empathy.paths import shared_dataset

    folder = shared_dataset("ud-english-ewt")
    if folder is not None and (folder / "en_ewt-ud-dev.conllu").is_file():
        lines = (folder / "en_ewt-ud-dev.conllu").read_text(encoding="utf-8").splitlines()
        return [line[len("# text = "):].strip() for line in lines if line.startswith("# text = ")]
    import pandas as pd

    frame = pd.read_csv(ROOT / "data" / "outputs.csv")
    texts = pd.concat([frame["reference"], frame["generation"]]).dropna().unique()
    return [s.strip() + "." for t in texts for s in str(t).split(". ") if s.strip()]


def long_text(size: int, seed: int = 0) -> str:
    """About ``size`` characters of paragraphs of 3-8 sentences drawn with replacement (fixed seed)."""
    rng = random.Random(seed)
    pool = sentences()
    paragraphs: list[str] = []
    length = 0
    while length < size:
        paragraph = " ".join(rng.choice(pool) for _ in range(rng.randint(3, 8)))
        paragraphs.append(paragraph)
        length += len(paragraph) + 2
    return "\n\n".join(paragraphs)[:size]


def _child(case: str, size: int) -> dict[str, float]:
    """Runs in a fresh process: one case on a text of ``size`` characters (0 = the demo data unchanged)."""
    import pandas as pd

    text = long_text(size) if size else ""
    outputs = pd.read_csv(ROOT / "data" / "outputs.csv", dtype=str, keep_default_na=False)
    if size:
        outputs.loc[0, "generation"] = text
    # Imports and model loading are not part of the measured work.
    if case in ("distancing", "metrics"):
        from empathy.distancing import analyze, load_model

        load_model()
    from empathy.evaluate import compute_metrics
    from empathy.io import load_dataset
    from empathy.standard import compute_standard, rouge_l

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "outputs.csv"
        outputs.to_csv(path, index=False)
        os.environ["EMPATHY_CACHE_DIR"] = str(Path(tmp) / "cache")
        cpu, wall = time.process_time(), time.perf_counter()
        if case == "distancing":
            detail = next(analyze([text], cache=False)).sentences
        elif case == "standard":
            detail = float(compute_standard(outputs).per_item["rouge_l"].iloc[0])
        elif case == "metrics":
            dataset = load_dataset(path, [ROOT / "data" / "ratings_author.csv"])
            report = compute_metrics(dataset.outputs, dataset.ratings)
            detail = len(report.table)
        elif case == "rouge-both":
            detail = float(rouge_l([long_text(size, seed=1) if size else ""], [text])[0])
        else:
            raise ValueError(f"unknown case {case!r}")
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"cpu": cpu, "wall": wall, "peak_rss_mb": rss / 1024, "rss_before_mb": rss_before / 1024,
            "detail": detail}


def run_case(case: str, size: int, timeout: float) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", case, str(size)], capture_output=True, text=True,
                         timeout=timeout)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout)


def markdown(result: dict) -> str:
    lines = [f"Machine: {result['machine']}; load average before / after: "
             f"{' / '.join(f'{x:.1f}' for x in result['load_before'])} -> "
             f"{' / '.join(f'{x:.1f}' for x in result['load_after'])}.", "",
             "| case | size | CPU s | wall s | peak RSS MB | CPU s per MB (minus size 0) | time ratio / size ratio |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for case, rows in result["cases"].items():
        base = rows.get("0", {})
        sized = [(int(k), v) for k, v in rows.items() if int(k) > 0 and "cpu" in v]
        first = sized[0] if sized else None
        for key, row in rows.items():
            size = int(key)
            label = "demo only" if size == 0 else f"{size / MB:g} MB"
            if "error" in row:
                lines.append(f"| {case} | {label} | error: {row['error']} | | | | |")
                continue
            per_mb = ratio = ""
            if size and "cpu" in base:
                per_mb = f"{(row['cpu'] - base['cpu']) / (size / MB):.2f}"
            if size and first is not None and "cpu" in base and first[0] != size:
                grow = (row["cpu"] - base["cpu"]) / max(first[1]["cpu"] - base["cpu"], 1e-9)
                ratio = f"{grow:.2f} / {size / first[0]:.2f}"
            lines.append(f"| {case} | {label} | {row['cpu']:.2f} | {row['wall']:.2f} | {row['peak_rss_mb']:.0f} | "
                         f"{per_mb} | {ratio} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.5,1,2,5", help="text sizes in MB, comma-separated")
    parser.add_argument("--cases", default=",".join(CASES), help=f"subset of {','.join(CASES)}")
    parser.add_argument("--rouge-both-max", type=float, default=2.0,
                        help="largest size (MB) for the quadratic-time rouge-both case")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per measurement")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("CASE", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child[0], int(args.child[1]))))
        return 0
    sizes = [int(float(s) * MB) for s in args.sizes.split(",") if s.strip()]
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    result: dict = {"machine": machine(system=False), "load_before": os.getloadavg(), "cases": {}}
    for case in cases:
        result["cases"][case] = {}
        for size in [0, *sizes]:
            if case == "rouge-both" and size > args.rouge_both_max * MB:
                continue
            result["cases"][case][str(size)] = run_case(case, size, args.timeout)
            print(f"{case} {size}: {result['cases'][case][str(size)]}", file=sys.stderr, flush=True)
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
