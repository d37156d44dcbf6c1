"""Where an override store is: a SQLite file or a PostgreSQL server, the default place, and how to print it.

A *location* is a path (a SQLite file) or a PostgreSQL connection string: a ``postgresql://`` URL
(:data:`SERVER_SCHEMES`) or libpq's keyword form (``host=db user=ann dbname=team``, :func:`is_keyword_dsn`).
:func:`default_store_path` says where the store of a data folder, or of the uploads, is (``$EMPATHY_STORE``
wins; never the working directory); :func:`mask_location` is what every message, ``repr`` and label prints, every
password masked (URL, ``password=`` parameter, keyword form, quoted or not); :func:`password_source` says where
a server's password comes from (the location, ``PGPASSWORD``, a password file) without printing it.
:class:`StoreError` is the one error a store that cannot be used raises, whatever the backend.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from empathy.cachefiles import CACHE_ENV, user_cache_dir  # noqa: F401 (re-exported: the labels' paths)
from empathy.io import DataError

#: Environment variable naming the store: a SQLite file or a ``postgresql://`` URL (wins over the default).
STORE_ENV = "EMPATHY_STORE"
#: Location prefixes of a PostgreSQL store (libpq's URI schemes).
SERVER_SCHEMES: tuple[str, ...] = ("postgresql://", "postgres://")
#: File name of the default store, placed in the data folder.
STORE_FILENAME = ".empathy-overrides.sqlite"
#: File name of the uploads' store, in the folder the app keeps uploads in.
UPLOADS_STORE_FILENAME = "overrides.sqlite"
#: libpq's connection keywords (https://www.postgresql.org/docs/current/libpq-connect.html): a location that
#: starts with one of them and ``=`` is a keyword-form connection string.
LIBPQ_KEYWORDS: frozenset[str] = frozenset({
    "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth", "channel_binding",
    "connect_timeout", "client_encoding", "options", "application_name", "fallback_application_name", "keepalives",
    "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "replication", "gssencmode",
    "sslmode", "requiressl", "sslnegotiation", "sslcompression", "sslcert", "sslkey", "sslpassword",
    "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version",
    "ssl_max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs",
    "load_balance_hosts"})
#: Keywords whose value is a secret (masked wherever a location is printed).
SECRET_KEYWORDS: frozenset[str] = frozenset({"password", "sslpassword"})
#: libpq's environment variable holding a password (never printed).
PASSWORD_ENV = "PGPASSWORD"
_KEYWORD_START = re.compile(r"^\s*([A-Za-z_]+)\s*=")


class StoreError(DataError):
    """The override store cannot be used (empty, truncated, not SQLite, read-only, newer schema, unreachable).

    ``str(error)`` is one line naming the store (a URL's password masked); nothing has been written to it. A
    subclass of :class:`empathy.io.DataError`, so the CLI reports it as one line with exit code 2.
    """


def is_keyword_dsn(location: object) -> bool:
    """Whether a location is libpq's keyword form (``host=db user=ann password=... dbname=team``)."""
    if not isinstance(location, str):
        return False
    found = _KEYWORD_START.match(location)
    return found is not None and found.group(1).lower() in LIBPQ_KEYWORDS


def is_server_location(location: object) -> bool:
    """Whether a store location is a PostgreSQL server (a ``postgresql://`` URL or a keyword-form connection
    string) rather than a SQLite file."""
    return isinstance(location, str) and (location.strip().lower().startswith(SERVER_SCHEMES)
                                          or is_keyword_dsn(location))


def parse_keyword_dsn(text: str) -> list[tuple[str, str]]:
    """The ``(keyword, value)`` pairs of a keyword-form connection string, as libpq reads them.

    ``keyword = value`` pairs separated by spaces; a value is a run of non-space characters or single-quoted (then
    it may hold spaces); a backslash escapes the next character (``\\'`` and ``\\\\`` in quoted values).
    Raises ``ValueError`` for text libpq would refuse (a keyword without ``=``, an unterminated quote).
    """
    pairs: list[tuple[str, str]] = []
    position, size = 0, len(text)
    while True:
        while position < size and text[position].isspace():
            position += 1
        if position >= size:
            return pairs
        found = re.compile(r"([A-Za-z_]+)\s*=\s*").match(text, position)
        if found is None:
            raise ValueError(f"missing '=' after a keyword at character {position + 1}")
        position = found.end()
        value, position = _keyword_value(text, position)
        pairs.append((found.group(1), value))


def _keyword_value(text: str, position: int) -> tuple[str, int]:
    """One value of a keyword-form string from ``position``: the value and where it ends."""
    quoted = position < len(text) and text[position] == "'"
    position += quoted
    characters: list[str] = []
    while position < len(text):
        character = text[position]
        if character == "\\" and position + 1 < len(text):
            characters.append(text[position + 1])
            position += 2
            continue
        if (quoted and character == "'") or (not quoted and character.isspace()):
            return "".join(characters), position + quoted
        characters.append(character)
        position += 1
    if quoted:
        raise ValueError("unterminated quoted value")
    return "".join(characters), position


def _quote_keyword_value(value: str) -> str:
    if value and not any(c.isspace() or c in "'\\" for c in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _mask_keyword_dsn(text: str) -> str:
    """A keyword-form string with every secret value as ``***`` (unparseable text: everything after the first
    secret keyword, or the whole text, masked)."""
    try:
        pairs = parse_keyword_dsn(text)
    except ValueError:
        secret = re.search(r"(?i)(ssl)?password", text)
        return (text[:secret.start()] + "password=***") if secret else "(an unreadable connection string)"
    return " ".join(f"{key}={'***' if key.lower() in SECRET_KEYWORDS else _quote_keyword_value(value)}"
                    for key, value in pairs)


def _written_passwords(text: str) -> list[str]:
    """The passwords written in a server location (URL user part, ``password=`` parameter or keyword)."""
    found: list[str] = []
    try:
        if is_keyword_dsn(text):
            found.extend(value for key, value in parse_keyword_dsn(text) if key.lower() in SECRET_KEYWORDS)
        elif is_server_location(text):
            parts = urlsplit(text)
            if parts.password:
                found.append(parts.password)
            found.extend(v for k, v in parse_qsl(parts.query) if k.lower() in SECRET_KEYWORDS)
    except ValueError:
        pass  # unparseable: mask_location masks it whole
    return [secret for secret in found if secret]


def location_secrets(location: str | Path) -> list[str]:
    """The passwords a server location carries, and ``$PGPASSWORD``: what must never be printed.

    Used to mask them in a server's error messages (secrets shorter than 3 characters are left out: masking
    them would garble any text).
    """
    found = _written_passwords(str(location).strip())
    environment = os.environ.get(PASSWORD_ENV, "")
    if environment:
        found.append(environment)
    return [secret for secret in found if len(secret) >= 3]


def password_source(location: str | Path) -> str | None:
    """Where a server location's password comes from, fit to print (never the password): ``"the location"``,
    ``"the environment (PGPASSWORD)"``, ``"the password file <path>"``; ``None`` for a SQLite file or when no
    password is given (a trusted or peer login).
    """
    text = str(location).strip()
    if not is_server_location(text):
        return None
    if _written_passwords(text):
        return "the location"
    if os.environ.get(PASSWORD_ENV):
        return f"the environment ({PASSWORD_ENV})"
    named = os.environ.get("PGPASSFILE", "").strip()
    passfile = Path(named).expanduser() if named else Path.home() / ".pgpass"
    if passfile.is_file():
        return f"the password file {passfile}"
    return None


def mask_location(location: str | Path) -> str:
    """A store location fit to print: every password as ``***``.

    A URL's password (in the user part or a ``password=`` parameter), a keyword-form string's ``password=``
    (quoted, with spaces or escaped quotes, or not); a SQLite path is returned as is. Used by every message,
    ``repr`` and label of a store. ``$PGPASSWORD`` is never part of a location, and never printed.
    """
    text = str(location)
    if not is_server_location(text):
        return text
    if is_keyword_dsn(text):
        return _mask_keyword_dsn(text.strip())
    try:
        parts = urlsplit(text.strip())
        netloc = parts.netloc
        if "@" in netloc:
            credentials, host = netloc.rsplit("@", 1)
            if ":" in credentials:
                credentials = credentials.split(":", 1)[0] + ":***"
            netloc = f"{credentials}@{host}"
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs], safe="*/:")
        # Built by hand: urlunsplit drops the '//' of an empty host (a unix-socket URL).
        return (f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
                + (f"#{parts.fragment}" if parts.fragment else ""))
    except ValueError:  # not parseable as a URL: show the scheme only, never what might be a password
        return text.split("://", 1)[0] + "://***"


def default_uploads_dir() -> Path:
    """Where the app keeps uploaded files when nothing else is said: ``<user cache dir>/uploads``."""
    return user_cache_dir() / "uploads"


def default_store_path(data_dir: str | Path | None = None, *, uploads_dir: str | Path | None = None) -> Path | str:
    """Where the override store lives: ``$EMPATHY_STORE``, else ``<data_dir>/.empathy-overrides.sqlite``.

    Without a data folder (uploaded files) the store lives with the uploads: ``<uploads_dir>/overrides.sqlite``
    (``uploads_dir``: the folder the app keeps uploads in, default :func:`default_uploads_dir`), never in the
    working directory, so the same upload finds its decisions whichever folder the app was started from
    (:func:`empathy.labels.relocation.adopt_working_directory_store` moves a store left at the old place).
    ``$EMPATHY_STORE`` may be a server location, returned as the string (a :class:`Path` would fold a URL's
    ``//``); :func:`empathy.labels.backends.open_store` opens either.
    """
    env = os.environ.get(STORE_ENV, "").strip()
    if is_server_location(env):
        return env
    if env:
        return Path(env).expanduser()
    if data_dir is None:
        folder = Path(uploads_dir).expanduser() if uploads_dir is not None else default_uploads_dir()
        return folder / UPLOADS_STORE_FILENAME
    return Path(data_dir) / STORE_FILENAME


def working_directory_store(cwd: str | Path | None = None) -> Path:
    """Where versions before issue 24 kept the uploads' store: ``<working directory>/.empathy-cache/overrides.sqlite``
    (found and moved by :func:`empathy.labels.relocation.adopt_working_directory_store`)."""
    return Path(cwd if cwd is not None else Path.cwd()) / ".empathy-cache" / "overrides.sqlite"
