"""Starting the app from an installed package: ``empathy app [DATA] [--port N] [--store STORE]``.

The app is the same frame and pages as ``streamlit run app.py`` in a clone: :data:`empathy.paths.PROJECT_ROOT` is the
checkout, or the bundle a wheel carries (``setup.py``). Its Streamlit settings (``.streamlit/config.toml`` there)
are passed as options, since Streamlit reads a config file only from the working folder and the home folder. The
data set and the store reach the app through the environment (:data:`DATA_ENV`, ``EMPATHY_STORE``). Nothing here
imports Streamlit: the app runs in a child process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from empathy.files import check_data_file, resolve_data_path
from empathy.paths import PROJECT_ROOT

#: The data set a new session of the app opens when its URL names none (a folder or an outputs file).
DATA_ENV = "EMPATHY_APP_DATA"
#: The override store the app reads and writes (a SQLite file or a ``postgresql://`` location).
STORE_ENV = "EMPATHY_STORE"


def app_root() -> Path:
    """The folder holding the app's ``app.py`` and ``app_pages/``; raises ``FileNotFoundError`` when it is absent
    (a wheel built without ``setup.py``'s bundle)."""
    if not (PROJECT_ROOT / "app.py").is_file() or not (PROJECT_ROOT / "app_pages").is_dir():
        raise FileNotFoundError(f"{PROJECT_ROOT}: the app's app.py and app_pages/ are missing from this installation")
    return PROJECT_ROOT


def config_options(config: Path) -> list[str]:
    """The settings of a Streamlit ``config.toml`` as ``streamlit run`` options (``--server.address 127.0.0.1``...);
    none when the file is absent."""
    if not config.is_file():
        return []
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    options: list[str] = []
    for section, values in tomllib.loads(config.read_text(encoding="utf-8")).items():
        for key, value in values.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            options += [f"--{section}.{key}", text]
    return options


@dataclass(frozen=True)
class AppLaunch:
    """How to start the app: the command line and the variables added to the environment.

    Attributes
    ----------
    command : list[str]
        ``python -m streamlit run ROOT/app.py`` with the app's settings, then the caller's options (which win).
    env : dict[str, str]
        :data:`DATA_ENV` (an absolute path) and ``EMPATHY_STORE`` when given.
    root : Path
        The app's root folder (:func:`app_root`).
    """

    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    root: Path = PROJECT_ROOT


def plan_launch(data: str | None = None, *, port: int | None = None, address: str | None = None,
                store: str | None = None, headless: bool = False,
                streamlit_options: Sequence[str] = ()) -> AppLaunch:
    """The :class:`AppLaunch` of ``empathy app``.

    Parameters
    ----------
    data : str, optional
        A data folder (``outputs.*`` and ``ratings*``) or an outputs file; default: the bundled demo.
    port : int, optional
        The port (default: Streamlit's, 8501).
    address : str, optional
        The address to listen on (default: the app's settings, ``127.0.0.1``: this machine only).
    store : str, optional
        The override store (``EMPATHY_STORE``): a SQLite file or a ``postgresql://`` location.
    headless : bool
        Do not open a browser.
    streamlit_options : Sequence[str]
        More ``streamlit run`` options, after the others (so they win).

    Raises
    ------
    DataError
        When ``data`` names no outputs file.
    FileNotFoundError
        When the installation holds no app.
    """
    root = app_root()
    env: dict[str, str] = {}
    if data is not None:
        outputs, _ = resolve_data_path(data)
        check_data_file(outputs)
        env[DATA_ENV] = str(Path(data).expanduser().resolve())
    if store is not None:
        if not store.strip():
            raise ValueError("--store: give a SQLite file or a postgresql:// location")
        is_url = store.startswith(("postgresql:", "postgres:")) or "=" in store
        env[STORE_ENV] = store if is_url else str(Path(store).expanduser().resolve())
    options = config_options(root / ".streamlit" / "config.toml")
    if port is not None:
        options += ["--server.port", str(port)]
    if address is not None:
        options += ["--server.address", address]
    if headless:
        options += ["--server.headless", "true"]
    command = [sys.executable, "-m", "streamlit", "run", str(root / "app.py"), *options, *streamlit_options]
    return AppLaunch(command=command, env=env, root=root)


def run_app(launch: AppLaunch, environ: Mapping[str, str]) -> int:
    """Run the app until it stops; return its exit code.

    On POSIX this process becomes Streamlit (``exec``), so Ctrl-C and a service manager's SIGTERM reach the server
    itself and nothing is left running; elsewhere Streamlit runs as a child and its exit code is returned.
    """
    env = {**environ, **launch.env}
    if os.name == "posix":
        sys.stdout.flush()
        os.execve(launch.command[0], launch.command, env)
    import subprocess

    process = subprocess.Popen(launch.command, env=env)
    try:
        return process.wait()
    except KeyboardInterrupt:
        # the console's Ctrl-C reached Streamlit too: let it shut down cleanly
        return process.wait()
