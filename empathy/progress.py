"""Progress reporting for long work (text analysis, judging, imports) as a plain callback.

The work itself (:func:`empathy.distancing.analyze`, :func:`empathy.judges.run_judge`, ...) only calls an
``advance(n)`` hook; a :class:`Tracker` turns those calls into :class:`Progress` snapshots (counts, elapsed
time, a rate and an estimate of the time left) and hands them to whatever callback the caller passed: a
Streamlit progress bar in the app, a line on stderr, a list in a test. Nothing here imports Streamlit.

>>> seen = []
>>> clock = iter([0.0, 2.0, 4.0]).__next__
>>> tracker = Tracker(10, seen.append, stage="texts", clock=clock)
>>> tracker.advance(5)
>>> seen[-1].describe()
'5 of 10 texts (50%) · 2 s elapsed · about 2 s left'
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["Progress", "ProgressCallback", "Tracker", "format_duration", "track"]

T = TypeVar("T")


def format_duration(seconds: float) -> str:
    """A duration for people: ``"7 s"``, ``"2 min 5 s"``, ``"1 h 3 min"`` (rounded to whole seconds).

    Raises
    ------
    ValueError
        When ``seconds`` is negative or not finite.
    """
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        raise TypeError(f"seconds must be a number, got {type(seconds).__name__}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"seconds must be finite and non-negative, got {seconds!r}")
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


@dataclass(frozen=True)
class Progress:
    """A snapshot of long work: ``done`` of ``total`` units of ``stage`` after ``elapsed`` seconds."""

    done: int
    total: int
    elapsed: float
    stage: str = "items"
    skipped: int = 0  # of ``done``, units that needed no work (cache hits): left out of the rate

    @property
    def fraction(self) -> float:
        """Share done, in [0, 1] (1 for empty work)."""
        return 1.0 if self.total <= 0 else min(1.0, self.done / self.total)

    @property
    def rate(self) -> float | None:
        """Worked units per second so far (``skipped`` ones aside), ``None`` before any unit was worked on or
        any time has passed."""
        worked = self.done - self.skipped
        if worked <= 0 or self.elapsed <= 0:
            return None
        return worked / self.elapsed

    @property
    def eta(self) -> float | None:
        """Seconds left at the rate so far (``0`` when finished; ``None`` when there is no rate yet).

        The rate is the average since the start over the units that needed work: units served from a cache
        (``skipped``) are not in it, so a run resumed after a partial one does not promise the rest at the
        speed of the cache.
        """
        if self.done >= self.total:
            return 0.0
        rate = self.rate
        return None if rate is None else (self.total - self.done) / rate

    def describe(self) -> str:
        """``"1,200 of 2,000 texts (60%) · 45 s elapsed · about 30 s left"``."""
        parts = [f"{self.done:,} of {self.total:,} {self.stage} ({int(100 * self.fraction)}%)",
                 f"{format_duration(self.elapsed)} elapsed"]
        eta = self.eta
        if self.done >= self.total:
            parts.append("done")
        elif eta is not None:
            parts.append(f"about {format_duration(eta)} left")
        return " · ".join(parts)


ProgressCallback = Callable[[Progress], None]


class Tracker:
    """Counts finished units and reports :class:`Progress` to ``callback``.

    Parameters
    ----------
    total
        Units the work has (a non-negative integer).
    callback
        Called with a :class:`Progress` at the start (:meth:`start`), after :meth:`advance` (at most once per
        ``min_interval`` seconds, so a bar fed per unit does not flood its display) and always when the work
        is complete.
    stage
        What the units are, for :meth:`Progress.describe` (``"texts"``, ``"requests"``, ``"files"``).
    clock
        Seconds from an arbitrary origin (``time.monotonic``; a fake clock in tests).
    min_interval
        Least seconds between two reports before the end.
    """

    def __init__(self, total: int, callback: ProgressCallback | None, *, stage: str = "items",
                 clock: Callable[[], float] = time.monotonic, min_interval: float = 0.0) -> None:
        if not isinstance(total, int) or isinstance(total, bool) or total < 0:
            raise ValueError(f"total must be a non-negative integer, got {total!r}")
        if min_interval < 0:
            raise ValueError(f"min_interval must be non-negative, got {min_interval!r}")
        self.total = total
        self.done = 0
        self.skipped = 0
        self.stage = stage
        self._callback = callback
        self._clock = clock
        self._min_interval = min_interval
        self._start = clock()
        self._last_report: float | None = None

    def snapshot(self) -> Progress:
        """The progress now."""
        return Progress(self.done, self.total, max(0.0, self._clock() - self._start), self.stage, self.skipped)

    def _report(self, *, force: bool = False) -> None:
        if self._callback is None:
            return
        now = self._clock()
        complete = self.done >= self.total
        if not force and not complete and self._last_report is not None \
                and now - self._last_report < self._min_interval:
            return
        self._last_report = now
        self._callback(Progress(self.done, self.total, max(0.0, now - self._start), self.stage, self.skipped))

    def start(self) -> None:
        """Report 0 done (so a display appears before the first unit finishes)."""
        self._report(force=True)

    def advance(self, n: int = 1, skipped: bool = False) -> None:
        """Count ``n`` more finished units and report; ``skipped``: they needed no work (cache hits).

        Raises
        ------
        ValueError
            When ``n`` is negative or would count more units than ``total``.
        """
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"n must be a non-negative integer, got {n!r}")
        if self.done + n > self.total:
            raise ValueError(f"advanced past the total: {self.done} + {n} > {self.total} {self.stage}")
        self.done += n
        if skipped:
            self.skipped += n
        self._report()

    def set_done(self, done: int) -> None:
        """Set the finished count (for work that reports ``done`` rather than increments)."""
        if not isinstance(done, int) or isinstance(done, bool) or not 0 <= done <= self.total:
            raise ValueError(f"done must be an integer in [0, {self.total}], got {done!r}")
        self.done = done
        self._report()


def track(items: Iterable[T], total: int, callback: ProgressCallback | None, *, stage: str = "items",
          clock: Callable[[], float] = time.monotonic, min_interval: float = 0.0) -> Iterator[T]:
    """Yield ``items`` unchanged, reporting one unit done per item (a :class:`Tracker` over an iterable)."""
    tracker = Tracker(total, callback, stage=stage, clock=clock, min_interval=min_interval)
    tracker.start()
    for item in items:
        yield item
        tracker.advance(1)
