"""Where a distributed run goes: ``--scheduler tcp://HOST:PORT`` or ``local:N`` (imports nothing heavy).

The command line validates the option with :func:`parse_scheduler` while parsing its arguments, before Dask
is imported; :func:`empathy.cluster.open_client` connects to (or starts) the cluster it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Largest ``N`` of ``local:N``: more worker processes than this on one machine only adds start-up cost.
MAX_LOCAL_WORKERS = 256
_SCHEDULER_TCP = re.compile(r"^tcp://([^\s:/\[\]]+|\[[0-9A-Fa-f:]+\]):(\d{1,5})$")


@dataclass(frozen=True)
class SchedulerSpec:
    """Where to run: ``kind`` is ``"tcp"`` (``address`` of a running scheduler) or ``"local"`` (``workers``)."""

    kind: str
    address: str = ""
    workers: int = 0

    def __str__(self) -> str:
        return self.address if self.kind == "tcp" else f"local:{self.workers}"


def parse_scheduler(text: str) -> SchedulerSpec:
    """``"tcp://HOST:PORT"`` or ``"local:N"`` as a :class:`SchedulerSpec`; anything else raises ValueError.

    The port is 1-65535 and ``N`` a whole number (ASCII digits) from 1 to :data:`MAX_LOCAL_WORKERS`.
    """
    if not isinstance(text, str):
        raise TypeError(f"scheduler must be a string, got {type(text).__name__}")
    value = text.strip()
    expected = "expected tcp://HOST:PORT or local:N (N worker processes)"
    if value.startswith("local:"):
        count = value[len("local:"):]
        if not (count.isascii() and count.isdigit()) or not 1 <= int(count) <= MAX_LOCAL_WORKERS:
            raise ValueError(f"{text!r}: N of local:N must be a whole number from 1 to {MAX_LOCAL_WORKERS} "
                             "(N worker processes on this machine)")
        return SchedulerSpec("local", workers=int(count))
    found = _SCHEDULER_TCP.match(value)
    if found is None:
        raise ValueError(f"{text!r} is not a scheduler address: {expected}")
    if not 1 <= int(found.group(2)) <= 65535:
        raise ValueError(f"{text!r}: port {found.group(2)} is out of range 1-65535 ({expected})")
    return SchedulerSpec("tcp", address=value)


