"""What a new server's first runs no longer do (issue 25 item 5: the first Relabel output of a new data set).

Guarded by design, not by the clock:

- the first runs of the Data and Relabel pages in a new process import no Plotly Express (it is imported by the
  charts that draw, :mod:`empathy_app.views`; 50 ms of CPU a process), while a page with charts still draws them
  (checked in a subprocess: a fresh interpreter, as a new server);
- a deep link (``?data=`` naming a data set this machine opened) opens that data set on the session's first run
  without reading the demo first (counted calls of the loading functions).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from conftest import app_ok  # noqa: E402

from empathy.settings import Settings  # noqa: E402
from empathy_app import loading  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# A new interpreter: the Data page as the first page of the session, then Relabel with a name committed, then
# Overview (charts); which modules each step imported.
DRIVER = """
import json, sys
from streamlit.testing.v1 import AppTest
seen = {}
at = AppTest.from_file(sys.argv[1], default_timeout=300)
at.session_state["annotator"] = "ann"
at.switch_page("app_pages/1_Data.py").run()
assert not at.exception, [e.value for e in at.exception]
seen["data"] = [at.title[0].value, "plotly.express" in sys.modules]
at.switch_page("app_pages/4_Relabel.py").run()
assert not at.exception, [e.value for e in at.exception]
seen["relabel"] = [at.title[0].value, "plotly.express" in sys.modules]
at.switch_page("app_pages/2_Overview.py").run()
assert not at.exception, [e.value for e in at.exception]
seen["overview"] = [at.title[0].value, "plotly.express" in sys.modules, "plotly.graph_objects" in sys.modules,
                    len(at.get("plotly_chart"))]
print(json.dumps(seen))
"""


def test_the_first_runs_of_data_and_relabel_import_no_plotly_express(tmp_path):
    env = {**os.environ, "EMPATHY_SETTINGS": str(tmp_path / "settings.json"),
           "EMPATHY_STORE": str(tmp_path / "overrides.sqlite"), "EMPATHY_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", DRIVER, str(ROOT / "app.py")], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["data"] == ["Data", False]  # the tree before: True (views imported it for every page)
    assert seen["relabel"] == ["Relabel", False]
    title, express, figures, charts = seen["overview"]
    # a page with charts draws them with Plotly's figure objects; Express only for the standard-metric scatter,
    # drawn on request (the tree before: Express for every chart, 0.15-0.3 s each)
    assert title == "Overview" and figures and not express and charts > 0


def test_a_deep_link_opens_its_data_set_without_the_demo(tmp_path, monkeypatch, _store, _cache):
    from streamlit.testing.v1 import AppTest

    folder = tmp_path / "data"
    folder.mkdir()
    demo_outputs, demo_ratings = loading.demo_files()
    for path in (demo_outputs, *demo_ratings):
        (folder / path.name).write_bytes(path.read_bytes())
    source = {"kind": "path", "outputs": str(folder / demo_outputs.name),
              "ratings": [str(folder / path.name) for path in demo_ratings]}
    Settings.load(Path(os.environ["EMPATHY_SETTINGS"])).remember(source)  # opened on this machine before
    loaded: list[str] = []
    demo_looks: list[int] = []
    original_load, original_demo = loading.load_paths_keyed, loading.demo_files
    monkeypatch.setattr(loading, "load_paths_keyed",
                        lambda outputs, ratings: loaded.append(str(outputs)) or original_load(outputs, ratings))
    monkeypatch.setattr(loading, "demo_files",
                        lambda directory=None: demo_looks.append(1) or original_demo(directory))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params["data"] = source["outputs"]
    at.run()
    app_ok(at)
    assert at.session_state["source"] == source
    assert loaded == [source["outputs"]] and demo_looks == []  # the linked data set only, read once
    # the failure path of the check itself: a session without a link reads the demo
    loaded.clear()
    AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert loaded == [str(demo_outputs)] and demo_looks
