"""AppTest of the data set's memory: a path or upload chosen on the Data page is named in the URL and the
settings file; a new session (a reload) with that URL reopens it with its overrides; an unknown path from a
link is asked about first; the sidebar offers the last data set."""

from __future__ import annotations

import html
import os
import shutil
import stat
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import load_path  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.labels.sqlite import OverrideStore  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402
from empathy.settings import Settings, save_upload  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 240  # s; a ceiling for a loaded machine, not an expectation


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.delenv("EMPATHY_STORE", raising=False)  # overrides beside each data folder
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("EMPATHY_SETTINGS", str(tmp_path / "settings" / "app-settings.json"))


@pytest.fixture()
def folder(tmp_path) -> Path:
    target = tmp_path / "run1"
    target.mkdir()
    shutil.copy(DEMO_DIR / "outputs.csv", target / "outputs.csv")
    for ratings in DEMO_DIR.glob("ratings*.csv"):
        shutil.copy(ratings, target / ratings.name)
    return target


def _data_name(at: AppTest) -> str:
    """The sidebar's data set caption as read (Streamlit shows escaped characters as characters)."""
    return html.unescape(next(c.value for c in at.sidebar.caption if c.value.startswith("Data: ")))


def _new_session(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def test_a_path_is_named_in_the_url_remembered_and_reopened_with_its_overrides(folder, tmp_path):
    at = _new_session()
    load_path(at, folder)
    _ok(at)
    outputs = str(folder / "outputs.csv")
    assert at.query_params["data"] == outputs
    settings_file = tmp_path / "settings" / "app-settings.json"
    assert stat.S_IMODE(settings_file.stat().st_mode) == 0o600
    remembered = Settings.load(settings_file).last()
    assert remembered["outputs"] == outputs and len(remembered["ratings"]) == len(list(folder.glob("ratings*")))
    # an override made in this data set's store (beside the data)
    store = OverrideStore(folder / ".empathy-overrides.sqlite")
    store.set_override(_dataset_id(at), "news-01", "fennel", "author", "e_ref", 0.5, annotator="t")

    reloaded = _new_session({"data": outputs})
    _ok(reloaded)
    assert reloaded.session_state["source"] == remembered
    assert outputs in _data_name(reloaded)
    assert any("Human decisions: **1**" in c.value for c in reloaded.sidebar.caption)


def _dataset_id(at: AppTest) -> str:
    caption = _data_name(at)
    return caption.split("id `", 1)[1].rstrip("`")


def test_an_unknown_path_from_a_link_is_asked_about_first(folder):
    outputs = str(folder / "outputs.csv")
    at = _new_session({"data": outputs})
    _ok(at)
    assert at.session_state["source"] == {"kind": "demo"}  # nothing read yet
    assert any("never opened on this machine" in w.value for w in at.sidebar.warning)
    assert at.query_params["data"] == outputs  # kept until answered
    at.sidebar.button(key="memory_open_link").click().run()
    _ok(at)
    assert at.session_state["source"]["outputs"] == outputs
    assert outputs in _data_name(at)


def test_keep_the_demo_drops_the_link(folder):
    at = _new_session({"data": str(folder / "outputs.csv")})
    at.sidebar.button(key="memory_keep_demo").click().run()
    _ok(at)
    assert at.session_state["source"] == {"kind": "demo"}
    assert "data" not in at.query_params
    assert not at.sidebar.warning


@pytest.mark.parametrize(("link", "message"), [
    ("upload:ffffffffffffffff", "not saved on this machine"),
    ("upload:../../etc", "malformed digest"),
    ("demo\nx", "not a valid name"),
])
def test_a_bad_link_opens_the_demo_and_says_why(link, message):
    at = _new_session({"data": link})
    _ok(at)
    assert at.session_state["source"] == {"kind": "demo"}
    assert any(message in w.value for w in at.sidebar.warning)


def test_a_saved_upload_reopens_from_its_link(tmp_path):
    outputs = ("my_outputs.csv", (DEMO_DIR / "outputs.csv").read_bytes())
    digest = save_upload(tmp_path / "settings" / "uploads", outputs, [])
    at = _new_session({"data": f"upload:{digest}"})
    _ok(at)
    assert at.session_state["source"] == {"kind": "upload", "name": "my_outputs.csv", "saved": digest}
    assert "my_outputs.csv" in _data_name(at)


def test_the_sidebar_offers_the_last_data_set(folder, tmp_path):
    source = {"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": []}
    Settings.load(tmp_path / "settings" / "app-settings.json").remember(source)
    at = _new_session()
    _ok(at)
    assert at.session_state["source"] == {"kind": "demo"}  # a new tab without a link starts on the demo
    button = at.sidebar.button(key="memory_reopen")
    assert str(folder) in button.label
    button.click().run()
    _ok(at)
    assert at.session_state["source"] == source
    assert at.query_params["data"] == source["outputs"]


def test_the_settings_file_is_never_world_readable(folder, tmp_path):
    os.umask(0o022)
    test_the_sidebar_offers_the_last_data_set(folder, tmp_path)
    assert stat.S_IMODE((tmp_path / "settings" / "app-settings.json").stat().st_mode) == 0o600


def test_a_settings_file_that_cannot_be_written_loses_nothing(folder, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("EMPATHY_SETTINGS", str(blocker / "app-settings.json"))
    at = _new_session()
    load_path(at, folder)
    _ok(at)
    assert at.session_state["source"]["outputs"] == str(folder / "outputs.csv")  # loaded all the same
    assert at.query_params["data"] == str(folder / "outputs.csv")  # and still named in the URL
    assert sum("could not be remembered" in w.value for w in at.sidebar.warning) == 1
    at.run()
    assert not any("could not be remembered" in w.value for w in at.sidebar.warning)  # said once, not retried
