"""The distancing and judge caches: no full-table count per lookup, private files, no answer lost on SIGKILL."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

import empathy.distancing as dist
from empathy.cachefiles import ensure_private_file
from empathy.distancing import DistancingCache, analyze
from empathy.judges.cache import CachedAnswer, JudgeCache
from empathy.sqlite_wal import enable_wal

ROOT = Path(__file__).resolve().parent.parent


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- no COUNT(*) per lookup (issue 17) -----------------------------------------------------------------------
def test_analysis_of_cached_texts_never_counts_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``if store`` used to call ``__len__`` (SELECT COUNT(*)) once per round: quadratic in a big shared cache."""
    texts = [f"The report {i} was filed." for i in range(40)]
    with DistancingCache(tmp_path) as cache:
        first = [r.to_json() for r in analyze(texts, cache=cache, batch_size=2)]
        calls: list[int] = []
        original = DistancingCache.__len__

        def counting_len(self: DistancingCache) -> int:
            calls.append(1)
            return original(self)

        monkeypatch.setattr(DistancingCache, "__len__", counting_len)
        # batch_size 2 -> 8 texts per round -> 5 rounds of cache lookups, all hits
        again = [r.to_json() for r in analyze(texts, cache=cache, batch_size=2)]
        assert again == first
        assert calls == []
        assert len(cache) == 40 and len(calls) == 1  # the counter itself works


def test_caches_are_true_even_when_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(self: object) -> int:
        raise AssertionError("__len__ called for a truth test")

    monkeypatch.setattr(DistancingCache, "__len__", fail)
    monkeypatch.setattr(JudgeCache, "__len__", fail)
    with DistancingCache(tmp_path / "d") as distancing, JudgeCache(tmp_path / "j.sqlite") as judges:
        assert bool(distancing) is True and bool(judges) is True


# --- file modes (issue 11) -------------------------------------------------------------------------------------
def test_distancing_cache_files_are_private(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "distancing"
    with DistancingCache(folder) as cache:
        list(analyze(["Mistakes were made."], cache=cache))
        database = folder / "distancing.sqlite3"
        assert mode(database) == 0o600
        assert mode(Path(f"{database}-wal")) == 0o600  # SQLite copies the database file's mode
        assert mode(folder) == 0o700


def test_judge_cache_files_are_private(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "judges.sqlite"
    with JudgeCache(path) as cache:
        cache.put("k", CachedAnswer({"ca": 1.0}, "{}", 1, 1))
        assert mode(path) == 0o600 and mode(Path(f"{path}-wal")) == 0o600
        assert mode(path.parent) == 0o700


def test_default_judge_cache_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "c"))
    with JudgeCache() as cache:
        assert mode(Path(cache.path)) == 0o600


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o000])
def test_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        with DistancingCache(tmp_path / "d"):
            pass
        with JudgeCache(tmp_path / "j.sqlite"):
            pass
    finally:
        os.umask(previous)
    assert mode(tmp_path / "d" / "distancing.sqlite3") == 0o600 and mode(tmp_path / "j.sqlite") == 0o600


def test_an_existing_world_readable_cache_is_narrowed(tmp_path: Path) -> None:
    path = tmp_path / "judges.sqlite"
    with JudgeCache(path) as cache:
        cache.put("k", CachedAnswer({"ca": 0.0}, "{}", 1, 1))
    os.chmod(path, 0o644)
    with JudgeCache(path) as cache:
        assert mode(path) == 0o600
        assert cache.get("k") == CachedAnswer({"ca": 0.0}, "{}", 1, 1)  # contents kept


def test_ensure_private_file_keeps_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "x"
    path.write_bytes(b"data")
    os.chmod(path, 0o640)
    ensure_private_file(path)
    assert path.read_bytes() == b"data" and mode(path) == 0o600


# --- durability (issue 11: SIGKILL re-bought 55 of 119 answers) ----------------------------------------------
KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from empathy.judges.cache import CachedAnswer, JudgeCache
    cache = JudgeCache({path!r}{extra})
    for i in range({n}):
        cache.put(f"key{{i}}", CachedAnswer({{"ca": float(i % 2)}}, "raw", 10, 2))
    os.kill(os.getpid(), signal.SIGKILL)
""")


def killed_run(path: Path, n: int, extra: str = "") -> int:
    script = KILLED_WRITER.format(root=str(ROOT), path=str(path), n=n, extra=extra)
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert completed.returncode == -9, completed.stderr.decode()
    with JudgeCache(path) as cache:
        return len(cache)


def test_no_answer_lost_when_the_process_is_killed(tmp_path: Path) -> None:
    assert killed_run(tmp_path / "judges.sqlite", 119) == 119


def test_batched_commits_lose_the_uncommitted_tail(tmp_path: Path) -> None:
    """The old behaviour (commit every 64), kept as an option: 119 answers -> 64 survive, 55 re-bought."""
    assert killed_run(tmp_path / "judges.sqlite", 119, ", commit_every=64") == 64


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "1"])
def test_commit_every_is_validated(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="commit_every"):
        JudgeCache(tmp_path / "j.sqlite", commit_every=bad)  # type: ignore[arg-type]


def test_default_distancing_cache_is_shared_and_true(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path))
    list(analyze(["There is hope."]))
    assert mode(tmp_path / "distancing" / "distancing.sqlite3") == 0o600
    assert dist._default_cache() is dist._default_cache()


# --- opening one new file from many processes at once (CI: a cluster worker's cache "database is locked") ---
def _locked_in_another_connection(path: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def test_enable_wal_waits_for_a_lock_the_busy_handler_does_not_wait_for(tmp_path: Path) -> None:
    """``timeout=0`` stands for the case SQLite refuses at once; the switch is tried again until the lock goes."""
    path = tmp_path / "new.sqlite3"
    holder = _locked_in_another_connection(path)
    opener = sqlite3.connect(path, timeout=0)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        opener.execute("PRAGMA journal_mode=WAL")
    release = threading.Timer(0.3, holder.rollback)
    release.start()
    try:
        enable_wal(opener, timeout=20.0)
    finally:
        release.join()
    assert opener.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    holder.close()
    opener.close()


def test_enable_wal_gives_up_at_its_deadline(tmp_path: Path) -> None:
    path = tmp_path / "held.sqlite3"
    holder = _locked_in_another_connection(path)
    opener = sqlite3.connect(path, timeout=0)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        enable_wal(opener, timeout=0.2)
    holder.close()
    assert opener.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    opener.close()


def test_enable_wal_on_a_wal_file_needs_no_write_lock(tmp_path: Path) -> None:
    """WAL persists in the file: a later open only reads the mode, so a writer holding the lock does not stop it."""
    path = tmp_path / "wal.sqlite3"
    first = sqlite3.connect(path)
    enable_wal(first, timeout=1.0)
    first.execute("CREATE TABLE t (x)")
    first.commit()
    holder = _locked_in_another_connection(path)
    opener = sqlite3.connect(path, timeout=0)
    enable_wal(opener, timeout=0.01)
    assert opener.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    for connection in (holder, opener, first):
        connection.close()


@pytest.mark.parametrize("timeout", [0, -1.0])
def test_enable_wal_timeout_is_validated(tmp_path: Path, timeout: float) -> None:
    with sqlite3.connect(tmp_path / "x.sqlite3") as connection, pytest.raises(ValueError, match="timeout"):
        enable_wal(connection, timeout=timeout)


def _open_caches(directory: str, start: Any) -> str:
    start.wait()
    try:
        DistancingCache(directory).close()
        JudgeCache(Path(directory) / "judges.sqlite").close()
    except (ValueError, sqlite3.Error) as exc:
        return str(exc)
    return ""


def test_many_processes_open_one_new_cache_at_once(tmp_path: Path) -> None:
    """Eight processes released together on fresh files, ten times over: none fails to open."""
    # fork: the children need nothing but the already imported caches (spawn would import the package 8 times).
    context = multiprocessing.get_context("fork")
    processes = 8
    with context.Manager() as manager, context.Pool(processes) as pool:
        for round_ in range(10):
            directory = tmp_path / f"round{round_}"
            start = manager.Barrier(processes)
            errors = [e for e in pool.starmap(_open_caches, [(str(directory), start)] * processes) if e]
            assert errors == [], f"round {round_}: {errors[0]}"
