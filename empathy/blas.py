"""One BLAS thread for the package's matrix products.

The bootstrap and the permutation tests multiply blocks of resample counts (at most
:data:`empathy.agreement.BOOTSTRAP_BLOCK` cells) by items x columns of terms. A threaded BLAS (NumPy's wheels ship
OpenBLAS with a thread per core) splits such a product between threads that keep spinning for the next one once it
is done: on two cores that spin cost the intervals of the demo's 436 outputs 0.13 s of CPU on 0.06 s of work, and
at 200,000 outputs 1.6x the CPU of one thread for 11 % less wall time (``bench/bench_blas_threads.py``). A
results server shares its cores between annotators, so the CPU is what counts.

:func:`one_blas_thread` limits the BLAS libraries NumPy loaded to one thread while a block runs (through
threadpoolctl, which finds OpenBLAS, MKL or BLIS alike) and restores the setting it found when the block ends. The
numbers do not depend on it beyond float rounding (OpenBLAS splits a product's rows and columns between its
threads, not a sum; ``tests/test_blas.py``).

:func:`one_blas_thread_from_start` is for a process that has not imported NumPy yet (the command line): OpenBLAS
then starts with one thread, and the threads it would start at import, which spin for a while even before any
product (0.12 s of CPU on two cores, more with more cores), are never started.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_CONTROLLER_LOCK = threading.Lock()
_controllers: list[Any] = []
_depth = threading.local()


def _controller() -> Any:
    """The threadpool controller of the libraries loaded when it was first asked for (made once: finding them
    reads every loaded library, ~8 ms). NumPy is imported first, so its BLAS is among them."""
    with _CONTROLLER_LOCK:
        if not _controllers:
            import numpy  # noqa: F401  (its BLAS must be loaded for the controller to find it)
            from threadpoolctl import ThreadpoolController

            _controllers.append(ThreadpoolController())
        return _controllers[0]


def _started_on_one() -> bool:
    """Whether NumPy's BLAS is OpenBLAS started on one thread (``OPENBLAS_NUM_THREADS=1``, as the command line
    starts it): nothing to limit, and no controller to make (finding the libraries costs more than a demo's
    products). Read from the environment as it is now: a variable changed after NumPy loaded misleads it, which
    changes the speed, never a number."""
    if os.environ.get(OPENBLAS_THREADS) != "1":
        return False
    import numpy

    blas = getattr(numpy.__config__, "CONFIG", {}).get("Build Dependencies", {}).get("blas", {})
    return "openblas" in str(blas.get("name", "")).lower()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with NumPy's BLAS on one thread.

    Blocks nest: the outermost of a thread sets the limit and restores, when it ends, what it found. The limit is
    set by the thread that runs the products, since OpenBLAS (0.3.31 here) keeps a limit set outside the main
    thread for the thread that set it; with a BLAS whose limit is process-wide, two threads' blocks that overlap can
    end with the first restoring the second's (a product of the second on two threads again) or with one thread
    left as the limit: the speed changes, never a number.
    """
    depth = getattr(_depth, "value", 0)
    limiter = _controller().limit(limits=1, user_api="blas") if depth == 0 and not _started_on_one() else None
    _depth.value = depth + 1
    try:
        yield
    finally:
        _depth.value = depth
        if limiter is not None:
            limiter.restore_original_limits()


#: The environment variable OpenBLAS reads, once, when it is loaded (with NumPy).
OPENBLAS_THREADS = "OPENBLAS_NUM_THREADS"
#: The variables OpenBLAS reads for its thread count, in its order: any of them set is the user's choice.
THREAD_VARIABLES: tuple[str, ...] = (OPENBLAS_THREADS, "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


@contextmanager
def one_blas_thread_from_start() -> Iterator[None]:
    """Run the block with OpenBLAS started on one thread, if NumPy is imported in it.

    Sets :data:`OPENBLAS_THREADS` to 1 while the block runs, unless NumPy is already imported (its BLAS has started:
    nothing to do) or one of :data:`THREAD_VARIABLES` is set (the user's choice stands). Processes the block
    starts inherit it.
    """
    if "numpy" in sys.modules or any(name in os.environ for name in THREAD_VARIABLES):
        yield
        return
    os.environ[OPENBLAS_THREADS] = "1"
    try:
        yield
    finally:
        os.environ.pop(OPENBLAS_THREADS, None)
