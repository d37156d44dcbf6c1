"""Benchmark: peak memory of the LLM judge engine over 10^4 to 10^6 requests (issue 13: judging streams).

Judging stays one asyncio process (it waits on the network, not the CPU); what must not grow with the number
of requests is the engine's own working memory. Each size runs in a fresh child process against the local
fake OpenAI server (``tests/fake_openai_server.py``, in its own process, no latency) with no answer cache:

* ``engine``: :meth:`empathy.judges.llm.LLMEngine.run` over ``N`` distinct conflict-avoidance requests built
  beforehand. Reported: the RSS once the requests are built, the peak RSS during the run (sampled every
  20 ms from ``/proc/self/statm``), their difference per request, wall time and requests per second. What
  the run must keep is the outcome of each request (a dict entry, its values and the raw answer); anything
  above that per request (a task and coroutine frame per request, say) is what "flat" rules out.

With ``--transport mock`` the answers come from an in-process ``httpx.MockTransport`` (same client, same
request bodies, no socket): the HTTP fake serves about 100 requests/s on this loaded machine.

Run: ``python bench/bench_judge_memory.py [--sizes 10000 100000] [--concurrency 64] [--transport mock]``;
prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_judges import _serve, machine  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * PAGE


def _mock_client() -> object:
    """An ``httpx`` client answering every chat request in-process (no socket): the fake server's answer."""
    import httpx

    body = {"choices": [{"message": {"content": '{"conflict_avoidance": 1}'}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}}

    def handler(request: httpx.Request) -> httpx.Response:
        json.loads(request.content)  # the client's body is parsed, as a server would
        return httpx.Response(200, json=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def child(n: int, port: int, concurrency: int) -> None:
    """One size: build the requests, run the engine while sampling RSS, print JSON figures.

    ``port`` 0 answers in-process (:func:`_mock_client`) instead of through the fake server.
    """
    from empathy.judges import JudgeConfig
    from empathy.judges.llm import LLMEngine, make_request
    from empathy.judges.prompts import CONFLICT_VARIANTS

    judge = JudgeConfig(name="bench", base_url=f"http://127.0.0.1:{port}/v1", model="bench-model",
                        concurrency=concurrency, timeout=60, max_retries=2)
    protocol = CONFLICT_VARIANTS[judge.conflict_protocol]
    requests = [make_request(judge, protocol, reference=f"Client narrative number {i}.",
                             generation="You should talk to them.") for i in range(n)]
    built = _rss()
    peak = [built]
    running = threading.Event()
    running.set()

    def sample() -> None:
        while running.is_set():
            peak[0] = max(peak[0], _rss())
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    engine = LLMEngine(judge, api_key="k", cache=None, http_client=_mock_client() if port == 0 else None)
    start = time.perf_counter()
    outcomes = asyncio.run(engine.run(requests))
    wall = time.perf_counter() - start
    running.clear()
    sampler.join()
    peak[0] = max(peak[0], _rss())
    missing = sum(o.values is None for o in outcomes.values())
    print(json.dumps({"requests": n, "calls": engine.stats.calls, "missing": missing, "built_mb": built / 2**20,
                      "peak_mb": peak[0] / 2**20, "growth_mb": (peak[0] - built) / 2**20,
                      "growth_bytes_per_request": (peak[0] - built) / n, "wall_s": wall, "per_s": n / wall}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--transport", choices=("http", "mock"), default="http",
                        help="http: the fake server in its own process; mock: an in-process httpx transport "
                        "(no socket, so 10^5-10^6 requests take minutes, not hours, on a loaded machine)")
    parser.add_argument("--child", type=int, nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    ports: multiprocessing.Queue = multiprocessing.Queue()
    stop = multiprocessing.Event()
    server = multiprocessing.Process(target=_serve, args=(0.0, ports, stop), daemon=True)
    server.start()
    rows = []
    try:
        port = ports.get(timeout=30) if args.transport == "http" else 0
        for n in args.sizes:
            load = os.getloadavg()[0]
            done = subprocess.run([sys.executable, __file__, "--child", str(n), str(port), str(args.concurrency)],
                                  capture_output=True, text=True, check=True)
            rows.append({**json.loads(done.stdout.strip().splitlines()[-1]), "load": load})
    finally:
        stop.set()
        server.join(10)
    print(f"machine: {machine()}; concurrency {args.concurrency}; transport {args.transport} without latency\n")
    print("| requests | calls | missing | RSS with requests built (MB) | peak RSS (MB) | growth (MB) | "
          "growth per request (bytes) | wall (s) | requests/s | load avg |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['requests']:,} | {r['calls']:,} | {r['missing']} | {r['built_mb']:.0f} | {r['peak_mb']:.0f} | "
              f"{r['growth_mb']:.0f} | {r['growth_bytes_per_request']:.0f} | {r['wall_s']:.1f} | "
              f"{r['per_s']:.0f} | {r['load']:.2f} |")


if __name__ == "__main__":
    main()
