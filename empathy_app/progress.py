"""A Streamlit progress bar fed by :mod:`empathy.progress` callbacks (counts, elapsed time and ETA).

The work in :mod:`empathy` reports through plain callbacks; :class:`ProgressBar` is the one the pages pass.
Each update is a Streamlit call, so a click elsewhere (another page, a widget) stops a long run at its next
update: the text analysis keeps what it finished in its disk cache, so coming back resumes there.
"""

from __future__ import annotations

import threading
from types import TracebackType

import streamlit as st

from empathy.progress import Progress, Tracker

#: Least seconds between two updates of a bar (a websocket message each), except the last.
MIN_INTERVAL = 0.25


class ProgressBar:
    """``st.progress`` in a placeholder, updated from :class:`empathy.progress.Progress` snapshots.

    The counts text is the app's own (numbers and the tracker's stage), so it is not escaped. Use as a
    context manager; on exit the bar is removed, unless :meth:`finish` replaced it by a caption
    (and no error left the block). ``label`` is app text (Markdown); the counts come
    from :meth:`empathy.progress.Progress.describe`.
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self._slot = st.empty()
        self._script_thread = threading.current_thread()
        self.last: Progress | None = None
        self._finished = False

    def __call__(self, progress: Progress) -> None:
        self.last = progress
        # Streamlit elements may be drawn from the script's own thread only (attaching its context to another
        # thread needs private streamlit.runtime helpers): a report from another thread is kept, drawn by the next
        # report from the script thread. run_judge reports from the script thread (it has no event loop running).
        if threading.current_thread() is not self._script_thread:
            return
        self._slot.progress(progress.fraction, text=f"{self.label}: {progress.describe()}")

    def waiting(self, note: str = "starting") -> None:
        """Show the empty bar before the work knows its total (``"Judging: starting"``)."""
        self._slot.progress(0.0, text=f"{self.label}: {note}")

    def tracker(self, total: int, stage: str, *, min_interval: float = MIN_INTERVAL) -> Tracker:
        """A started :class:`Tracker` drawing on this bar."""
        tracker = Tracker(total, self, stage=stage, min_interval=min_interval)
        tracker.start()
        return tracker

    def clear(self) -> None:
        """Remove the bar."""
        self._slot.empty()

    def finish(self, message: str) -> None:
        """Replace the bar by a one-line caption (Markdown; escape data in it), e.g. what was done in how long."""
        self._slot.caption(message)
        self._finished = True

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if error is not None or not self._finished:
            self.clear()
