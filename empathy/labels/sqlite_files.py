"""The SQLite store's file discipline: what may touch a store file, and when.

POSIX record locks belong to a process and a file, not to a descriptor: closing *any* descriptor of a file drops
every lock the process holds on it, the locks of its open SQLite connections included (SQLite's "How To Corrupt
An SQLite Database File", section 2.2). So a store file is never opened with Python's own I/O while this process
may hold a SQLite connection to it. The rules, which every connection to a store follows
(:func:`connect_store_file`):

1. A file's bytes (its header, its write-ahead log) are read by Python only before this process's first SQLite
   connection to that file (:func:`check_store_file`). The files this process has connected to are remembered by
   device and inode (:func:`is_connected`), and a connection is only made after its file is remembered, under one
   lock, so a check and a connection never overlap. After the first connection, a file is checked through
   ``os.stat`` and SQLite itself.
2. Writing connections open with ``mode=rw``: a store that vanished is an error, never a new empty file.
3. A write-ahead log that does not belong to the store (another database's ``-wal`` left beside it) is refused
   before SQLite could replay it (:func:`foreign_wal`). A ``-shm`` is never trusted by SQLite (the first connection
   rebuilds it from the log), so only the log is checked.
4. A SQLite file that holds another application's tables, or another application's ``application_id``, is refused
   without writing to it (:func:`check_is_store`); stores carry :data:`APPLICATION_ID`.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from pathlib import Path

from empathy.labels.locations import StoreError

#: ``PRAGMA application_id`` of an override store ("Empy"): tells our stores from other applications' SQLite files.
APPLICATION_ID = 0x456D7079
#: Tables any version of the override store has; a file with tables but none of these is another application's.
STORE_TABLES = frozenset({"overrides", "audit"})
#: How often and how long a first check looks again at a file shorter than its header says.
TRUNCATION_RECHECKS = 10
TRUNCATION_RECHECK_S = 0.05
_SQLITE_HEADER = b"SQLite format 3\x00"
_WAL_MAGIC = (0x377F0682, 0x377F0683)
_WAL_HEADER = 32
_FRAME_HEADER = 24

# The files (device, inode) this process has opened with SQLite, and the lock that orders a first check before
# every connection: a process-wide fact, because the locks it protects are the process's.
_CONNECTED: set[tuple[int, int]] = set()
_CONNECTING = threading.Lock()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def is_connected(path: Path) -> bool:
    """Whether this process has opened ``path`` with SQLite (its bytes are then read through SQLite only)."""
    identity = _identity(path)
    with _CONNECTING:
        return identity is not None and identity in _CONNECTED


def connect_store_file(target: str | Path, path: Path, *, timeout: float, uri: bool = False,
                       check_same_thread: bool = True) -> sqlite3.Connection:
    """A SQLite connection to the store file ``path`` (``target``: the path or a URI naming it).

    The file is remembered as connected before SQLite opens it, so no Python read of its bytes can close a
    descriptor under this connection's locks; a file SQLite creates is remembered right after."""
    with _CONNECTING:
        identity = _identity(path)
        if identity is not None:
            _CONNECTED.add(identity)
        connection = sqlite3.connect(target, timeout=timeout, isolation_level=None, uri=uri,
                                     check_same_thread=check_same_thread)
        if identity is None and (created := _identity(path)) is not None:
            _CONNECTED.add(created)
    return connection


def writing_uri(path: Path) -> str:
    """SQLite's URI opening an existing store for writing (``mode=rw``: never creates a file)."""
    return f"{path.expanduser().resolve().as_uri()}?mode=rw"


def read_only_uri(path: Path) -> str:
    """SQLite's URI opening ``path`` for reading only (``mode=ro``).

    In a folder that cannot be written, SQLite cannot create the ``-shm`` file a WAL store's reader needs, so the
    file is opened ``immutable`` (no locks, no ``-shm``) when its write-ahead log is absent or empty, which is the
    state a cleanly closed store is left in; nobody can write beside it there.
    """
    uri = f"{path.expanduser().resolve().as_uri()}?mode=ro"
    wal = Path(f"{path}-wal")
    if not writable(path.parent) and (not wal.exists() or wal.stat().st_size == 0):
        uri += "&immutable=1"
    return uri


def check_store_file(path: Path, *, writable_file: bool = True) -> None:
    """Refuse a file that is not a healthy store before SQLite touches it (:class:`StoreError`, one line); with
    ``writable_file``, also a file that cannot be written. A missing file is fine (the store creates it).

    Its bytes are read only when this process holds no connection to it (the module docstring's first rule);
    otherwise ``os.stat`` checks what it can and SQLite reports the rest.
    """
    try:
        found = path.stat()
    except FileNotFoundError:
        return
    except OSError as error:
        raise StoreError(path, f"cannot be read ({error.strerror})") from None
    if stat.S_ISDIR(found.st_mode):
        raise StoreError(path, "is a folder, not an override store")
    if found.st_size == 0:
        raise StoreError(path, "is empty (0 bytes), not an override store; nothing was written. "
                         "Restore it from a backup or move it away to start a new store")
    with _CONNECTING:
        if (found.st_dev, found.st_ino) not in _CONNECTED:
            _check_bytes(path, found.st_size)
    if writable_file and not writable(path):
        raise StoreError(path, "is read-only; nothing was written. Make it writable, or point "
                         "EMPATHY_STORE or --store to a writable copy")


def _check_bytes(path: Path, size: int) -> None:
    """The header, truncation and write-ahead-log checks that read the file (no connection to it is open)."""
    header = _read_at(path, 0, 100)
    if not header.startswith(_SQLITE_HEADER):
        raise StoreError(path, "is not an SQLite override store (damaged or another file); nothing "
                         "was written. Restore it from a backup or move it away")
    if len(header) < 100:
        raise StoreError(path, f"is truncated ({size} bytes); nothing was written. Restore it from a "
                         "backup or move it away")
    shortfall = _short_of_header(path)
    # Another process's WAL checkpoint writes page 1 (with the new page count) before it extends the file, so a
    # shortfall seen without SQLite's locks may be a checkpoint in progress: a truncated file stays short.
    for _ in range(TRUNCATION_RECHECKS):
        if shortfall is None:
            break
        time.sleep(TRUNCATION_RECHECK_S)
        shortfall = _short_of_header(path)
    if shortfall is not None:
        raise StoreError(path, f"is truncated ({shortfall[0]} of {shortfall[1]} bytes); nothing was "
                         "written. Restore it from a backup or move it away")
    reason = foreign_wal(path, header)
    if reason is not None:
        raise StoreError(path, f"has a write-ahead log beside it that is not its own ({reason}); it was not "
                         f"replayed and nothing was written. Move {path.name}-wal away if it is stray, or restore "
                         "the store and its log together")


def foreign_wal(path: Path, header: bytes) -> str | None:
    """Why the ``-wal`` beside ``path`` is another database's, or ``None`` (absent, empty, or plausibly its own).

    A log belongs to a store when its page size is the store's and the store's own header (page 1) in the log's
    committed frames carries the store's ``application_id``. A log whose frames never rewrote page 1 cannot be
    told from the store's own and is accepted. Read twice when it looks foreign: a log being written while it is
    read can show a frame header before its page."""
    wal = Path(f"{path}-wal")
    verdict = _foreign_once(wal, header)
    for _ in range(3):
        if verdict is None:
            return None
        time.sleep(TRUNCATION_RECHECK_S)
        again = _foreign_once(wal, header)
        if again == verdict:
            return verdict
        verdict = again
    return verdict


def _foreign_once(wal: Path, header: bytes) -> str | None:
    try:
        content = wal.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"it cannot be read: {error.strerror}"
    if len(content) < _WAL_HEADER:
        return None  # SQLite ignores a log without a whole header
    magic = int.from_bytes(content[0:4], "big")
    if magic not in _WAL_MAGIC:
        return None  # not a valid log: SQLite ignores it
    page_size = int.from_bytes(content[8:12], "big")
    store_page = int.from_bytes(header[16:18], "big")
    store_page = 65536 if store_page == 1 else store_page
    salts = content[16:24]
    frame = _FRAME_HEADER + page_size
    frames = [(offset, int.from_bytes(content[offset:offset + 4], "big"), content[offset + 4:offset + 8])
              for offset in range(_WAL_HEADER, len(content) - frame + 1, frame)
              if content[offset + 8:offset + 16] == salts]
    if not frames:
        return None
    if page_size != store_page:
        return f"its pages are {page_size} bytes, the store's {store_page}"
    last_commit = max((index for index, (_, _, committed) in enumerate(frames) if committed != b"\0\0\0\0"),
                      default=-1)
    page_ones = [offset for offset, page, _ in frames[:last_commit + 1] if page == 1]
    if not page_ones:
        return None
    image = content[page_ones[-1] + _FRAME_HEADER:page_ones[-1] + frame]
    logged = int.from_bytes(image[68:72], "big")
    own = int.from_bytes(header[68:72], "big")
    if not image.startswith(_SQLITE_HEADER):
        return "its first page is not a SQLite header"
    if logged != own:
        return f"it holds application id {logged:#x}, the store {own:#x}"
    return None


def check_is_store(connection: sqlite3.Connection, path: Path) -> None:
    """Refuse a SQLite file of another application: its own ``application_id``, or tables but none of ours."""
    application = int(connection.execute("PRAGMA application_id").fetchone()[0])
    if application not in (0, APPLICATION_ID):
        raise StoreError(path, f"is another application's SQLite file (application id {application:#x}), not an "
                         "override store; nothing was written. Point EMPATHY_STORE or --store elsewhere")
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    tables = {name for name in tables if not name.startswith("sqlite_")}
    if tables and not tables & STORE_TABLES:
        shown = ", ".join(sorted(tables)[:3]) + (", ..." if len(tables) > 3 else "")
        raise StoreError(path, f"is another application's SQLite file (tables {shown}), not an override store; "
                         "nothing was written. Point EMPATHY_STORE or --store elsewhere")


def _read_at(path: Path, offset: int, size: int) -> bytes:
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            return handle.read(size)
    except OSError as error:
        raise StoreError(path, f"cannot be read ({error.strerror})") from None


def _short_of_header(path: Path) -> tuple[int, int] | None:
    """``(size, expected)`` when the file is shorter than its SQLite header's page count says, else ``None``."""
    try:
        header = _read_at(path, 0, 100)
        size = path.stat().st_size
    except (OSError, StoreError):
        return None
    if len(header) < 100:
        return None
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    # The header's page count is valid when its "version valid for" equals the change counter.
    if header[24:28] == header[92:96] and pages and size < pages * page_size:
        return size, pages * page_size
    return None


def writable(path: Path) -> bool:
    """Whether ``path`` can be written, judged by its mode bits too (``os.access`` says yes to root)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return os.access(path, os.W_OK) and bool(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
