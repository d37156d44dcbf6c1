"""Where an override store is: a SQLite file or a PostgreSQL URL, the default place, and how to print it.

A *location* is a path (a SQLite file) or a ``postgresql://`` URL (a team's server, :data:`SERVER_SCHEMES`).
:func:`default_store_path` says where the store of a data folder is (``$EMPATHY_STORE`` wins);
:func:`mask_location` is what every message, ``repr`` and label prints, a URL's password masked.
:class:`StoreError` is the one error a store that cannot be used raises, whatever the backend.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from empathy.io import DataError

#: Environment variable naming the store: a SQLite file or a ``postgresql://`` URL (wins over the default).
STORE_ENV = "EMPATHY_STORE"
#: Location prefixes of a PostgreSQL store (libpq's URI schemes).
SERVER_SCHEMES: tuple[str, ...] = ("postgresql://", "postgres://")
#: File name of the default store, placed in the data folder.
STORE_FILENAME = ".empathy-overrides.sqlite"


class StoreError(DataError):
    """The override store cannot be used (empty, truncated, not SQLite, read-only, newer schema, unreachable).

    ``str(error)`` is one line naming the store (a URL's password masked); nothing has been written to it. A
    subclass of :class:`empathy.io.DataError`, so the CLI reports it as one line with exit code 2.
    """


def is_server_location(location: object) -> bool:
    """Whether a store location is a PostgreSQL URL (``postgresql://...``) rather than a SQLite file."""
    return isinstance(location, str) and location.strip().lower().startswith(SERVER_SCHEMES)


def mask_location(location: str | Path) -> str:
    """A store location fit to print: a URL's password (in the user part or a ``password=`` parameter) as ``***``.

    A SQLite path is returned as is. Used by every message, ``repr`` and label of a store.
    """
    text = str(location)
    if not is_server_location(text):
        return text
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


def default_store_path(data_dir: str | Path | None = None) -> Path | str:
    """Where the override store lives: ``$EMPATHY_STORE``, else ``<data_dir>/.empathy-overrides.sqlite``.

    Without a data folder (uploaded files) the store goes to ``.empathy-cache/`` in the working directory.
    ``$EMPATHY_STORE`` may be a ``postgresql://`` URL, returned as the string (a :class:`Path` would fold its
    ``//``); :func:`empathy.labels.backends.open_store` opens either.
    """
    env = os.environ.get(STORE_ENV, "").strip()
    if is_server_location(env):
        return env
    if env:
        return Path(env)
    if data_dir is None:
        return Path.cwd() / ".empathy-cache" / "overrides.sqlite"
    return Path(data_dir) / STORE_FILENAME
