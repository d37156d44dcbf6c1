"""Where an override store is: a SQLite file or a PostgreSQL server, the default place, and how to print it.

A *location* is a path (a SQLite file) or a PostgreSQL connection string: a ``postgresql://`` URL
(:data:`SERVER_SCHEMES`) or libpq's keyword form (``host=db user=ann dbname=team``, :func:`is_keyword_dsn`).
:func:`default_store_path` says where the store of a data folder, or of the uploads, is (``$EMPATHY_STORE``
wins; never the working directory); :func:`mask_location` is what every message, ``repr`` and label prints, every
password masked (URL, ``password=`` parameter, keyword form, quoted or not); :func:`password_source` says where
a server's password comes from (the location, ``PGPASSWORD``, a password file) without printing it.
:class:`StoreError` is the one error a store that cannot be used raises, whatever the backend.

:func:`store_location` is where every location a person typed (``--store``, ``--overrides``, ``$EMPATHY_STORE``)
is checked before anything is opened or created: a leading ``~`` of a file path is expanded, a URL scheme is
lower-cased, and text that is neither a file path nor a connection string libpq would read as written is refused
with one line that never shows it whole (:func:`location_problem` says why): a misspelt scheme
(``postgressql://``), a URL-like text without its scheme (``ann:pw@db/team``), a keyword string with a key libpq
does not know (``hots=db password=...``), a password holding an unencoded ``/`` or ``@`` (libpq would read part
of it as the port, host or database), a query parameter that is not ``key=value`` with a libpq key. URLs are read
by libpq's own rules (:func:`url_parts`: the user part ends at the first ``@`` or ``/``, so a ``#`` or ``?`` in a
password is part of it), not by :func:`urllib.parse.urlsplit`, which would cut such a password short and print the
rest. A path starting with ``/``, ``./``, ``../`` or ``~`` is always a file.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

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
#: URL query parameters libpq takes besides its keywords (``ssl=true``, for JDBC's URLs).
URL_ONLY_PARAMETERS: frozenset[str] = frozenset({"ssl"})
#: Prefixes that make a location a file path whatever follows (``./host=db password=x`` is a file).
FILE_PREFIXES: tuple[str, ...] = ("/", "./", "../", "~")
_KEYWORD_START = re.compile(r"^\s*([A-Za-z_]+)\s*=")
_LATER_KEYWORD = re.compile(r"\s([A-Za-z_]+)\s*=")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(//)?")
# user:password@host without a scheme (no '/' before the '@', so not a path holding an '@')
_BARE_CREDENTIALS = re.compile(r"^[^\s/:@]+:[^\s/@]*@")
_PORTS = re.compile(r"\d*")
_SCHEME_NAMES = ("postgresql", "postgres")


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


def _mask_keyword_pairs(pairs: list[tuple[str, str]]) -> str:
    """Keyword pairs fit to print: a secret's value as ``***``, a key libpq does not know with its value as
    ``***`` (a misspelt ``pasword=`` holds a password; a key may itself be a piece of one)."""
    shown = []
    for key, value in pairs:
        if key not in LIBPQ_KEYWORDS:
            shown.append("***")
        elif key.lower() in SECRET_KEYWORDS:
            shown.append(f"{key}=***")
        else:
            shown.append(f"{key}={_quote_keyword_value(value)}")
    return " ".join(shown)


def _mask_keyword_dsn(text: str) -> str:
    """A keyword-form string with every secret value as ``***`` (unparseable text: the readable known keys before
    the first secret keyword and ``password=***``, else the whole text masked)."""
    try:
        return _mask_keyword_pairs(parse_keyword_dsn(text))
    except ValueError:
        pass
    secret = re.search(r"(?i)(ssl)?password", text)
    if secret:
        try:
            before = parse_keyword_dsn(text[:secret.start()])
        except ValueError:
            before = None
        if before is not None and all(k in LIBPQ_KEYWORDS and k not in SECRET_KEYWORDS for k, _ in before):
            return " ".join([*(f"{k}={_quote_keyword_value(v)}" for k, v in before), "password=***"])
    return "(an unreadable connection string)"


@dataclass(frozen=True)
class UrlParts:
    """A ``postgresql://`` URL cut as libpq cuts it (``conninfo_uri_parse_options``), every piece as written.

    ``user`` and ``password`` are ``None`` when the URL has no ``user@`` part (libpq looks for it up to the first
    ``@`` or ``/``, so a ``?`` or ``#`` before the ``@`` belongs to the password); ``hosts`` runs to the first
    ``/`` or ``?``; ``database`` from that ``/`` to the first ``?``; ``query`` after it (``None`` without one).
    """

    scheme: str
    user: str | None
    password: str | None
    hosts: str
    database: str | None
    query: str | None

    def query_pairs(self) -> list[tuple[str, str | None]]:
        """The query's ``(key, value)`` pairs, percent-decoded; ``value`` is ``None`` for a part that is not
        exactly one ``key=value`` (libpq refuses it)."""
        if not self.query:
            return []
        pairs: list[tuple[str, str | None]] = []
        for part in self.query.split("&"):
            key, separator, value = part.partition("=")
            pairs.append((unquote(key), unquote(value) if separator and "=" not in value else None))
        return pairs


def url_parts(text: str) -> UrlParts:
    """``text``, a ``postgresql://`` or ``postgres://`` URL, cut into :class:`UrlParts` (never raises)."""
    scheme, _, rest = text.partition("://")
    user = password = None
    cut = next((i for i, c in enumerate(rest) if c in "@/"), len(rest))
    if cut < len(rest) and rest[cut] == "@":
        user, separator, secret = rest[:cut].partition(":")
        password = secret if separator else None
        rest = rest[cut + 1:]
    hosts = re.match(r"[^/?]*", rest).group(0)  # type: ignore[union-attr]  # always matches
    rest = rest[len(hosts):]
    database = None
    if rest.startswith("/"):
        database, _, _ = rest[1:].partition("?")
        rest = rest[1 + len(database):]
    query = rest[1:] if rest.startswith("?") else None
    return UrlParts(scheme, user, password, hosts, database, query)


def _closest(name: str, choices: frozenset[str] | tuple[str, ...]) -> str:
    """`` (the closest is 'x')`` when ``name`` looks like a misspelt one of ``choices``, else ``""``."""
    close = difflib.get_close_matches(name.lower(), sorted(choices), n=1, cutoff=0.75)
    return f" (the closest is '{close[0]}')" if close else ""


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _url_cut_problem(parts: UrlParts) -> str | None:
    """Why libpq would cut the URL's password into another piece (its port, host or database), or ``None``."""
    if "@" in parts.hosts:
        return ("holds more than one '@' before the host: percent-encode an '@' of the user name or password as "
                "%40")
    for host in parts.hosts.split(","):
        bare = re.sub(r"\[[^\]]*\]", "", host)  # an IPv6 address holds ':' of its own
        if ":" in bare and not _PORTS.fullmatch(bare.rpartition(":")[2]):
            return ("has a port that is not a number after a ':' (a password holding '/' must be "
                    "percent-encoded as %2F, or given through PGPASSWORD or a password file)")
    if parts.database is not None and "@" in parts.database:
        return ("has an '@' after the host (a password holding '/' must be percent-encoded as %2F; an '@' of the "
                "database name as %40)")
    return None


def _url_query_problem(parts: UrlParts) -> str | None:
    """Why libpq would refuse the URL's query (a part that is not ``key=value``, an unknown key), or ``None``."""
    for position, (key, value) in enumerate(parts.query_pairs(), start=1):
        if value is None:
            return (f"has a {_ordinal(position)} query parameter that is not one key=value (a value holding '&' or "
                    "'=' must be percent-encoded as %26, %3D)")
        if key not in LIBPQ_KEYWORDS and key not in URL_ONLY_PARAMETERS:
            return (f"has a {_ordinal(position)} query parameter that is not a libpq connection keyword"
                    f"{_closest(key, LIBPQ_KEYWORDS)}; its name is not shown, as it may be part of a password")
    return None


def _keyword_problem(text: str) -> str | None:
    """Why libpq would refuse the keyword-form string ``text`` (a key it does not know), or ``None``."""
    try:
        pairs = parse_keyword_dsn(text)
    except ValueError as error:
        return f"is not a readable connection string ({error})"
    for position, (key, _) in enumerate(pairs, start=1):
        if key not in LIBPQ_KEYWORDS:
            return (f"is not a connection string libpq reads: its {_ordinal(position)} key is not a libpq keyword"
                    f"{_closest(key, LIBPQ_KEYWORDS)}; the key is not shown, as it may be part of a password")
    return None


def _kind(text: str) -> str:
    """What a stripped location looks like: ``url``, ``keywords`` (a server), ``lookalike-url``,
    ``lookalike-keywords`` (text meant as one that libpq would not read) or ``file``."""
    if text.startswith(FILE_PREFIXES):
        return "file"
    if text.lower().startswith(SERVER_SCHEMES):
        return "url"
    if is_keyword_dsn(text):
        return "keywords"
    scheme = _SCHEME.match(text)
    if scheme and (scheme.group(2) or scheme.group(1).lower() in _SCHEME_NAMES
                   or _closest(scheme.group(1), _SCHEME_NAMES)):
        return "lookalike-url"
    if _BARE_CREDENTIALS.match(text):
        return "lookalike-url"
    first = _KEYWORD_START.match(text)
    if first and (_LATER_KEYWORD.search(text, first.end())
                  or _closest(first.group(1), tuple(SECRET_KEYWORDS))):
        return "lookalike-keywords"
    return "file"


def location_problem(location: str | Path) -> str | None:
    """Why a store location cannot be used as written, fit to print after its masked form; ``None`` when it can.

    See the module docstring: a file path is always usable here (the store checks the file itself).
    """
    text = str(location).strip()
    kind = _kind(text)
    if not text:
        return "is empty: give a SQLite file or a postgresql:// URL"
    if kind == "url":
        parts = url_parts(text)
        return _url_cut_problem(parts) or _url_query_problem(parts)
    if kind in ("keywords", "lookalike-keywords"):
        return _keyword_problem(text)
    if kind == "lookalike-url":
        scheme = _SCHEME.match(text)
        if scheme is not None and scheme.group(2):
            return ("has a scheme that is neither postgresql:// nor postgres://"
                    f"{_closest(scheme.group(1), _SCHEME_NAMES)}; a SQLite store is a file path, not a URL")
        if scheme is not None and (scheme.group(1).lower() in _SCHEME_NAMES or _closest(scheme.group(1),
                                                                                        _SCHEME_NAMES)):
            return "lacks the '//' after its scheme: a PostgreSQL store starts postgresql:// or postgres://"
        return ("looks like user:password@host without a scheme: a PostgreSQL store starts postgresql://, a "
                "SQLite store is a file path (write ./NAME for a file whose name holds ':' and '@')")
    return None


def store_location(location: str | Path) -> str | Path:
    """A store location as a person typed it, ready to open: a server's connection string (stripped, a URL's
    scheme in lower case, as libpq reads only that), or a file path with a leading ``~`` expanded.

    Every command and page passes what it was given (``--store``, ``--overrides``, ``$EMPATHY_STORE``) through
    here before a file is looked at or a folder created. Raises :class:`StoreError` (one line, the location masked,
    nothing created) for text meant as a server location that libpq would not read as written
    (:func:`location_problem`).
    """
    text = str(location).strip()
    problem = location_problem(text)
    if problem is not None:
        raise StoreError(mask_location(text) or "(no store)", f"{problem}; nothing was created or written")
    kind = _kind(text)
    if kind == "url":
        scheme, _, rest = text.partition("://")
        return f"{scheme.lower()}://{rest}"
    if kind == "keywords":
        return text
    return Path(location).expanduser() if isinstance(location, Path) else Path(text).expanduser()


def _written_passwords(text: str) -> list[str]:
    """The passwords written in a server location (URL user part, ``password=`` parameter or keyword), as written
    and percent-decoded."""
    found: list[str] = []
    kind = _kind(text)
    if kind in ("keywords", "lookalike-keywords"):
        try:
            found.extend(value for key, value in parse_keyword_dsn(text) if key.lower() in SECRET_KEYWORDS)
        except ValueError:
            pass  # unparseable: mask_location masks it whole
    elif kind == "url":
        parts = url_parts(text)
        if parts.password:
            found.extend([parts.password, unquote(parts.password)])
        found.extend(value for key, value in parts.query_pairs() if key.lower() in SECRET_KEYWORDS and value)
    return list(dict.fromkeys(secret for secret in found if secret))


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

    A URL's password (in the user part, or a ``password=`` or ``sslpassword=`` parameter, the URL cut as libpq
    cuts it: :func:`url_parts`), a keyword-form string's ``password=`` and ``sslpassword=`` (quoted, with spaces
    or escaped quotes, or not); a key libpq does not know is shown as ``***`` with its value; text meant as a
    server location that libpq would not read (:func:`location_problem`) shows at most its scheme. A file path is
    returned as is. Used by every message, ``repr`` and label of a store. ``$PGPASSWORD`` is never part of a
    location, and never printed.
    """
    text = str(location)
    stripped = text.strip()
    kind = _kind(stripped)
    if kind == "file":
        return text
    if kind in ("keywords", "lookalike-keywords"):
        return _mask_keyword_dsn(stripped)
    parts = url_parts(stripped)
    if kind == "lookalike-url" or _url_cut_problem(parts) is not None:
        # where the password ends cannot be told: nothing after the scheme (or a user name) is shown
        scheme = _SCHEME.match(stripped)
        if scheme is None:
            return "***"
        return f"{scheme.group(1)}{'://' if scheme.group(2) else ':'}***"
    shown = f"{parts.scheme}://"
    if parts.user is not None:
        shown += parts.user + (":***" if parts.password is not None else "") + "@"
    shown += parts.hosts
    if parts.database is not None:
        shown += "/" + parts.database
    if parts.query is not None:
        pieces = []
        for piece, (key, value) in zip(parts.query.split("&"), parts.query_pairs(), strict=True):
            if value is None or (key not in LIBPQ_KEYWORDS and key not in URL_ONLY_PARAMETERS):
                pieces.append("***")
            elif key.lower() in SECRET_KEYWORDS:
                pieces.append(f"{piece.partition('=')[0]}=***")
            else:
                pieces.append(piece)
        shown += "?" + "&".join(pieces)
    return shown


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
    ``//``); :func:`empathy.labels.backends.open_store` opens either. It passes :func:`store_location` (``~``
    expanded; :class:`StoreError` for a location libpq would not read as written).
    """
    env = os.environ.get(STORE_ENV, "").strip()
    if env:
        return store_location(env)
    if data_dir is None:
        folder = Path(uploads_dir).expanduser() if uploads_dir is not None else default_uploads_dir()
        return folder / UPLOADS_STORE_FILENAME
    return Path(data_dir) / STORE_FILENAME


def working_directory_store(cwd: str | Path | None = None) -> Path:
    """Where versions before issue 24 kept the uploads' store: ``<working directory>/.empathy-cache/overrides.sqlite``
    (found and moved by :func:`empathy.labels.relocation.adopt_working_directory_store`)."""
    return Path(cwd if cwd is not None else Path.cwd()) / ".empathy-cache" / "overrides.sqlite"
