"""Benchmark: the cost of committing every judge answer (durability) against committing every 64.

Run: ``python bench/bench_judge_cache.py [--answers 5000] [--repeats 5] [--json]`` (figures go to
docs/benchmarks.md, section "Long texts, caches and durability").

``JudgeCache.put`` of ``--answers`` answers (a realistic ~300-character raw answer each) into a fresh file,
with ``commit_every=1`` (the default since the SIGKILL finding of issue 11: no answer lost) and with
``commit_every=64`` (the old default, the baseline of the same run), in alternating order, ``--repeats``
times; the median wall and CPU time per answer are reported with their ratio. Then the SIGKILL case: a
child process stores 119 answers and kills itself; the survivors are counted for both settings.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RAW = json.dumps({"reasoning": "The response acknowledges the feeling but moves quickly to advice " * 4,
                  "label": 1})


def fill(path: Path, answers: int, commit_every: int) -> tuple[float, float]:
    """Wall and CPU seconds to put ``answers`` answers and close the cache."""
    from empathy.judges.cache import CachedAnswer, JudgeCache

    answer = CachedAnswer({"ca": 1.0}, RAW, 412, 57)
    wall, cpu = time.perf_counter(), time.process_time()
    with JudgeCache(path, commit_every=commit_every) as cache:
        for i in range(answers):
            cache.put(f"{i:064x}", answer, endpoint="http://127.0.0.1:1/v1", model="judge", protocol="ca-v2")
    return time.perf_counter() - wall, time.process_time() - cpu


KILLED = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from empathy.judges.cache import CachedAnswer, JudgeCache
    cache = JudgeCache({path!r}, commit_every={every})
    for i in range(119):
        cache.put(f"k{{i}}", CachedAnswer({{"ca": 1.0}}, "raw", 1, 1))
    os.kill(os.getpid(), signal.SIGKILL)
""")


def survivors(every: int) -> int:
    from empathy.judges.cache import JudgeCache

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "judges.sqlite"
        subprocess.run([sys.executable, "-c", KILLED.format(root=str(ROOT), path=str(path), every=every)],
                       capture_output=True, timeout=120)
        with JudgeCache(path) as cache:
            return len(cache)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    times: dict[int, list[tuple[float, float]]] = {1: [], 64: []}
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            for every in ((1, 64) if repeat % 2 == 0 else (64, 1)):
                path = Path(tmp) / f"c{repeat}-{every}.sqlite"
                times[every].append(fill(path, args.answers, every))
    per = {every: {"wall_us": 1e6 * statistics.median(w for w, _ in rows) / args.answers,
                   "cpu_us": 1e6 * statistics.median(c for _, c in rows) / args.answers}
           for every, rows in times.items()}
    result = {"answers": args.answers, "repeats": args.repeats, "per_answer": per,
              "wall_ratio": per[1]["wall_us"] / per[64]["wall_us"], "cpu_ratio": per[1]["cpu_us"] / per[64]["cpu_us"],
              "sigkill_survivors_of_119": {every: survivors(every) for every in (1, 64)},
              "load": [load_before, os.getloadavg()]}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    s = result["sigkill_survivors_of_119"]
    print(f"Load average before / after: {' / '.join(f'{x:.1f}' for x in load_before)} -> "
          f"{' / '.join(f'{x:.1f}' for x in os.getloadavg())}; {args.answers} answers, median of {args.repeats}.\n")
    print("| commit | wall us per answer | CPU us per answer | answers kept after SIGKILL at 119 |")
    print("| --- | --- | --- | --- |")
    for every in (64, 1):
        label = "every answer (default)" if every == 1 else "every 64 answers (old default, baseline)"
        print(f"| {label} | {per[every]['wall_us']:.0f} | {per[every]['cpu_us']:.0f} | {s[every]} |")
    print(f"\nRatio every answer / every 64: wall {result['wall_ratio']:.2f}x, CPU {result['cpu_ratio']:.2f}x.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
