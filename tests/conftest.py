"""Test-wide isolation of the app's settings file (empathy.settings): a test never reads or writes the
developer's remembered data sets, and one test's choice is never another's start."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="module")
def _module_settings(tmp_path_factory):
    # module scope: an app server started by a module fixture gets a file of its own module
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMPATHY_SETTINGS", str(tmp_path_factory.mktemp("settings") / "app-settings.json"))
        yield


@pytest.fixture(autouse=True)
def _settings(tmp_path, monkeypatch):
    monkeypatch.setenv("EMPATHY_SETTINGS", str(tmp_path / "app-settings" / "app-settings.json"))
