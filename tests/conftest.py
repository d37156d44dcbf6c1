"""What the tests share.

* a throwaway PostgreSQL server (``tests/postgres_server.py``) for the store's backends (``store_location``);
* test-wide isolation of the app's settings file (empathy.settings): a test never reads or writes the
  developer's remembered data sets, and one test's choice is never another's start;
* the first demo data set (121 outputs, ``tests/demo_v1/data/``) as the app's demo (``$EMPATHY_DEMO_DIR``, set when
  this file is imported, before any test module reads ``empathy.paths.DEMO_DIR``, and inherited by the app
  servers the browser tests start): the suite's hand-worked numbers were computed on it, so the shipped demo
  (``data/``, ``scripts/make_demo.py``) can change without changing them. A test about the shipped demo reads
  ``empathy.paths.SHIPPED_DEMO_DIR``;
* for the app tests (``tests/test_app*.py``): an override store of their own and two AppTest helpers. pytest puts
  this folder on ``sys.path``, so a test module takes the helpers with
  ``from conftest import app_ok as _ok, app_texts as _texts`` and the store with
  ``pytestmark = pytest.mark.usefixtures("_store")`` (a test that needs the path asks for ``_store``).
"""

from __future__ import annotations

import html
import os
from pathlib import Path

#: The first demo, as ``data/`` held it until issue 26 (the fixture of every test that reads the demo).
DEMO_V1 = Path(__file__).resolve().parent / "demo_v1" / "data"
os.environ["EMPATHY_DEMO_DIR"] = str(DEMO_V1)

import sys  # noqa: E402

import pytest  # noqa: E402
from postgres_server import PostgresServer, unavailable_reason  # noqa: E402

#: The test process's own ``__main__``: Streamlit's script runner (AppTest) puts the page script in its place and
#: leaves it there, and a process started with "spawn" (a Dask nanny's worker, tests/test_distributed.py) runs the
#: ``__main__`` it finds by path, i.e. app.py, and dies. Put back after every test.
_TEST_MAIN = sys.modules.get("__main__")


@pytest.fixture(autouse=True)
def _restore_main_module():
    yield
    if _TEST_MAIN is not None and sys.modules.get("__main__") is not _TEST_MAIN:
        sys.modules["__main__"] = _TEST_MAIN


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


@pytest.fixture()
def _store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty override store for this test only (``$EMPATHY_STORE``), never the developer's."""
    path = tmp_path / "overrides.sqlite"
    monkeypatch.setenv("EMPATHY_STORE", str(path))
    return path


@pytest.fixture()
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache folder for this test only (``$EMPATHY_CACHE_DIR``): nothing computed earlier is reused."""
    path = tmp_path / "cache"
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(path))
    return path


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium through Playwright, one per module of the browser tests (skips without Playwright)."""
    pytest.importorskip("playwright.sync_api")
    from browser_support import chromium

    with chromium() as instance:
        yield instance


@pytest.fixture()
def page(browser):
    """A fresh 1440x1600 tab; the messages of the dialogs it dismisses are kept in ``page.dialogs``."""
    context = browser.new_context(viewport={"width": 1440, "height": 1600})
    tab = context.new_page()
    tab.dialogs = []  # type: ignore[attr-defined]
    tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))  # type: ignore[attr-defined]
    yield tab
    context.close()


@pytest.fixture(scope="module")
def demo_app(tmp_path_factory):
    """The app as ``tests/browser_jobs.py`` serves it, its store, caches and settings in a folder of this module's.

    A dict: ``url`` and ``folder``.
    """
    pytest.importorskip("playwright.sync_api")
    import browser_jobs

    folder = tmp_path_factory.mktemp("app")
    with browser_jobs.app_server(folder) as url:
        yield {"url": url, "folder": folder}


ROOT = Path(__file__).resolve().parent.parent


def open_page(page: str, source: dict | None = None, *, session: dict | None = None, secrets: dict | None = None,
              timeout: float = 240) -> object:
    """An AppTest of ``app.py`` run once (``source`` and ``session`` put in its state and ``secrets`` in its
    secrets first), then switched to ``page`` (e.g. ``"app_pages/8_Items.py"``) and run; asserts that no exception
    was raised."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    if source is not None:
        at.session_state["source"] = source
    for key, value in (session or {}).items():
        at.session_state[key] = value
    for name, value in (secrets or {}).items():
        at.secrets[name] = value
    at.run()
    at.switch_page(page).run()
    app_ok(at)
    return at


def load_path(at: object, path: str | Path) -> object:
    """On ``at``'s Data page: the "path" source, ``path`` typed into its box and Load pressed; returns ``at``."""
    at.switch_page("app_pages/1_Data.py").run()
    at.radio(key="data_source_kind").set_value("path").run()
    at.text_input(key="data_path_text").input(str(path)).run()
    at.button(key="data_load_path").click().run()
    return at


def app_ok(at: object) -> None:
    """The app run raised nothing (the exceptions' messages otherwise)."""
    assert not at.exception, [e.value for e in at.exception]


def app_texts(elements: object) -> list[str]:
    """What the user reads: Streamlit shows the character references of escaped data as characters, and the
    word joiners the app puts into long tokens are invisible."""
    return [html.unescape(str(e.value)).replace("\u2060", "") for e in elements]
