"""A throwaway PostgreSQL server for the tests and benchmarks: ``initdb`` in a temporary folder, ``pg_ctl`` start.

:func:`find_binaries` looks for ``initdb``/``pg_ctl`` on the PATH and in Debian's ``/usr/lib/postgresql/*/bin``.
PostgreSQL refuses to run as root, so as root the cluster belongs to the ``postgres`` user (created by Debian's
package) and its commands run through ``runuser``. The server listens on 127.0.0.1 on a free port with
password authentication (SCRAM) for TCP, and on a socket in its own folder; :meth:`PostgresServer.url` gives a
``postgresql://`` URL per database. ``$EMPATHY_TEST_POSTGRES_URL`` (an existing server's URL to a database
whose user may create databases) is used instead when set.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Password of the test cluster's superuser (the tests check that it is never printed).
PASSWORD = "s3cret-pg-pass"
USER = "postgres"


def find_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or ``None``."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(folder, "initdb").is_file() and Path(folder, "pg_ctl").is_file():
            return Path(folder)
    return None


def unavailable_reason() -> str | None:
    """Why no throwaway server can be started here (``None``: it can)."""
    if os.environ.get("EMPATHY_TEST_POSTGRES_URL", "").strip():
        return None
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -r requirements-dev.txt)"
    if find_binaries() is None:
        return ("PostgreSQL's initdb/pg_ctl not found (apt-get install postgresql, or set "
                "EMPATHY_TEST_POSTGRES_URL to a server)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(USER)
        except KeyError:
            return "running as root and there is no 'postgres' user to own the throwaway cluster"
        if shutil.which("runuser") is None:
            return "running as root without runuser to start PostgreSQL as the 'postgres' user"
    return None


def run_sql(url: str, *statements: str) -> None:
    """Run statements on the server of ``url`` (autocommit), as its owner would by hand."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement)


@contextmanager
def select_only_login(schema_url: str, password: str) -> Iterator[str]:
    """A login that may only read the tables of the URL's schema (``create_schema``'s URLs); yields its URL.

    The caller closes its stores' connections inside the block: the login is dropped after it.
    """
    schema = schema_url.rsplit("%3D", 1)[1]
    role = f"reader_{schema}"
    run_sql(schema_url, f"CREATE ROLE {role} LOGIN PASSWORD '{password}'", f"GRANT USAGE ON SCHEMA {schema} TO {role}",
            f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
    try:
        yield schema_url.replace(f"{USER}:{PASSWORD}@", f"{role}:{password}@")
    finally:
        run_sql(schema_url, f"DROP OWNED BY {role}", f"DROP ROLE {role}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """A throwaway cluster (or ``$EMPATHY_TEST_POSTGRES_URL``); :meth:`start`, :meth:`url`, :meth:`stop`."""

    def __init__(self, *, durable: bool = False):
        self.durable = durable  # False: fsync off (tests); True: the server's defaults (benchmarks)
        self.external = os.environ.get("EMPATHY_TEST_POSTGRES_URL", "").strip() or None
        self.folder: Path | None = None
        self.port = 0
        self.databases: list[str] = []
        self.shared_database: str | None = None

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", USER, "--"] if os.geteuid() == 0 else []
        # cwd: its own folder, which the postgres user can enter (a checkout under /root it cannot).
        result = subprocess.run([*prefix, *command], capture_output=True, text=True, timeout=120, cwd=self.folder)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(command[:2])} failed: {result.stderr.strip() or result.stdout.strip()}")

    def start(self) -> PostgresServer:
        if self.external:
            return self
        binaries = find_binaries()
        assert binaries is not None
        # As root the 'postgres' user must reach the folder: /tmp, not a $TMPDIR under /root.
        self.folder = Path(tempfile.mkdtemp(prefix="empathy-pg-", dir="/tmp" if os.geteuid() == 0 else None))
        if os.geteuid() == 0:
            account = pwd.getpwnam(USER)
            os.chown(self.folder, account.pw_uid, account.pw_gid)
        self.folder.chmod(0o700)
        data, password_file = self.folder / "data", self.folder / "pw"
        password_file.write_text(PASSWORD + "\n")
        if os.geteuid() == 0:
            os.chown(password_file, pwd.getpwnam(USER).pw_uid, -1)
        self._run(str(binaries / "initdb"), "-D", str(data), "-U", USER, "--pwfile", str(password_file),
                  "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8")
        self.port = _free_port()
        settings = [f"-p {self.port}", "-c listen_addresses=127.0.0.1", f"-c unix_socket_directories={self.folder}",
                    "-c max_connections=100"]
        if not self.durable:
            settings += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        self._run(str(binaries / "pg_ctl"), "-D", str(data), "-l", str(self.folder / "server.log"), "-w",
                  "-t", "60", "-o", " ".join(settings), "start")
        return self

    def admin_url(self) -> str:
        return self.external or f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/postgres"

    def url(self, database: str) -> str:
        """The URL of ``database`` on this server (with the password)."""
        if self.external:
            from urllib.parse import urlsplit, urlunsplit

            parts = urlsplit(self.external)
            return urlunsplit((parts.scheme, parts.netloc, f"/{database}", parts.query, parts.fragment))
        return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = f"empathy_test_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin_url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        self.databases.append(name)
        return self.url(name)

    def create_schema(self) -> str:
        """A new empty schema in the session's database; returns a URL whose ``search_path`` selects it.

        Much faster than a database per test (a few ms instead of half a second), and it exercises a store in
        a schema other than ``public``.
        """
        import psycopg

        if self.shared_database is None:
            self.shared_database = self.create_database()
        name = f"s_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.shared_database, autocommit=True) as connection:
            connection.execute(f'CREATE SCHEMA "{name}"')
        return f"{self.shared_database}?options=-csearch_path%3D{name}"

    def drop_schema(self, url: str) -> None:
        import psycopg

        name = url.rsplit("%3D", 1)[1]
        with psycopg.connect(self.shared_database, autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1].split("?", 1)[0]
        with psycopg.connect(self.admin_url(), autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if name in self.databases:
            self.databases.remove(name)

    def stop(self) -> None:
        if self.external:
            for name in list(self.databases):
                self.drop_database(self.url(name))
            return
        if self.folder is None:
            return
        binaries = find_binaries()
        try:
            self._run(str(binaries / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
