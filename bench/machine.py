"""The machine a benchmark ran on, for its results section (the CPU model is read the same way by every script),
and the best-of-N timing the scripts share."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (else :func:`platform.processor`, else ``unknown CPU``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine(*, system: bool = True) -> str:
    """CPU model, logical CPUs (shared with other work), Python version and (``system``) the OS and kernel."""
    text = f"{cpu_model()}, {os.cpu_count()} logical CPUs (shared), Python {platform.python_version()}"
    return f"{text}, {platform.system()} {platform.release()}" if system else text


def best_of(repeat: int, work: Callable[..., object], *args: object, **kwargs: object) -> float:
    """The fewest wall-clock seconds ``work(*args, **kwargs)`` took in ``repeat`` runs (at least one).

    The minimum, not the mean: on a shared machine the other processes only ever add time.
    """
    times = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        work(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return min(times)
