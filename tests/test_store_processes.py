"""The record under every writer: several processes on one store, stray files beside it, and values written
around the package (the store discipline of :mod:`empathy.labels.sqlite_files`)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from empathy.labels.backends import open_store
from empathy.labels.locations import StoreError
from empathy.labels.sqlite import OverrideStore
from empathy.labels.sqlite_files import APPLICATION_ID

ROOT = Path(__file__).resolve().parent.parent
STRESS = Path(__file__).resolve().parent / "store_stress.py"
#: Each writer process writes for this long: seconds, bounded, enough for thousands of interleaved commits.
SECONDS = 3.0


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def _start(location: str, worker: str, out: Path, *, threads: int = 3, reading: bool = False) -> subprocess.Popen:
    command = [sys.executable, str(STRESS), location, worker, str(SECONDS), str(threads), str(out)]
    return subprocess.Popen([*command, *(["read"] if reading else [])], env=_environment(), cwd=ROOT)


def _results(out: Path) -> tuple[list[str], list[str]]:
    lines = out.read_text(encoding="utf-8").splitlines()
    return ([line.split(" ", 1)[1] for line in lines if line.startswith("ok ")],
            [line for line in lines if line.startswith("error ")])


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_processes_writing_and_reading_one_store_lose_no_acknowledged_decision(tmp_path, request, backend):
    """Two writer processes of three threads each and a reader process, at once: every decision whose write
    returned is stored, no process saw an error, and the SQLite file is intact."""
    location = str(tmp_path / "s.sqlite") if backend == "sqlite" else request.getfixturevalue("postgres_url")
    open_store(location).set_override("ds", "first", "m", "judge", "ca", 1, annotator="a0", text_hash="h")
    outs = [tmp_path / f"out{n}.txt" for n in range(3)]
    workers = [_start(location, "1", outs[0]), _start(location, "2", outs[1]),
               _start(location, "3", outs[2], threads=2, reading=True)]
    for worker in workers:
        assert worker.wait(timeout=120) == 0
    acknowledged = [key for out in outs for key in _results(out)[0]]
    errors = [error for out in outs for error in _results(out)[1]]
    stored = set(open_store(location).decisions("ds")["item_id"])
    assert errors == []
    assert len(acknowledged) > 100  # the stress really interleaved writes
    assert set(acknowledged) - stored == set()
    assert len(stored) == len(acknowledged) + 1
    if backend == "sqlite":
        connection = sqlite3.connect(location)
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        connection.close()


# ------------------------------------------------------------------------------------ files beside the store

def _hot_wal_of(database: Path, statements: str) -> Path:
    """A database whose process died with its write-ahead log unreplayed: ``statements`` are in the log only."""
    script = textwrap.dedent(f"""
        import os, sqlite3
        connection = sqlite3.connect({str(database)!r}, isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA wal_autocheckpoint=0")
        connection.executescript({statements!r})
        os._exit(0)
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60, env=_environment())
    wal = Path(f"{database}-wal")
    assert wal.stat().st_size > 0
    return wal


def _clean_store(tmp_path: Path) -> Path:
    path = tmp_path / "store.sqlite"
    store = OverrideStore(path)
    store.set_override("ds", "i1", "m", "judge", "ca", 1, annotator="ann", text_hash="h")
    del store
    for suffix in ("-wal", "-shm"):
        assert not Path(f"{path}{suffix}").exists()
    return path


def test_another_databases_log_beside_the_store_is_refused_and_not_replayed(tmp_path):
    path = _clean_store(tmp_path)
    wal = _hot_wal_of(tmp_path / "other.db", "CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('x');")
    stray = Path(f"{path}-wal")
    stray.write_bytes(wal.read_bytes())
    before = path.read_bytes()
    # this process opened the store before, so its bytes are no longer read here: SQLite's read-only look at the
    # schema refuses it instead (a fresh process reads the log itself: the next test)
    for read_only in (False, True, None):
        with pytest.raises(StoreError, match="not its own|another application's SQLite file") as caught:
            OverrideStore(path, read_only=read_only)
        assert "\n" not in str(caught.value) and str(path) in str(caught.value)
    assert path.read_bytes() == before and stray.read_bytes() == wal.read_bytes()
    stray.unlink()
    Path(f"{path}-shm").unlink(missing_ok=True)
    assert OverrideStore(path).decisions("ds")["item_id"].tolist() == ["i1"]


def test_a_reading_command_refuses_a_stray_log_with_one_line(tmp_path):
    """``metrics --overrides`` on a store with another database's log beside it: exit 2, one line, nothing
    replayed (the reading command that used to rewrite the store)."""
    path = _clean_store(tmp_path)
    wal = _hot_wal_of(tmp_path / "other.db", "CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('x');")
    Path(f"{path}-wal").write_bytes(wal.read_bytes())
    before = path.read_bytes()
    result = subprocess.run([sys.executable, "-m", "empathy", "metrics", str(ROOT / "data" / "outputs.csv"),
                             "--ratings", str(ROOT / "data" / "ratings_lexicon.csv"), "--no-ld", "--resamples", "0",
                             "--overrides", str(path)], capture_output=True, text=True, timeout=300,
                            env={**_environment(), "EMPATHY_CACHE_DIR": str(tmp_path / "cache")}, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "not its own" in result.stderr
    assert path.read_bytes() == before


def test_the_stores_own_log_after_a_crash_is_replayed(tmp_path):
    """A writer killed before its log was checkpointed: the next open keeps every committed decision."""
    path = tmp_path / "crash.sqlite"
    OverrideStore(path)
    script = textwrap.dedent(f"""
        import os
        from empathy.labels.sqlite import OverrideStore
        store = OverrideStore({str(path)!r})
        store.version()  # a reading connection held open: the writers' closes leave the log in place
        for index in range(50):
            store.set_override("ds", f"i{{index}}", "m", "judge", "ca", index % 2, annotator="ann", text_hash="h")
        os._exit(0)  # no close, no checkpoint: the decisions are in the log only
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120, env=_environment(), cwd=ROOT)
    assert Path(f"{path}-wal").stat().st_size > 0
    assert len(OverrideStore(path, read_only=True).decisions("ds")) == 50
    assert len(OverrideStore(path).decisions("ds")) == 50


def test_an_upgrade_of_the_application_id_in_the_log_is_the_stores_own(tmp_path):
    """A store of an earlier version gets its application id at its first open for writing; if the process
    dies before the checkpoint, the log's page 1 carries the new id and the file the old one: still its own."""
    path = tmp_path / "old.sqlite"
    OverrideStore(path).set_override("ds", "i1", "m", "judge", "ca", 1, annotator="ann", text_hash="h")
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA application_id=0")
    connection.close()
    script = textwrap.dedent(f"""
        import os, sqlite3
        connection = sqlite3.connect({str(path)!r}, isolation_level=None)
        connection.execute("PRAGMA wal_autocheckpoint=0")
        connection.execute("PRAGMA application_id={APPLICATION_ID}")
        os._exit(0)
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60, env=_environment())
    assert OverrideStore(path).decisions("ds")["item_id"].tolist() == ["i1"]


@pytest.mark.parametrize("make", ["tables", "application_id"])
def test_another_applications_sqlite_file_is_refused_untouched(tmp_path, make):
    path = tmp_path / "theirs.sqlite"
    connection = sqlite3.connect(path)
    if make == "tables":
        connection.execute("CREATE TABLE invoices (id INTEGER, total REAL)")
        connection.execute("INSERT INTO invoices VALUES (1, 9.5)")
    else:
        connection.execute("PRAGMA application_id=1234")
    connection.commit()
    connection.close()
    before = path.read_bytes()
    for read_only in (False, True, None):
        with pytest.raises(StoreError, match="another application's SQLite file") as caught:
            OverrideStore(path, read_only=read_only)
        assert "\n" not in str(caught.value)
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists()


def test_a_new_store_carries_the_application_id(tmp_path):
    path = tmp_path / "new.sqlite"
    OverrideStore(path)
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    connection.close()


# ------------------------------------------------------------------------------------ values written around us

@pytest.mark.parametrize(("column", "held"), [("value", "'nan'"), ("value", "'abc'"), ("value", "9e999"),
                                              ("judge_value", "'abc'"), ("judge_value", "'inf'")])
def test_a_value_the_store_holds_is_checked_when_read(tmp_path, column, held):
    path = tmp_path / "edited.sqlite"
    store = OverrideStore(path)
    store.set_override("ds", "i1", "m", "judge", "ca", 1, annotator="ann", text_hash="h", judge_value=0.0)
    store.set_override("ds", "i2", "m", "judge", "ca", 0, annotator="ann", text_hash="h")
    connection = sqlite3.connect(path)
    connection.execute(f"UPDATE overrides SET {column} = {held} WHERE item_id = 'i1'")
    connection.commit()
    connection.close()
    with pytest.raises(StoreError, match=f"{column} is .*not a finite number") as caught:
        store.decisions("ds")
    assert str(path) in str(caught.value) and "'i1'" in str(caught.value) and "\n" not in str(caught.value)


def test_a_judge_value_left_empty_is_no_judge_rating(tmp_path):
    store = OverrideStore(tmp_path / "s.sqlite")
    store.set_override("ds", "i1", "m", "judge", "ca", 1, annotator="ann", text_hash="h")
    frame = store.decisions("ds")
    assert frame["value"].tolist() == [1.0] and frame["judge_value"].isna().tolist() == [True]


def test_a_store_deleted_while_open_is_an_error_not_a_new_file(tmp_path):
    path = tmp_path / "gone.sqlite"
    store = OverrideStore(path)
    store.set_override("ds", "i1", "m", "judge", "ca", 1, annotator="ann", text_hash="h")
    del store
    store = OverrideStore(path)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with pytest.raises(StoreError, match="no longer exists"):
        store.set_override("ds", "i2", "m", "judge", "ca", 1, annotator="ann", text_hash="h")
    with pytest.raises(StoreError):
        store.decisions("ds")
    assert not path.exists()
