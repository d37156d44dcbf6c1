"""Benchmark: 1,000 judge calls against the local fake OpenAI server at 100 ms latency, concurrency 32.

Run: ``python bench/bench_judges.py [--calls 1000] [--latency 0.1] [--concurrency 32] [--json]``.

The server runs in a separate process (so that its event loop does not share the client's interpreter
lock) on 127.0.0.1. The first run makes every call; the ideal wall time is ``calls * latency /
concurrency`` and the target is within 1.5x of it. The second run, with the same cache file, must make
zero calls. Figures with the machine go into ``docs/benchmarks.md`` (section "Judges").
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

from machine import machine

ROOT = Path(__file__).resolve().parent.parent


def _load_server_class():
    spec = importlib.util.spec_from_file_location("fake_openai_server", ROOT / "tests" / "fake_openai_server.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["fake_openai_server"] = module
    spec.loader.exec_module(module)
    return module.FakeOpenAIServer


def _serve(latency: float, ports: multiprocessing.Queue, stop: multiprocessing.Event) -> None:
    server = _load_server_class()(latency=latency, record=False).start()
    ports.put(server.port)
    stop.wait(600)  # bounded: the benchmark never leaves a server behind for long
    server.stop()


def main(argv: list[str] | None = None) -> int:
    import openai
    import pandas as pd

    from empathy.judges import JudgeConfig, run_judge

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    ports: multiprocessing.Queue = multiprocessing.Queue()
    stop = multiprocessing.Event()
    process = multiprocessing.Process(target=_serve, args=(args.latency, ports, stop), daemon=True)
    process.start()
    try:
        port = ports.get(timeout=30)
        judge = JudgeConfig(name="bench", base_url=f"http://127.0.0.1:{port}/v1", model="bench-model",
                            concurrency=args.concurrency, timeout=30, max_retries=2)
        # one conflict-avoidance request per row: exactly `calls` distinct requests
        outputs = pd.DataFrame({"item_id": [f"i{i}" for i in range(args.calls)], "model": "m",
                                "reference": [f"Client narrative number {i}." for i in range(args.calls)],
                                "generation": "You should talk to them."})
        with tempfile.TemporaryDirectory() as folder:
            cache = Path(folder) / "bench.sqlite"
            load_before = os.getloadavg()[0]
            start, cpu_start = time.perf_counter(), time.process_time()
            first = run_judge(outputs, judge, protocols="conflict", cache=cache)
            cold, cpu = time.perf_counter() - start, time.process_time() - cpu_start
            start = time.perf_counter()
            second = run_judge(outputs, judge, protocols="conflict", cache=cache)
            warm = time.perf_counter() - start
    finally:
        stop.set()
        process.join(10)
    ideal = args.calls * args.latency / args.concurrency
    figures = {
        "calls": first.stats.calls, "latency_s": args.latency, "concurrency": args.concurrency,
        "ideal_s": round(ideal, 3), "wall_s": round(cold, 3), "ratio_to_ideal": round(cold / ideal, 3),
        "within_1_5x": cold <= 1.5 * ideal, "missing": int(first.ratings["value"].isna().sum()),
        "prompt_tokens": first.stats.prompt_tokens, "completion_tokens": first.stats.completion_tokens,
        "rerun_calls": second.stats.calls, "rerun_cache_hits": second.stats.cache_hits,
        "rerun_wall_s": round(warm, 3), "client_cpu_ms_per_call": round(cpu * 1000 / max(1, first.stats.calls), 3),
        "load_average_1min_before": round(load_before, 2), "machine": machine(), "openai": openai.__version__,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"{figures['calls']} calls at {args.latency * 1000:.0f} ms, concurrency {args.concurrency}: "
              f"{cold:.2f} s (ideal {ideal:.2f} s, ratio {cold / ideal:.2f}, target <= 1.5); "
              f"missing {figures['missing']}; client CPU {figures['client_cpu_ms_per_call']} ms/call; "
              f"load average before {load_before:.2f}")
        print(f"re-run: {second.stats.calls} calls, {second.stats.cache_hits} cache hits, {warm:.2f} s")
        print(f"machine: {figures['machine']}")
    ok = figures["within_1_5x"] and figures["rerun_calls"] == 0 and figures["missing"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
