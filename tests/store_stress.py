"""Several processes writing and reading one override store at once: how many acknowledged decisions are stored.

Run as ``python tests/store_stress.py STORE WORKER_ID SECONDS THREADS OUT [read]``: the worker writes distinct
decisions from ``THREADS`` threads (each also reads the store between writes) until ``SECONDS`` have passed, and
writes the keys whose ``set_override`` returned to ``OUT``, one a line, then every error. With ``read`` it opens the
store for reading only and reads until the deadline (its errors only). ``tests/test_store_processes.py`` starts the
workers and counts.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path


def work(location: str, worker: str, seconds: float, threads: int, out: Path, reading: bool = False) -> None:
    """Write (or read) until the deadline from ``threads`` threads; record every acknowledged key and every error."""
    from empathy.labels.backends import open_store

    store = open_store(location, read_only=reading)
    acknowledged: list[str] = []
    errors: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def loop(thread: int) -> None:
        count = 0
        while time.monotonic() < deadline:
            item = f"{worker}-{thread}-{count}"
            if reading:
                try:
                    store.decisions("ds")
                except Exception as error:
                    with lock:
                        errors.append(f"read {type(error).__name__}: {error}")
                count += 1
                continue
            try:
                store.set_override("ds", item, "m", "judge", "ca", count % 2, annotator=f"a{worker}",
                                   text_hash="h")
            except Exception as error:  # counted, the run goes on: the test asserts there are none
                with lock:
                    errors.append(f"{type(error).__name__}: {error}")
            else:
                with lock:
                    acknowledged.append(item)
            try:
                store.version()
                store.count("ds")
            except Exception as error:
                with lock:
                    errors.append(f"read {type(error).__name__}: {error}")
            count += 1

    workers = [threading.Thread(target=loop, args=(index,)) for index in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    out.write_text("".join(f"ok {key}\n" for key in acknowledged) + "".join(f"error {e}\n" for e in errors),
                   encoding="utf-8")


if __name__ == "__main__":
    work(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5]),
         reading=sys.argv[6:] == ["read"])
