"""Packaging: requirements.txt holds plain requirements (installable from any directory) equal to pyproject's."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")


def _requirements(path: Path) -> list[str]:
    return [line.split("#", 1)[0].strip() for line in path.read_text().splitlines()
            if line.split("#", 1)[0].strip()]


def test_requirements_are_plain_and_equal_to_the_package_dependencies():
    lines = _requirements(ROOT / "requirements.txt")
    # no editable or path line: pip reads those relative to the working directory, not to the file
    assert not [line for line in lines if line.startswith("-") or re.match(r"^[./~]", line)]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert sorted(lines) == sorted(project["dependencies"])
    names = {re.split(r"[<>=!~ ]", line, maxsplit=1)[0].lower() for line in lines}
    assert {"streamlit", "plotly"} <= names  # the package holds empathy_app, which imports them


def test_the_development_requirements_include_the_runtime_ones():
    assert "-r requirements.txt" in _requirements(ROOT / "requirements-dev.txt")


def test_every_file_the_app_reads_beside_its_modules_is_package_data():
    # a wheel carries a non-Python file only when [tool.setuptools.package-data] names it (a clean clone has no
    # egg-info to fall back on): the key queue's browser code and the page icon are read at run time
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package = ROOT / "empathy_app"
    covered = {path for pattern in config["empathy_app"] for path in package.glob(pattern)}
    wanted = {path for path in (package / "static").rglob("*") if path.is_file()} | {package / "icon.png"}
    assert len(wanted) >= 5  # the queue's script, its stylesheet, two HTML roots, the icon
    assert sorted(map(str, wanted - covered)) == []


# --- the built package: a wheel and sdist that carry the app, started from an installed copy ------------------------

BUNDLED_PAGES = sorted(p.name for p in (ROOT / "app_pages").glob("*.py"))
DEMO_FILES = sorted(p.name for p in (ROOT / "data").iterdir() if p.is_file() and not p.name.startswith("."))


def _copy_checkout(target: Path) -> Path:
    # a build writes build/ and *.egg-info beside the sources: build from a copy, never in the checkout
    import shutil

    shutil.copytree(ROOT, target, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "node_modules", "__pycache__", "*.egg-info", "build", ".empathy-overrides.sqlite*"))
    return target


def _build(kind: str, source: Path, out: Path) -> Path:
    import subprocess

    hook = {"sdist": "build_sdist", "wheel": "build_wheel"}[kind]
    done = subprocess.run([sys.executable, "-c", f"import sys; from setuptools import build_meta as b; "
                           f"print(b.{hook}(sys.argv[1]))", str(out)],
                          cwd=source, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return out / done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """The sdist built from a copy of the checkout, and the wheel built from that sdist (so the sdist is complete)."""
    import tarfile

    folder = tmp_path_factory.mktemp("build")
    sdist = _build("sdist", _copy_checkout(folder / "src"), folder / "dist")
    with tarfile.open(sdist) as archive:
        archive.extractall(folder / "unpacked", filter="data")
    (unpacked,) = (folder / "unpacked").iterdir()
    wheel = _build("wheel", unpacked, folder / "dist")
    return {"sdist": sdist, "wheel": wheel, "folder": folder}


def test_the_distribution_is_named_empathy_mechanisms_not_the_unrelated_empathy():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "empathy-mechanisms"  # "empathy" on PyPI is someone else's package
    assert project["scripts"]["empathy"] == "empathy.cli:main"


def test_the_wheel_and_the_sdist_carry_the_app_its_pages_settings_and_demo(built):
    import tarfile
    import zipfile

    with zipfile.ZipFile(built["wheel"]) as wheel:
        names = set(wheel.namelist())
    bundle = "empathy_app/bundle/"
    assert f"{bundle}app.py" in names and f"{bundle}.streamlit/config.toml" in names
    assert sorted(n[len(bundle) + len("app_pages/"):] for n in names if n.startswith(f"{bundle}app_pages/")) \
        == BUNDLED_PAGES
    assert sorted(n[len(bundle) + len("data/"):] for n in names if n.startswith(f"{bundle}data/")) == DEMO_FILES
    assert {"empathy_app/icon.png", "empathy_app/static/keyqueue/queue.js", "empathy/cli/app.py",
            "empathy/launch.py"} <= names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".sqlite")]
    with zipfile.ZipFile(built["wheel"]) as wheel:
        assert wheel.read(f"{bundle}app.py") == (ROOT / "app.py").read_bytes()
        metadata = wheel.read("empathy_mechanisms-0.1.0.dist-info/METADATA").decode()
    assert "Name: empathy-mechanisms" in metadata
    with tarfile.open(built["sdist"]) as archive:
        members = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"app.py", "setup.py", "MANIFEST.in", ".streamlit/config.toml", "data/outputs.csv"} <= members
    assert {f"app_pages/{page}" for page in BUNDLED_PAGES} <= members


@pytest.fixture(scope="module")
def installed(built) -> Path:
    """A fresh venv outside the checkout with the wheel installed (``--no-deps``); its dependencies come from the
    test's own environment through a path file, so nothing is downloaded."""
    import subprocess
    import sysconfig
    import venv

    target = built["folder"] / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(target)
    python = target / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # a plain path line: the editable install of the checkout in that environment (its own .pth) stays out
    Path(purelib, "test-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(built["wheel"])],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return target


def _clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EMPATHY_STORE", "EMPATHY_DEMO_DIR")}
    return {**env, "EMPATHY_CACHE_DIR": str(tmp / "cache"), "EMPATHY_SETTINGS": str(tmp / "settings.json")}


def test_the_installed_package_is_the_wheels_copy_and_finds_its_bundle(installed, tmp_path):
    import subprocess

    done = subprocess.run([installed / "bin" / "python", "-c",
                           "import empathy, empathy.paths as p, empathy.launch as l; "
                           "print(empathy.__file__); print(p.PROJECT_ROOT); print(l.app_root()); print(p.DEMO_DIR)"],
                          cwd=tmp_path, env=_clean_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    module, root, app_root, demo = done.stdout.split()
    assert Path(module).is_relative_to(installed) and not Path(module).is_relative_to(ROOT)
    assert root == app_root == str(Path(module).parent.parent / "empathy_app" / "bundle")
    assert sorted(p.name for p in Path(demo).iterdir()) == DEMO_FILES


def test_the_installed_command_rejects_a_data_path_without_outputs_in_one_line(installed, tmp_path):
    import subprocess

    (tmp_path / "empty").mkdir()
    done = subprocess.run([installed / "bin" / "empathy", "app", str(tmp_path / "empty"), "--headless"],
                          cwd=tmp_path, env=_clean_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"empathy: error: {tmp_path / 'empty'}: no outputs.csv, outputs.jsonl or "
                                        "outputs.parquet in this folder"]


@pytest.mark.browser
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian chromium at /usr/bin/chromium")
def test_empathy_app_starts_the_installed_app_from_another_folder(installed, tmp_path):
    """``empathy app DATA --port N`` from a folder that is not the checkout: healthy, the same navigation as
    ``streamlit run app.py``, and the Data page shows the data set it was given (a copy of the demo)."""
    import shutil
    import subprocess

    from browser_support import chromium, free_port, settle, stop_app, wait_for_http

    from empathy_app.frame import PAGES

    data = tmp_path / "study-7"
    shutil.copytree(ROOT / "data", data, ignore=shutil.ignore_patterns(".*"))
    port = free_port()
    log = tmp_path / "app.log"
    with log.open("w") as out:
        process = subprocess.Popen([installed / "bin" / "empathy", "app", str(data), "--port", str(port),
                                    "--store", str(tmp_path / "team.sqlite"), "--headless"],
                                   cwd=tmp_path, env=_clean_env(tmp_path), stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(process, f"{url}/_stcore/health", name="empathy app", log_path=log, timeout_s=180,
                      healthy=lambda response: response.read().strip() == b"ok", stop=stop_app)
        with chromium() as browser:
            page = browser.new_page()
            page.goto(f"{url}/Data", timeout=180_000)
            settle(page, "Folder or outputs file")
            nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
            assert [title for _, title, *_ in PAGES if title in nav] == [title for _, title, *_ in PAGES]
            assert page.locator("input[aria-label='Folder or outputs file']").input_value() \
                == str(data / "outputs.csv")
            assert "data=" in page.url  # the data set is named in the URL, as one chosen on the Data page
        assert process.poll() is None
    finally:
        stop_app(process)
    assert "starting the app from " + str(installed) in log.read_text()
