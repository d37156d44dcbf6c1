"""AppTest of the home page's first paint (issue 26 item 9): its main area is drawn before anything slow.

The frame in ``app.py`` draws the sidebar's controls, the heading and the Home page's text and links before it
loads the data set; the sidebar's data part (name, decisions, task filter) and the data set's summary follow. A
load that has not finished when the run ends is played by a loader that stops the run: what is on the page then is
what the browser showed while the real one was loading.
"""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")
from conftest import ROOT, app_ok, app_texts  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy_app import frame, loading  # noqa: E402

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _home() -> AppTest:
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)


def _data_caption(at: AppTest) -> list[str]:
    return [text for text in app_texts(at.sidebar.caption) if text.startswith("Data: ")]


def test_the_home_page_is_drawn_before_the_data_set_is_loaded(monkeypatch):
    calls: list[int] = []

    def still_loading() -> None:
        import streamlit as st

        calls.append(len(calls))
        st.stop()  # the run ends here, as it would look in the browser until the real load returns

    monkeypatch.setattr(loading, "open_data_set", still_loading)
    at = _home().run()
    app_ok(at)
    assert calls == [0]
    # the main area: heading, what the app does and a link to every page
    assert at.title[0].value == frame.heading("Home")
    assert any(frame.HOME_INTRO[:60] in text for text in app_texts(at.markdown))
    links = [link.proto.label for link in at.get("page_link")]
    assert len(links) == len(frame.PAGES) and all(f"**{title}**" in label for (_, title, *_), label
                                                  in zip(frame.PAGES, links, strict=True))
    # the sidebar's controls need no data set; its data part is not there yet
    assert at.sidebar.toggle(key="_w_with_overrides").value is True
    assert _data_caption(at) == []
    assert not at.metric  # the data set's summary comes once it is loaded


def test_once_loaded_the_summary_and_the_sidebars_data_part_follow(monkeypatch):
    calls: list[str] = []
    real = loading.open_data_set

    def recorded() -> object:
        calls.append("load")
        return real()

    monkeypatch.setattr(loading, "open_data_set", recorded)
    at = _home().run()
    app_ok(at)
    assert calls == ["load"]
    assert any(frame.HOME_INTRO[:60] in text for text in app_texts(at.markdown))
    assert len(at.get("page_link")) == len(frame.PAGES)
    metrics = {metric.label: metric.value for metric in at.metric}
    assert metrics["Models"] == "5" and metrics["Items"] == "25"  # the bundled demo
    (caption,) = _data_caption(at)
    assert "demo" in caption.lower()
    # the sidebar's data part (who is deciding, then the data set) sits at its top, above the controls drawn
    # before it
    order = [getattr(element, "key", None) or str(getattr(element, "value", ""))[:6] for element in at.sidebar]
    assert order.index("_w_annotator") < order.index("Data: ") < order.index("_w_with_overrides"), order


def test_a_data_set_that_cannot_be_loaded_leaves_the_home_page_readable(tmp_path):
    at = _home()
    at.session_state["source"] = {"kind": "path", "outputs": str(tmp_path / "missing" / "outputs.csv"),
                                  "ratings": []}
    at.run()
    app_ok(at)
    assert any(frame.HOME_INTRO[:60] in text for text in app_texts(at.markdown))
    assert any("Choose a data set on the **Data** page." in text for text in app_texts(at.info))
