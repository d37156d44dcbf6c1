"""AppTest of the progress bar (empathy_app.progress) and of the first text analysis on Overview."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.paths import DEMO_DIR  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 240  # s; a ceiling for a loaded machine, not an expectation

pytestmark = pytest.mark.usefixtures("_store", "_cache")  # a store and caches of each test's own


def _bar_script() -> None:
    import time

    import streamlit as st

    from empathy_app.progress import ProgressBar

    bar = ProgressBar("Judging")
    tracker = bar.tracker(8, "requests", min_interval=0.0)
    time.sleep(0.05)
    tracker.advance(2)
    st.write("after")


def test_the_bar_shows_counts_and_an_eta():
    at = AppTest.from_function(_bar_script, default_timeout=30).run()
    assert not at.exception
    bars = at.get("progress")
    assert len(bars) == 1
    proto = bars[0].proto
    assert proto.value == 25  # 2 of 8
    # The seconds are the test machine's (0 here, more on a loaded one): the format is what is checked.
    duration = r"\d+ (s|min \d+ s|h \d+ min)"
    assert re.fullmatch(rf"Judging: 2 of 8 requests \(25%\) · {duration} elapsed · about {duration} left",
                        proto.text), proto.text


def _distinct_texts() -> int:
    outputs = pd.read_csv(DEMO_DIR / "outputs.csv", keep_default_na=False)
    return len(pd.unique(pd.concat([outputs["reference"], outputs["generation"]], ignore_index=True)))


def test_overview_reports_the_first_analysis_once():
    st.cache_resource.clear()  # the analysed texts are shared by every session of the process
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/2_Overview.py").run()
    assert not at.exception
    first = [c.value for c in at.caption if c.value.startswith("Analysed ")]
    assert len(first) == 1
    assert first[0].startswith(f"Analysed {_distinct_texts():,} distinct texts in ")
    at.run()  # a rerun analyses nothing: no bar, no note
    assert not at.exception
    assert not [c.value for c in at.caption if c.value.startswith("Analysed ")]
    assert not at.get("progress")


def _waiting_script() -> None:
    from empathy_app.progress import ProgressBar

    ProgressBar("Judging").waiting()


def test_the_bar_waits_for_a_total_without_inventing_one():
    at = AppTest.from_function(_waiting_script, default_timeout=30).run()
    assert not at.exception
    proto = at.get("progress")[0].proto
    assert (proto.value, proto.text) == (0, "Judging: starting")
