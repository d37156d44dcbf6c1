"""The machine a benchmark ran on, for its results section (the CPU model is read the same way by every script)."""

from __future__ import annotations

import os
import platform
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
