"""Benchmark of the distancing detectors (figures go to docs/benchmarks.md, section "Distancing detectors").

Run: ``python bench/bench_distancing.py [--texts 5000] [--json] [--before REV] [--large-cache-only]``.

All measurements come from one run on the same texts (generated from the hand-written templates below, 3-5
sentences each, no third-party text):

* throughput of bare ``nlp.pipe`` with the model's full default pipeline (all components, NER included);
* throughput of a parse with exactly the detector's components (same ``nlp.pipe``, docs consumed);
* throughput of ``analyze(texts, cache=False)``; the rules' cost is also timed per document inside one
  pass (time in the rules / time waiting for the parse), which is robust to noise from shared cores;
* a first run that fills an empty cache and a cached re-run (ratio of the two);
* peak memory while streaming 1k and 5k texts (fresh subprocess each: tracemalloc peak and peak RSS);
* a large shared cache: 1,000 cached texts looked up one call per text (as the app highlights a text) and in
  one call, in a cache of 1k rows and of 201k rows (fresh subprocess each, CPU time). With ``--before REV``
  the same case also runs on the package as of git revision ``REV`` (extracted to a temporary folder), so a
  fix is measured against the code it replaced in the same run;
* whole process (issue 25 item 6): ``python -m empathy distancing FILE`` on ``--whole-texts`` texts (2,000) with
  an empty cache (parse, rules, cache writes, JSON lines out) against a bare process that loads the same
  pipeline (``spacy.load`` with the detector's components) and runs ``nlp.pipe`` over the file's lines, fresh
  processes alternating in ``--rounds`` rounds, CPU of each child (``os.wait4``, its worker processes included)
  and wall time; variants: batch size 1,000 (both) and ``--n-process 2`` (output checked identical).

The honest comparison is at equal pipelines: ``analyze`` against bare ``nlp.pipe`` with the same components
(NER excluded in both). The full default pipeline (with NER) is reported too, labelled as such, because it
is what a user calling ``spacy.load`` gets, but the detector's speed-up against it comes from skipping NER.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import spacy
from bench_cli_scaling import ROOT, run_child
from machine import cpu_model

SUBJECTS = ["My sister", "The neighbour", "Our manager", "My best friend", "The doctor", "My father", "Anna",
            "The new teacher", "My flatmate", "Tom", "The landlord", "My grandmother"]
OBJECTS = ["the report", "the car", "the letter", "the garden", "the proposal", "the kitchen", "the contract",
           "the old house", "the budget", "the schedule", "the photos", "the invitation"]
PARTICIPLES = ["cancelled", "approved", "stolen", "repaired", "sold", "delayed", "rejected", "painted",
               "postponed", "signed", "lost", "finished"]
PAST_VERBS = ["called", "visited", "helped", "ignored", "thanked", "met", "missed", "hugged", "warned",
              "forgave"]
ADJECTIVES = ["hard", "important", "strange", "obvious", "sad", "easy", "necessary", "surprising"]
EMOTIONS = ["lonely", "angry", "anxious", "hopeful", "exhausted", "relieved", "scared", "grateful"]
NOMINALS = ["decision", "announcement", "argument", "failure", "refusal", "agreement", "disappointment",
            "explanation", "happiness", "movement", "development", "payment"]
TIMES = ["on Monday", "last week", "yesterday", "this morning", "in March", "after lunch", "at night"]
PLACES = ["station", "office", "hospital", "park", "school", "market"]

TEMPLATES = [
    "{subj} told me that {obj} was {part} {time}.",
    "{obj_cap} got {part} {time}.",
    "There is a problem with {obj} again.",
    "It is {adj} to talk about it when you feel {emo}.",
    "The {nom} surprised everyone at the {place}.",
    "I {past} {subj_low} because I felt {emo}.",
    "{subj} and I {past} the team {time}.",
    "Someone should look at {obj} before Friday.",
    "We had a long talk about the {nom}.",
    "{subj} was {part_adj} after the meeting at the {place}.",
    "It seems that {obj} will be {part} soon.",
    "One never knows how these things end.",
    "People say that the {nom} was a mistake.",
    "I still remember the day we {past} {subj_low}.",
    "{subj} {past} me {time}, and I cried.",
    "The {nom} of {obj} was {part} by {subj_low}.",
    "Honestly, I feel {emo} about the whole thing.",
    "Mistakes were made, and {obj} was never {part}.",
    "Why was {obj} {part} without asking me?",
    "{subj} wrote {obj} in {n} minutes.",
]
PARTICIPLE_ADJ = ["tired", "worried", "very upset", "interested", "relieved"]


def _sentence(rng: random.Random) -> str:
    template = rng.choice(TEMPLATES)
    subj = rng.choice(SUBJECTS)
    obj = rng.choice(OBJECTS)
    return template.format(
        subj=subj, subj_low=subj[0].lower() + subj[1:] if subj.split()[0] in ("My", "The", "Our") else subj,
        obj=obj, obj_cap=obj[0].upper() + obj[1:], part=rng.choice(PARTICIPLES), time=rng.choice(TIMES),
        past=rng.choice(PAST_VERBS), adj=rng.choice(ADJECTIVES), emo=rng.choice(EMOTIONS),
        nom=rng.choice(NOMINALS), place=rng.choice(PLACES), part_adj=rng.choice(PARTICIPLE_ADJ),
        n=rng.randint(2, 90),
    )


def generate_texts(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct texts of 3-5 template sentences each (deterministic for a seed)."""
    rng = random.Random(seed)
    seen: set[str] = set()
    texts: list[str] = []
    while len(texts) < n:
        text = " ".join(_sentence(rng) for _ in range(rng.randint(3, 5)))
        if text not in seen:
            seen.add(text)
            texts.append(text)
    return texts


def _stream(n: int, seed: int = 0) -> Iterator[str]:
    """The same texts as :func:`generate_texts`, generated lazily (memory test: nothing held)."""
    rng = random.Random(seed)
    seen: set[int] = set()
    produced = 0
    while produced < n:
        text = " ".join(_sentence(rng) for _ in range(rng.randint(3, 5)))
        key = hash(text)
        if key not in seen:
            seen.add(key)
            produced += 1
            yield text


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _memory_child(n: int) -> dict[str, float]:
    """Runs in a fresh process: stream ``n`` texts through analyze and report peak memory."""
    import tracemalloc

    from empathy.distancing import analyze, load_model

    load_model()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    count = 0
    for _ in analyze(_stream(n, seed=1), cache=False):
        count += 1
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"texts": count, "tracemalloc_peak_mb": peak / 2**20, "peak_rss_mb": rss_after / 1024,
            "rss_growth_mb": (rss_after - rss_before) / 1024}


def _cache_child(extra_rows: int) -> dict[str, float]:
    """Runs in a fresh process: 1,000 texts cached in a cache padded to ``extra_rows`` more rows; CPU time of
    looking them up one ``analyze_text`` call per text and in one ``analyze`` call."""
    import hashlib

    from empathy.distancing import DistancingCache, analyze, analyze_text, load_model, model_info
    from empathy.distancing.result import DistancingResult

    load_model()
    info = model_info()
    texts = generate_texts(1000, seed=3)
    with tempfile.TemporaryDirectory() as tmp, DistancingCache(tmp) as cache:
        list(analyze(texts, cache=cache))
        filler = DistancingResult(sentences=1, counts={"nominalization": 0, "impersonal": 0, "agentless": 0},
                                  spans=())
        for start in range(0, extra_rows, 20_000):
            cache.put_many(info["model"], info["version"], info["rules"],
                           ((hashlib.sha256(f"filler {i}".encode()).hexdigest(), filler)
                            for i in range(start, min(extra_rows, start + 20_000))))
        rows = len(cache)
        start = time.process_time()
        for text in texts:
            analyze_text(text, cache=cache)
        per_text = time.process_time() - start
        start = time.process_time()
        list(analyze(texts, cache=cache))
        one_call = time.process_time() - start
    return {"rows": rows, "per_text_cpu": per_text, "one_call_cpu": one_call}


def _run_cache_case(extra_rows: int, pythonpath: str | None = None) -> dict[str, float]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, __file__, "--cache-child", str(extra_rows)], capture_output=True,
                         text=True, check=True, env=env)
    return json.loads(out.stdout)


def large_cache(before: str | None) -> dict[str, dict[str, dict[str, float]]]:
    """The large-shared-cache case for the current code and, with ``before``, for the package at that rev."""
    versions: dict[str, str | None] = {"current": None}
    with tempfile.TemporaryDirectory() as old:
        if before is not None:
            _extract(before, old)
            versions[f"before ({before})"] = old
        return {name: {str(rows): _run_cache_case(rows, path) for rows in (0, 200_000)}
                for name, path in versions.items()}


_BARE = """
import spacy
from empathy.distancing.model import UNUSED_COMPONENTS, resolve_model_name
nlp = spacy.load(resolve_model_name(), exclude=list(UNUSED_COMPONENTS))
with open(PATH, encoding="utf-8") as handle:
    lines = [line.rstrip("\\n") for line in handle]
for doc in nlp.pipe(lines, batch_size=BATCH):
    pass
"""


def _extract(revision: str, folder: str) -> None:
    """The package as of git ``revision``, extracted into ``folder`` (``folder/empathy``)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    archive = subprocess.run(["git", "-C", root, "archive", revision, "empathy"], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)


def whole_process(n_texts: int, rounds: int, before: str | None = None) -> dict[str, list[dict[str, float]]]:
    """Per variant, one ``{"cpu", "wall"}`` per round: bare ``nlp.pipe`` and the ``distancing`` command as fresh
    processes (the command with an empty cache each time), alternating; raises if an output differs. With
    ``before``, the command of the package at that git revision runs in the same rounds."""
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        old = os.path.join(tmp, "before")
        if before is not None:
            os.mkdir(old)
            _extract(before, old)
        path = os.path.join(tmp, "texts.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("".join(text + "\n" for text in generate_texts(n_texts, seed=5)))
        variants = {
            "bare nlp.pipe, batch 256": ([python, "-c", f"PATH, BATCH = {path!r}, 256\n{_BARE}"], []),
            "distancing, batch 256": ([python, "-m", "empathy", "distancing", path], ["--batch-size", "256"]),
            "bare nlp.pipe, batch 1000": ([python, "-c", f"PATH, BATCH = {path!r}, 1000\n{_BARE}"], []),
            "distancing, batch 1000": ([python, "-m", "empathy", "distancing", path], ["--batch-size", "1000"]),
            "distancing, batch 256, --n-process 2": ([python, "-m", "empathy", "distancing", path],
                                                     ["--batch-size", "256", "--n-process", "2"]),
        }
        if before is not None:
            variants[f"distancing (before, {before}), batch 256"] = (
                [python, "-m", "empathy", "distancing", path], ["--batch-size", "256"])
        results: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
        expected = None
        for index in range(rounds):
            for name, (command, extra) in variants.items():
                env = {**os.environ, "EMPATHY_CACHE_DIR": os.path.join(tmp, f"cache-{index}-{len(results[name])}-"
                                                                              f"{hash(name) & 0xffff}")}
                done = run_child([*command, *extra], env, Path(old if "(before" in name else ROOT))
                if done["rc"] != 0:
                    raise SystemExit(f"{name} failed: {done['stderr'].decode()[-2000:]}")  # type: ignore[union-attr]
                if name.startswith("distancing"):
                    expected = done["stdout"] if expected is None else expected
                    if done["stdout"] != expected:
                        raise SystemExit(f"{name}: output differs from the first distancing run")
                results[name].append({"cpu": float(done["cpu"]), "wall": float(done["wall"]),  # type: ignore[arg-type]
                                      "load": os.getloadavg()[0]})
    return results


def whole_process_table(results: dict[str, list[dict[str, float]]], n_texts: int) -> str:
    """Markdown: per variant the median CPU and wall, and the per-round ratio bare / ours at equal batch size."""
    lines = [f"Whole process, {n_texts:,} texts, {len(next(iter(results.values())))} alternating rounds (fresh "
             "processes; CPU includes worker processes):", "",
             "| variant | CPU s (median) | wall s (median) | bare / this, CPU: median (per round) | bare / this, wall "
             "(median) |", "| --- | --- | --- | --- | --- |"]
    for name, runs in results.items():
        cpu = statistics.median(r["cpu"] for r in runs)
        wall = statistics.median(r["wall"] for r in runs)
        bare = results.get("bare nlp.pipe, batch " + ("1000" if "batch 1000" in name else "256"))
        ratio = wall_ratio = ""
        if bare is not None and not name.startswith("bare"):
            per_round = [b["cpu"] / r["cpu"] for b, r in zip(bare, runs, strict=True)]
            ratio = f"{statistics.median(per_round):.3f} ({', '.join(f'{x:.2f}' for x in per_round)})"
            wall_ratio = f"{statistics.median(b['wall'] / r['wall'] for b, r in zip(bare, runs, strict=True)):.3f}"
        lines.append(f"| {name} | {cpu:.2f} | {wall:.2f} | {ratio} | {wall_ratio} |")
    loads = [r["load"] for runs in results.values() for r in runs]
    lines.append("")
    lines.append(f"Load average (1 min) during the rounds: {min(loads):.1f}-{max(loads):.1f}.")
    return "\n".join(lines)


def run(n_texts: int, before: str | None = None, whole_texts: int = 2000, rounds: int = 5) -> dict:
    """Every measurement of the module docstring, on ``n_texts`` generated texts."""
    from empathy.distancing import DistancingCache, analyze, base_vocabularies, load_model, model_info
    from empathy.distancing.rules import analyze_doc

    texts = generate_texts(n_texts)
    n_sentences_hint = sum(t.count(".") + t.count("?") for t in texts)
    info = model_info()
    ours_nlp = load_model()
    full_nlp = spacy.load(info["model"])  # every component, NER included
    verbs, adjectives = base_vocabularies(ours_nlp)

    # Warm-up (first-batch allocations, lazy tables) so that no variant pays it.
    list(full_nlp.pipe(texts[:200]))
    list(analyze(texts[:200], cache=False))

    t_full = _timed(lambda: [None for _ in full_nlp.pipe(texts, batch_size=256)])
    t_parse = _timed(lambda: [None for _ in ours_nlp.pipe(texts, batch_size=256)])
    t_ours = _timed(lambda: [None for _ in analyze(texts, cache=False, batch_size=256)])

    # Decomposition within one pass: time spent in the rules vs waiting for parsed docs.
    memo: dict[str, str | None] = {}
    in_rules = 0.0
    start = time.perf_counter()
    for doc in ours_nlp.pipe(texts, batch_size=256):
        t0 = time.perf_counter()
        analyze_doc(doc, verbs, adjectives, memo)
        in_rules += time.perf_counter() - t0
    t_pass = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp, DistancingCache(tmp) as cache:
        t_first = _timed(lambda: [None for _ in analyze(texts, cache=cache)])
        t_cached = _timed(lambda: [None for _ in analyze(texts, cache=cache)])
        cached_rows = len(cache)

    memory = {}
    for n in (1000, 5000):
        out = subprocess.run([sys.executable, __file__, "--memory-child", str(n)], capture_output=True,
                             text=True, check=True)
        memory[str(n)] = json.loads(out.stdout)

    return {
        "whole_process": whole_process(whole_texts, rounds, before),
        "whole_texts": whole_texts,
        "large_cache": large_cache(before),
        "load_average": os.getloadavg(),
        "texts": n_texts,
        "sentences_approx": n_sentences_hint,
        "detector": info,
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version()},
        "seconds": {"full_pipeline": t_full, "parse_same_components": t_parse, "analyze_no_cache": t_ours,
                    "decomposed_pass": t_pass, "decomposed_rules": in_rules, "cache_first_run": t_first,
                    "cache_rerun": t_cached},
        "texts_per_second": {"full_pipeline": n_texts / t_full, "parse_same_components": n_texts / t_parse,
                             "analyze_no_cache": n_texts / t_ours, "cache_rerun": n_texts / t_cached},
        "ratios": {
            "speedup_vs_full_pipeline": t_full / t_ours,
            "speedup_vs_equal_pipeline": t_parse / t_ours,
            "overhead_vs_same_parse_end_to_end": t_ours / t_parse - 1.0,
            "rules_share_of_parse_in_one_pass": in_rules / (t_pass - in_rules),
            "cached_rerun_speedup": t_first / t_cached,
            "tracemalloc_peak_5k_over_1k": memory["5000"]["tracemalloc_peak_mb"]
            / memory["1000"]["tracemalloc_peak_mb"],
            "peak_rss_5k_over_1k": memory["5000"]["peak_rss_mb"] / memory["1000"]["peak_rss_mb"],
        },
        "cache_rows": cached_rows,
        "memory": memory,
    }


def markdown(result: dict) -> str:
    """The figures as the Markdown section body for docs/benchmarks.md."""
    s, r, tps, m = result["seconds"], result["ratios"], result["texts_per_second"], result["memory"]
    d = result["detector"]
    lines = [
        f"Machine: {result['machine']['cpu']}, {result['machine']['cores']} cores (shared), Python "
        f"{result['machine']['python']}; spaCy {d['spacy']}, {d['model']} {d['version']}, rules {d['rules']}.",
        f"Input: {result['texts']} generated texts of 3-5 sentences (about {result['sentences_approx']} sentences).",
        "Load average at the end of the run: " + " / ".join(f"{x:.1f}" for x in result["load_average"]) + ".",
        "",
        "| measurement | seconds | texts/s |",
        "| --- | --- | --- |",
        f"| bare `nlp.pipe`, full default pipeline (with NER) | {s['full_pipeline']:.1f} | "
        f"{tps['full_pipeline']:.0f} |",
        f"| `nlp.pipe` with the detector's components only | {s['parse_same_components']:.1f} | "
        f"{tps['parse_same_components']:.0f} |",
        f"| `analyze(cache=False)` (parse + rules) | {s['analyze_no_cache']:.1f} | {tps['analyze_no_cache']:.0f} |",
        f"| `analyze` first run, filling an empty cache | {s['cache_first_run']:.1f} | "
        f"{result['texts'] / s['cache_first_run']:.0f} |",
        f"| `analyze` cached re-run | {s['cache_rerun']:.2f} | {tps['cache_rerun']:.0f} |",
        "",
        "| ratio | value | target |",
        "| --- | --- | --- |",
        f"| bare `nlp.pipe` at equal components / detector time (the honest ratio) | "
        f"{r['speedup_vs_equal_pipeline']:.2f}x | >= 0.9 |",
        f"| bare `nlp.pipe` with NER (full default pipeline) / detector time | "
        f"{r['speedup_vs_full_pipeline']:.2f}x | not a claim: NER skipped |",
        f"| rules cost over the same parse, end to end | {100 * r['overhead_vs_same_parse_end_to_end']:+.1f}% | "
        "<= 10% |",
        f"| rules cost over the same parse, timed inside one pass | "
        f"{100 * r['rules_share_of_parse_in_one_pass']:.1f}% | <= 10% |",
        f"| first run / cached re-run | {r['cached_rerun_speedup']:.0f}x | >= 50x |",
        f"| tracemalloc peak, 5k / 1k texts | {m['5000']['tracemalloc_peak_mb']:.1f} MB / "
        f"{m['1000']['tracemalloc_peak_mb']:.1f} MB = {r['tracemalloc_peak_5k_over_1k']:.2f} | flat (~1) |",
        f"| peak RSS, 5k / 1k texts | {m['5000']['peak_rss_mb']:.0f} MB / {m['1000']['peak_rss_mb']:.0f} MB = "
        f"{r['peak_rss_5k_over_1k']:.2f} | flat (~1) |",
        "",
        "Large shared cache: 1,000 cached texts, CPU seconds (fresh subprocess each).",
        "",
        "| code | cache rows | one `analyze_text` per text | one `analyze` call | per-text ratio to 1k rows |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, cases in result["large_cache"].items():
        small = cases["0"]["per_text_cpu"]
        for case in cases.values():
            lines.append(f"| {name} | {case['rows']:,} | {case['per_text_cpu']:.2f} | {case['one_call_cpu']:.3f} | "
                         f"{case['per_text_cpu'] / small:.2f}x |")
    lines += ["", whole_process_table(result["whole_process"], result["whole_texts"])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=5000)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    parser.add_argument("--before", metavar="REV", help="also run the large-cache case on the package at git REV")
    parser.add_argument("--large-cache-only", action="store_true", help="run only the large-cache case")
    parser.add_argument("--whole-process-only", action="store_true", help="run only the whole-process case")
    parser.add_argument("--whole-texts", type=int, default=2000, help="texts of the whole-process case")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds of the whole-process case")
    parser.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cache-child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child is not None:
        print(json.dumps(_memory_child(args.memory_child)))
        return 0
    if args.cache_child is not None:
        print(json.dumps(_cache_child(args.cache_child)))
        return 0
    if args.whole_process_only:
        print(whole_process_table(whole_process(args.whole_texts, args.rounds, args.before), args.whole_texts))
        return 0
    if args.large_cache_only:
        cases = large_cache(args.before)
        print(json.dumps({"large_cache": cases, "load_average": os.getloadavg()}, indent=2))
        return 0
    if args.texts < 1000:
        parser.error("--texts must be at least 1000")
    result = run(args.texts, args.before, args.whole_texts, args.rounds)
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
