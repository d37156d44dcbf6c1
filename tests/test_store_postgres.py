"""The team store on PostgreSQL: concurrent annotators, migration, damaged or unreachable servers, masked
passwords, the CLI and the app. Runs against a real throwaway server (conftest.py); skips without one.

The store's semantics on both backends are tested by tests/test_store.py and tests/test_ledger.py (parametrized
over SQLite and PostgreSQL); this file holds what only a server has.
"""

from __future__ import annotations

import html
import multiprocessing
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from empathy.cli import main
from empathy.labels.backends import open_store
from empathy.labels.exhibit_list import exhibit_list, pin_exhibit
from empathy.labels.locations import StoreError, default_store_path, is_server_location, mask_location
from empathy.labels.records import Change, dataset_name
from empathy.labels.rules import effective_overrides
from empathy.labels.schema import AUDIT_COLUMNS, SCHEMA_VERSION
from empathy.labels.sqlite import OverrideStore
from empathy.labels.transfer import migrate_store
from empathy.paths import DEMO_DIR

sys.path.insert(0, str(Path(__file__).resolve().parent))
from postgres_server import PASSWORD, run_sql, select_only_login  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DS = "demo/outputs.csv"


@pytest.fixture()
def postgres_server(postgres_server):
    """The throwaway server only: these tests know its host, superuser and password (to show they are masked)."""
    if postgres_server.external:
        pytest.skip("needs the throwaway server (EMPATHY_TEST_POSTGRES_URL is set): the tests know its password")
    return postgres_server


# ------------------------------------------------------------------------------------------- locations

@pytest.mark.parametrize(("location", "masked"), [
    ("postgresql://ann:pw1234@db.lab:5432/empathy", "postgresql://ann:***@db.lab:5432/empathy"),
    ("postgres://ann:p%40ss@db/x?sslmode=require", "postgres://ann:***@db/x?sslmode=require"),
    ("postgresql://ann@db/x?password=hunter22&sslmode=require",
     "postgresql://ann@db/x?password=***&sslmode=require"),
    ("postgresql:///empathy?host=/run/postgresql", "postgresql:///empathy?host=/run/postgresql"),
    ("/home/ann/data/.empathy-overrides.sqlite", "/home/ann/data/.empathy-overrides.sqlite"),
])
def test_mask_location(location, masked):
    assert mask_location(location) == masked


@pytest.mark.parametrize(("location", "server"), [
    ("postgresql://h/db", True), ("POSTGRES://h/db", True), (" postgresql://h/db", True),
    ("data/o.sqlite", False), ("postgresql.sqlite", False), (Path("postgresql:/x"), False),
])
def test_is_server_location(location, server):
    assert is_server_location(location) is server


def test_default_store_path_keeps_a_url_whole(tmp_path, monkeypatch):
    url = "postgresql://ann:pw@db.lab:5432/empathy"
    monkeypatch.setenv("EMPATHY_STORE", url)
    assert default_store_path(tmp_path) == url  # a Path would fold the '//'


def test_dataset_name_on_a_server_is_the_same_on_every_machine(tmp_path):
    url = "postgresql://db.lab/empathy"
    first = dataset_name(tmp_path / "ann" / "demo" / "outputs.csv", store_path=url)
    second = dataset_name(Path("/home/bob/checkout/data/demo/outputs.csv"), store_path=url)
    assert first == second == "demo/outputs.csv"
    assert dataset_name(tmp_path / "x.csv", store_path=url, explicit="kumar2025") == "kumar2025"


# ------------------------------------------------------------------------------------- the one interface

def test_the_url_opens_the_postgresql_backend(postgres_url):
    store = open_store(postgres_url)
    assert store.backend == "postgresql" and isinstance(store, OverrideStore)
    assert open_store(postgres_url).backend == "postgresql"
    assert PASSWORD not in repr(store) and PASSWORD not in store.label
    assert "***" in store.label and store.short_label.startswith("127.0.0.1:")
    assert store.schema_version() == SCHEMA_VERSION
    # reopening finds the schema and changes nothing
    store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann")
    assert open_store(postgres_url).version() == store.version() == 1


def test_a_database_of_its_own_and_the_public_schema(postgres_database):
    store = open_store(postgres_database)
    store.set_override(DS, "i1", "m", "j", "ca", 0, annotator="ann", judge_value=1.0)
    audit = store.audit(DS)
    assert audit[["old_value", "new_value"]].values.tolist() == [[1.0, 0.0]]


# ------------------------------------------------------------------------------- concurrent annotators

def _annotate(url: str, annotator: str, items: int, value: float) -> None:
    store = open_store(url)
    for index in range(items):
        store.set_override(DS, f"item{index:03d}", "m", "judge", "ca", value, annotator=annotator)


def test_concurrent_annotators_lose_no_write_and_conflicts_are_surfaced(postgres_url):
    """4 threads and 2 processes, 6 annotators deciding the same 30 items at once: 180 decisions kept."""
    open_store(postgres_url)
    errors: list[BaseException] = []

    def thread(annotator: str, value: float) -> None:
        try:
            _annotate(postgres_url, annotator, 30, value)
        except BaseException as exc:  # noqa: BLE001 - re-raised by the test
            errors.append(exc)

    threads = [threading.Thread(target=thread, args=(f"t{k}", float(k % 2))) for k in range(4)]
    context = multiprocessing.get_context("spawn")  # fresh interpreters: no shared socket, as on other machines
    processes = [context.Process(target=_annotate, args=(postgres_url, f"p{k}", 30, 1.0)) for k in range(2)]
    for worker in [*threads, *processes]:
        worker.start()
    for worker in threads:
        worker.join(120)
    for process in processes:
        process.join(120)
        assert process.exitcode == 0
    assert not errors, errors
    store = open_store(postgres_url)
    decisions = store.decisions(DS)
    assert len(decisions) == 180  # every annotator's decision on every item: none replaced another's
    assert decisions.groupby("item_id")["annotator"].nunique().eq(6).all()
    audit = store.audit(DS)
    assert len(audit) == 180 and sorted(audit["batch"]) == list(range(1, 181))  # one transaction each
    assert audit["id"].is_monotonic_increasing and audit["id"].is_unique
    # the disagreement (t0, t2 said 0; the others 1) is surfaced, never silently resolved
    unresolved = effective_overrides(decisions, "adjudicated").unresolved
    assert len(unresolved) == 30
    assert effective_overrides(decisions, "majority").effective["value"].eq(1.0).all()


def test_one_annotator_in_two_sessions_keeps_a_consistent_history(postgres_url):
    """Two sessions of one annotator flip the same rating 40 times each: every audit row's old value is the
    previous row's new value (each change saw the one committed before it: nothing lost in between)."""
    open_store(postgres_url)

    def flip(start: int) -> None:
        store = open_store(postgres_url)
        for index in range(40):
            store.set_override(DS, "i1", "m", "judge", "u_gen", float(start + index), annotator="ann")

    threads = [threading.Thread(target=flip, args=(start,)) for start in (0, 100)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    store = open_store(postgres_url)
    audit = store.audit(DS)
    assert len(audit) == 80
    assert audit["old_value"].iloc[1:].tolist() == audit["new_value"].iloc[:-1].tolist()
    assert store.decisions(DS)["value"].tolist() == [audit["new_value"].iloc[-1]]
    # and undo walks that history back one change at a time
    store.undo_last("ann")
    assert store.decisions(DS)["value"].tolist() == [audit["new_value"].iloc[-2]]


def test_a_writer_waiting_too_long_gets_one_line(postgres_url):
    import psycopg

    from empathy.labels.postgres import WRITE_LOCK_KEY

    store = open_store(postgres_url, busy_timeout=0.3)
    with psycopg.connect(postgres_url, autocommit=True) as holder:
        with holder.transaction():
            holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
            with pytest.raises(StoreError, match="being written by another annotator") as caught:
                store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann")
    assert "\n" not in str(caught.value) and PASSWORD not in str(caught.value)
    store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann")  # the lock is free again
    assert store.count(DS) == 1


def test_connections_dropped_by_the_server_are_replaced(postgres_url):
    """An idle connection the server closed (a restart, an idle timeout) is replaced, not reported as an error."""
    store = open_store(postgres_url)
    store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann")
    _run_sql(postgres_url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE application_name = 'empathy' AND pid <> pg_backend_pid()")
    assert store.version() == 1
    store.set_override(DS, "i2", "m", "j", "ca", 0, annotator="ann")
    assert store.count(DS) == 2


# --------------------------------------------------------------------------------- damaged / unreachable

def _unreachable_url(postgres_server) -> str:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"postgresql://postgres:{PASSWORD}@127.0.0.1:{port}/empathy?connect_timeout=3"


def _wrong_password_url(postgres_server) -> str:
    return postgres_server.url("postgres").replace(PASSWORD, "not-the-password-77")


@pytest.mark.parametrize(("make_url", "message"), [
    (_unreachable_url, "cannot be reached"),
    (_wrong_password_url, "password authentication failed"),
])
def test_an_unreachable_server_is_one_line_without_the_password(postgres_server, make_url, message):
    url = make_url(postgres_server)
    with pytest.raises(StoreError, match=message) as caught:
        open_store(url)
    text = str(caught.value)
    assert "\n" not in text and PASSWORD not in text and "not-the-password-77" not in text
    assert "***" in text


_run_sql = run_sql


@pytest.mark.parametrize(("statements", "message"), [
    (["CREATE TABLE overrides (id INTEGER)"], "not an empathy store"),
    (["CREATE TABLE empathy_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
      "INSERT INTO empathy_meta VALUES ('schema_version', '99')"], "newer version of empathy"),
    (["CREATE TABLE empathy_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"], "no schema version"),
])
def test_a_foreign_or_newer_database_is_refused_and_untouched(postgres_url, statements, message):
    _run_sql(postgres_url, *statements)
    with pytest.raises(StoreError, match=message):
        open_store(postgres_url)
    import psycopg

    with psycopg.connect(postgres_url) as connection:
        tables = {row[0] for row in connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}
    assert "audit" not in tables  # nothing was created


def test_a_store_damaged_after_opening_is_a_store_error(postgres_url):
    store = open_store(postgres_url)
    store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann")
    _run_sql(postgres_url, "ALTER TABLE overrides DROP COLUMN judge_signature")
    with pytest.raises(StoreError, match="is damaged"):
        open_store(postgres_url)
    _run_sql(postgres_url, "DROP TABLE audit")
    with pytest.raises(StoreError, match="is damaged") as caught:
        store.audit()
    assert "\n" not in str(caught.value)


def test_a_read_only_login_reads_but_cannot_write(postgres_url, postgres_server):
    store = open_store(postgres_url)
    store.set_override(DS, "i1", "m", "j", "ca", 1, annotator="ann")
    with select_only_login(postgres_url, "readerpw1") as reader_url:
        reader = open_store(reader_url)
        try:
            assert reader.decisions(DS)["value"].tolist() == [1.0]
            with pytest.raises(StoreError, match="read-only for this user") as caught:
                reader.set_override(DS, "i2", "m", "j", "ca", 0, annotator="bob")
            assert "readerpw1" not in str(caught.value)
            assert store.count(DS) == 1
        finally:
            reader.close()  # its idle connections, before the role is dropped


# ------------------------------------------------------------------------------------------- migration

def _sqlite_ledger(folder: Path) -> Path:
    """A SQLite store beside a data folder, with two annotators, an undone change and an adjudication."""
    data = folder / "demo"
    data.mkdir(parents=True)
    (data / "outputs.csv").write_text("item_id,model,reference,generation\ni1,m,r,g\n", encoding="utf-8")
    path = data / ".empathy-overrides.sqlite"
    store = OverrideStore(path)
    name = dataset_name(data / "outputs.csv", store_path=path)
    assert name == "outputs.csv"
    store.set_overrides(name, [Change("i1", "m", "j1", "ca", 0, "asks", "h1", 1.0, "sig-j1"),
                               Change("i1", "m", "j2", "ca", 0, "asks", "h1", 1.0, "sig-j2")], annotator="ann")
    store.set_override(name, "i1", "m", "j1", "ca", 1, annotator="bob", text_hash="h1")
    pin_exhibit(store, name, "i1", "m", "SA at its worst: <b>'s note", annotator="ann")  # exhibits travel too
    store.set_override(name, "i2", "m", "j1", "ca", 1, annotator="bob", text_hash="h2")
    store.undo_last("bob")
    store.adjudicate(name, [Change("i1", "m", "j1", "ca", 0, "rubric", "h1")], annotator="chair")
    store.set_override("kumar2025", "c1", "corpus", "gpt", "ca", 1, annotator="ann")
    pin_exhibit(store, "kumar2025", "c1", "corpus")
    return path


def test_migrate_sqlite_into_postgresql_keeps_everything(tmp_path, postgres_url):
    source = _sqlite_ledger(tmp_path)
    before = OverrideStore(source)
    report = migrate_store(source, postgres_url)
    assert report.decisions == 5 and report.audit == 7 and report.exhibits == 2
    assert report.renamed == {"outputs.csv": "demo/outputs.csv"}
    assert PASSWORD not in report.summary()
    after = open_store(postgres_url)
    expected = before.decisions().replace({"dataset_id": {"outputs.csv": "demo/outputs.csv"}})
    pd.testing.assert_frame_equal(after.decisions().sort_values(["dataset_id", "item_id", "rater", "annotator"])
                                  .reset_index(drop=True),
                                  expected.sort_values(["dataset_id", "item_id", "rater", "annotator"])
                                  .reset_index(drop=True))
    expected_audit = before.audit().replace({"dataset_id": {"outputs.csv": "demo/outputs.csv"}})
    pd.testing.assert_frame_equal(after.audit()[list(AUDIT_COLUMNS)], expected_audit, check_dtype=False)
    assert after.version() == before.version() == 7
    for name, renamed in (("outputs.csv", "demo/outputs.csv"), ("kumar2025", "kumar2025")):
        pd.testing.assert_frame_equal(exhibit_list(after, renamed), exhibit_list(before, name))
    assert exhibit_list(after, "demo/outputs.csv")["note"].tolist() == ["SA at its worst: <b>'s note"]
    # the history continues on the server: ids go on, and undo takes back the SQLite store's last batch
    after.set_override("demo/outputs.csv", "i1", "m", "j2", "ca", 1, annotator="dan")
    assert after.version() == 8
    after.undo_last("dan")
    undone = after.undo_last("chair")
    assert undone["action"].tolist() == ["adjudicate"]
    # a second migration into the now non-empty server is refused, nothing written
    with pytest.raises(StoreError, match="migrate into an empty store"):
        migrate_store(source, postgres_url)
    assert after.version() == 10


def test_migrate_back_from_postgresql_into_sqlite(tmp_path, postgres_url):
    server = open_store(postgres_url)
    server.set_override(DS, "i1", "m", "j1", "ca", 0, annotator="ann", judge_value=1.0)
    server.set_override(DS, "i1", "m", "j1", "ca", 1, annotator="bob")
    pin_exhibit(server, DS, "i1", "m", "first")
    pin_exhibit(server, DS, "i0", "m", "second")
    report = migrate_store(postgres_url, tmp_path / "copy.sqlite", rename={DS: "outputs.csv"})
    assert (report.decisions, report.audit, report.exhibits, report.renamed) == (2, 2, 2, {DS: "outputs.csv"})
    assert exhibit_list(OverrideStore(tmp_path / "copy.sqlite"), "outputs.csv")[["item_id", "position", "note"]
                                                                                ].values.tolist() == [
        ["i1", 1, "first"], ["i0", 2, "second"]]
    copy = OverrideStore(tmp_path / "copy.sqlite")
    assert copy.decisions("outputs.csv")[["annotator", "value"]].values.tolist() == [["ann", 0.0], ["bob", 1.0]]
    assert copy.audit("outputs.csv")["old_value"].tolist() == [1.0, 0.0]


def test_store_migrate_and_info_on_the_command_line(tmp_path, postgres_url, capsys, monkeypatch):
    source = _sqlite_ledger(tmp_path)
    assert main(["store", "migrate", str(source), postgres_url]) == 0
    out = capsys.readouterr().out
    assert "migrated 5 decisions, 7 audit rows and 2 exhibits" in out and "outputs.csv -> demo/outputs.csv" in out
    assert PASSWORD not in out
    monkeypatch.setenv("EMPATHY_STORE", postgres_url)
    assert main(["store", "info", "--json"]) == 0
    import json

    info = json.loads(capsys.readouterr().out)
    assert info["backend"] == "postgresql" and info["version"] == 7 and PASSWORD not in json.dumps(info)
    assert {row["dataset"]: row["decisions"] for row in info["datasets"]} == {"demo/outputs.csv": 4,
                                                                              "kumar2025": 1}
    # into a non-empty store: exit 2, one line, no password
    assert main(["store", "migrate", str(source), postgres_url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "empty store" in err and PASSWORD not in err


def test_metrics_reads_a_team_store(tmp_path, postgres_url):
    """``metrics --store URL`` applies the server's decisions, named by folder and file as the app names them."""
    import shutil

    data = tmp_path / "demo"
    data.mkdir()
    for source in DEMO_DIR.glob("*.csv"):
        shutil.copy(source, data / source.name)
    from empathy.io import load_dataset
    from empathy.labels.rules import make_changes

    dataset = load_dataset(data / "outputs.csv", sorted(data.glob("ratings*.csv")))
    first = dataset.outputs.iloc[0]
    raters = sorted(set(dataset.ratings.loc[dataset.ratings["dimension"] == "ca", "rater"]))
    changes = make_changes(dataset.outputs, dataset.ratings, first["item_id"], first["model"], raters, "ca", 0.0)
    open_store(postgres_url).set_overrides("demo/outputs.csv", changes, annotator="ann")
    ratings = [str(p) for p in sorted(data.glob("ratings*.csv"))]
    command = [sys.executable, "-m", "empathy", "metrics", str(data / "outputs.csv"),
               *(a for r in ratings for a in ("--ratings", r)), "--no-ld", "--format", "json", "--store", postgres_url]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    # one decision on every CA judge of the output: counted once, its judge labels named (issue 26 item 6; this
    # read "overrides: {len(changes)} applied" before)
    assert f"overrides: 1 decision applied to {len(changes)} judge labels" in result.stderr
    assert PASSWORD not in result.stderr
    # --store without a value: $EMPATHY_STORE, as the app reads it
    import os

    from_env = subprocess.run(command[:-1], capture_output=True, text=True, cwd=ROOT, timeout=300,
                              env={**os.environ, "EMPATHY_STORE": postgres_url})
    assert from_env.returncode == 0 and from_env.stdout == result.stdout, from_env.stderr
    bad = subprocess.run([*command[:-1], postgres_url.replace(PASSWORD, "wrong-pass-99")], capture_output=True,
                         text=True, cwd=ROOT, timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert "password authentication failed" in bad.stderr and "wrong-pass-99" not in bad.stderr


# ------------------------------------------------------------------------------------------------- app

def _app_texts(elements) -> list[str]:
    return [html.unescape(str(e.value)).replace("\u2060", "") for e in elements]


def test_the_app_on_a_team_store(tmp_path, postgres_url, monkeypatch):
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EMPATHY_STORE", postgres_url)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    assert not at.exception, [e.value for e in at.exception]
    sidebar = " ".join(_app_texts(at.sidebar.caption))
    assert "127.0.0.1" in sidebar and PASSWORD not in sidebar
    at.switch_page("app_pages/1_Data.py").run()
    assert not at.exception
    shown = " ".join(_app_texts(at.caption) + _app_texts(at.markdown))
    assert "PostgreSQL store" in shown and "***" in shown and PASSWORD not in shown
    assert "data/outputs.csv" in shown  # the demo's name on the server: its folder and file


def test_the_app_with_an_unreachable_store_says_so(postgres_server, monkeypatch):
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    url = _unreachable_url(postgres_server)
    monkeypatch.setenv("EMPATHY_STORE", url)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = _app_texts(at.error)
    assert any("override store cannot be used" in e and "cannot be reached" in e for e in errors), errors
    assert all(PASSWORD not in e for e in errors)


def test_two_annotators_relabel_into_the_team_store(tmp_path, postgres_url, monkeypatch):
    """Two app sessions on one PostgreSQL store: both decisions kept, the second sees the first's, and the
    audit rows are on the server."""
    pytest.importorskip("streamlit")
    from relabel_keys import press, window
    from test_app_ledger import _app, _fixture, _on_screen

    monkeypatch.setenv("EMPATHY_STORE", postgres_url)
    source = _fixture(tmp_path / "data")
    first = _app(source, committed="ann")
    first.switch_page("app_pages/4_Relabel.py").run()
    assert not first.exception, [e.value for e in first.exception]
    item, model = _on_screen(first)
    press(first, 0.0)
    second = _app(source, committed="bob")
    second.switch_page("app_pages/4_Relabel.py").run()
    assert _on_screen(second) == (item, model)
    assert "Also decided by ann" in window(second)["items"][0]["head"]
    press(second, 1.0)
    assert not second.exception, [e.value for e in second.exception]
    store = open_store(postgres_url)
    decisions = store.decisions("data/outputs.csv")  # the data set's name on a server: folder and file
    assert sorted(zip(decisions["annotator"], decisions["value"], strict=True)) == [
        ("ann", 0.0), ("ann", 0.0), ("bob", 1.0), ("bob", 1.0)]
    assert store.audit("data/outputs.csv")["action"].tolist() == ["set"] * 4
