"""One BLAS thread around the package's matrix products (empathy.blas): set while any block runs, restored after the
last, nested and from several threads alike."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from empathy import blas
from empathy.blas import one_blas_thread
from empathy.bootstrap import cluster_means

_BLOCK_AND_RESTORE = """
import numpy  # its BLAS loaded, for threadpoolctl to find
from threadpoolctl import threadpool_info, threadpool_limits
from empathy.blas import one_blas_thread

def _blas_threads():
    return [int(library["num_threads"]) for library in threadpool_info() if library["user_api"] == "blas"]

with threadpool_limits(limits=2, user_api="blas"):  # as on a two-core machine, whatever this one has
    assert _blas_threads() and set(_blas_threads()) == {2}
    with one_blas_thread():
        assert set(_blas_threads()) == {1}
        with one_blas_thread():
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {1}  # the inner block's end leaves the outer one's limit
    assert set(_blas_threads()) == {2}
print("ok")
"""


def test_a_block_runs_on_one_thread_and_the_callers_setting_comes_back():
    # in a fresh interpreter, on its main thread: OpenBLAS reports a limit only for the thread its library counts
    # as the main one, and a test worker that has run other files once saw the outer limit inside the block
    env = {k: v for k, v in os.environ.items() if k not in blas.THREAD_VARIABLES}
    done = subprocess.run([sys.executable, "-c", _BLOCK_AND_RESTORE], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


class _Recorder:
    """A stand-in controller recording which thread limits and restores (OpenBLAS's own value, read from another
    thread, does not show a limit set outside the main thread)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def limit(self, *, limits: int, user_api: str) -> _Recorder:
        assert (limits, user_api) == (1, "blas")
        with self.lock:
            self.calls.append((threading.current_thread().name, "limit"))
        return self

    def restore_original_limits(self) -> None:
        with self.lock:
            self.calls.append((threading.current_thread().name, "restore"))


def test_every_thread_limits_its_own_products_once_per_outermost_block(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    recorder = _Recorder()
    monkeypatch.setattr(blas, "_controller", lambda: recorder)
    a_inside, b_inside, a_left = (threading.Event() for _ in range(3))

    def first() -> None:
        with one_blas_thread():
            with one_blas_thread():  # nested: no second limit
                a_inside.set()
                assert b_inside.wait(30)
        a_left.set()

    def second() -> None:
        assert a_inside.wait(30)
        with one_blas_thread():  # while the first thread's block runs: this thread limits its own
            b_inside.set()
            assert a_left.wait(30)

    threads = [threading.Thread(target=first, name="a"), threading.Thread(target=second, name="b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert recorder.calls == [("a", "limit"), ("b", "limit"), ("a", "restore"), ("b", "restore")]


def test_a_block_that_raises_restores_and_leaves_no_depth_behind(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    recorder = _Recorder()
    monkeypatch.setattr(blas, "_controller", lambda: recorder)
    with pytest.raises(RuntimeError, match="inside"):
        with one_blas_thread():
            raise RuntimeError("inside")
    with one_blas_thread():
        pass
    name = threading.current_thread().name
    assert recorder.calls == [(name, "limit"), (name, "restore")] * 2


def test_the_bootstrap_gives_the_same_numbers_on_one_thread_or_two():
    rng = np.random.default_rng(3)
    terms = rng.random((400, 60))
    terms[rng.random(terms.shape) < 0.1] = np.nan
    with threadpool_limits(limits=2, user_api="blas"):
        limited = cluster_means(terms, n_resamples=500, seed=1)
    assert limited.shape == (500, 60) and not np.isnan(limited).any()
    # the straightforward bootstrap of the same draws: the product's thread count changed no sum's order
    from empathy.bootstrap import resample_counts

    counts = np.concatenate(list(resample_counts(400, 500, 1)))
    usable = ~np.isnan(terms)
    expected = (counts @ np.where(usable, terms, 0.0)) / (counts @ usable)
    assert np.allclose(limited, expected, rtol=1e-12, atol=0)


def test_openblas_started_on_one_thread_needs_no_limit(monkeypatch):
    recorder = _Recorder()
    monkeypatch.setattr(blas, "_controller", lambda: recorder)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")  # as the command line starts it
    with one_blas_thread():
        pass
    openblas = "openblas" in np.__config__.CONFIG["Build Dependencies"]["blas"]["name"].lower()
    assert blas._started_on_one() is openblas
    assert recorder.calls == ([] if openblas else [(threading.current_thread().name, "limit"),
                                                   (threading.current_thread().name, "restore")])
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    with one_blas_thread():
        pass
    assert [action for _, action in recorder.calls][-2:] == ["limit", "restore"]


_REPORT_THREADS = """
import os, sys
from empathy.blas import one_blas_thread_from_start
with one_blas_thread_from_start():
    seen = os.environ.get("OPENBLAS_NUM_THREADS")
    import numpy
    from threadpoolctl import threadpool_info
    threads = sorted({int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"})
print(seen, threads, os.environ.get("OPENBLAS_NUM_THREADS"))
"""


_TWO = min(2, os.cpu_count() or 1)  # OpenBLAS starts no more threads than cores


@pytest.mark.parametrize(("preset", "expected"), [
    ({}, "1 [1] None"),
    ({"OPENBLAS_NUM_THREADS": "2"}, f"2 [{_TWO}] 2"),  # the user's choice stands
    ({"OMP_NUM_THREADS": "2"}, f"None [{_TWO}] None"),  # OpenBLAS reads this one too: a choice as well
])
def test_a_process_started_under_the_block_starts_openblas_on_one_thread_unless_told(preset, expected):
    env = {k: v for k, v in os.environ.items() if k not in blas.THREAD_VARIABLES}
    env.update(preset)
    out = subprocess.run([sys.executable, "-c", _REPORT_THREADS], env=env, capture_output=True, text=True,
                         check=True, timeout=120).stdout.strip()
    assert out == expected


def test_with_numpy_already_loaded_the_block_changes_nothing(monkeypatch):
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    with blas.one_blas_thread_from_start():
        assert "OPENBLAS_NUM_THREADS" not in os.environ  # numpy is loaded here: its BLAS has started


def test_the_command_line_runs_its_command_in_the_block(monkeypatch):
    from empathy.cli import main

    entered = []

    @contextlib.contextmanager
    def recording():
        entered.append(True)
        yield

    monkeypatch.setattr(blas, "one_blas_thread_from_start", recording)
    assert main(["metrics", "/nonexistent/outputs.csv"]) == 2  # the handler ran (and refused the file)
    assert entered == [True]
