"""What the app tests (``tests/test_app*.py``) share: an override store of their own and two AppTest helpers.

pytest puts this folder on ``sys.path``, so a test module takes the helpers with
``from conftest import app_ok as _ok, app_texts as _texts`` and the store with
``pytestmark = pytest.mark.usefixtures("_store")`` (a test that needs the path asks for ``_store``).
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest


@pytest.fixture()
def _store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty override store for this test only (``$EMPATHY_STORE``), never the developer's."""
    path = tmp_path / "overrides.sqlite"
    monkeypatch.setenv("EMPATHY_STORE", str(path))
    return path


def app_ok(at: object) -> None:
    """The app run raised nothing (the exceptions' messages otherwise)."""
    assert not at.exception, [e.value for e in at.exception]


def app_texts(elements: object) -> list[str]:
    """What the user reads: Streamlit shows the character references of escaped data as characters, and the
    word joiners the app puts into long tokens are invisible."""
    return [html.unescape(str(e.value)).replace("\u2060", "") for e in elements]
