"""Shared fixtures: a throwaway PostgreSQL server (``tests/postgres_server.py``) for the store's backends, and
test-wide isolation of the app's settings file (empathy.settings): a test never reads or writes the developer's
remembered data sets, and one test's choice is never another's start."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from postgres_server import PostgresServer, unavailable_reason  # noqa: E402


@pytest.fixture(scope="session")
def postgres_server():
    """One PostgreSQL server for the session (started with initdb/pg_ctl); skips when none can be started."""
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"no PostgreSQL server: {reason}")
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture()
def postgres_url(postgres_server):
    """The URL of a new, empty schema on the session's server (``search_path`` in the URL; dropped after)."""
    url = postgres_server.create_schema()
    try:
        yield url
    finally:
        postgres_server.drop_schema(url)


@pytest.fixture()
def postgres_database(postgres_server):
    """The URL of a new, empty database on the session's server (dropped after the test)."""
    url = postgres_server.create_database()
    try:
        yield url
    finally:
        postgres_server.drop_database(url)


#: The store backends every parametrized store test runs on.
BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def store_location(request, tmp_path):
    """A fresh store location on each backend: a SQLite file, or a PostgreSQL URL (skips without a server)."""
    if request.param == "sqlite":
        return str(tmp_path / "o.sqlite")
    return request.getfixturevalue("postgres_url")



@pytest.fixture(autouse=True, scope="module")
def _module_settings(tmp_path_factory):
    # module scope: an app server started by a module fixture gets a file of its own module
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMPATHY_SETTINGS", str(tmp_path_factory.mktemp("settings") / "app-settings.json"))
        yield


@pytest.fixture(autouse=True)
def _settings(tmp_path, monkeypatch):
    monkeypatch.setenv("EMPATHY_SETTINGS", str(tmp_path / "app-settings" / "app-settings.json"))
