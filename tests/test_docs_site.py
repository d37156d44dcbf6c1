"""The documentation site (mkdocs.yml): it builds strictly, offline, holds every page, and its commands run.

The site is built once into a temporary folder with ``mkdocs build --strict`` (any warning fails: a page missing
from the navigation, a broken link, an API object mkdocstrings cannot document). The command-line reference is
checked against the real parser: every command and sub-command has its section. The ``bash`` blocks of the
tutorials and of the runnable how-to guides are run, page by page in one shell, in a fresh folder; ``shell``
blocks are shown only (``empathy app``, which serves until stopped and is tested by tests/test_packaging.py, and
commands that need a network or a server). Skipped cleanly when MkDocs, Material or mkdocstrings is not installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("material")
pytest.importorskip("mkdocstrings_handlers.python")
yaml = pytest.importorskip("yaml")

from empathy.cli import build_parser  # noqa: E402
from empathy.cli.reference import cli_markdown, subcommands  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: Pages whose ``bash`` blocks run as written (the others need ../shared, a server or a cluster).
RUN_PAGES = ("tutorial/demo-mechanisms.md", "tutorial/relabel-ca.md", "tutorial/audit.md",
             "how-to/load-data.md", "how-to/llm-judge.md")
#: The endpoint the LLM-judge guide configures; the test points it at a local OpenAI-compatible server.
GUIDE_ENDPOINT = "http://127.0.0.1:8000/v1"
BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)


def _nav_pages(nav: list) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        for value in (entry.values() if isinstance(entry, dict) else [entry]):
            pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def _config() -> dict:
    # mkdocs.yml holds no !!python tags: the plain loader reads it
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def _page_html(site: Path, page: str) -> Path:
    stem = page[: -len(".md")]
    return site / "index.html" if stem == "index" else site / stem / "index.html"


def _commands(parser, path: str = "") -> list[tuple[str, object]]:
    found = []
    for name, child in subcommands(parser):
        full = f"{path} {name}".strip()
        found += [(full, child), *_commands(child, full)]
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built strictly from the checkout into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def test_every_page_of_the_navigation_is_built_and_no_markdown_file_is_left_out(site):
    pages = _nav_pages(_config()["nav"])
    assert len(pages) == len(set(pages))  # a page listed twice would be two entries of one text
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(pages) == on_disk
    assert not [page for page in pages if not _page_html(site, page).is_file()]
    for key in ("index.md", "tutorial/demo-mechanisms.md", "tutorial/relabel-ca.md", "tutorial/audit.md",
                "how-to/load-data.md", "how-to/llm-judge.md", "how-to/serve-a-team.md", "reference/cli.md",
                "reference/api.md", "reference/contracts.md", "explanation/metrics.md", "statistics.md",
                "detectors.md", "judges.md", "benchmarks.md", "development.md"):
        assert key in pages


def test_the_site_fetches_nothing_at_page_load(site):
    # no web fonts, scripts or styles from another host: the pages work offline
    assert _config()["theme"]["font"] is False
    external = re.compile(r"<(?:script|link|img)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", re.I)
    offenders = [str(p.relative_to(site)) for p in site.rglob("*.html") if external.search(p.read_text("utf-8"))]
    assert offenders == []
    assert not [p for p in site.rglob("*.html") if "fonts.googleapis" in p.read_text("utf-8")]


def test_the_cli_reference_has_every_command_of_the_real_parser(site):
    html = _page_html(site, "reference/cli.md").read_text(encoding="utf-8")
    commands = _commands(build_parser())
    names = [name for name, _ in commands]
    assert {"metrics", "agreement", "judge", "audit draw", "audit estimate", "store export", "app"} <= set(names)
    for name, parser in commands:
        anchor = "empathy-" + name.replace(" ", "-")
        assert f'id="{anchor}"' in html, name
        usage = parser.format_usage().split()[1:4]  # "usage: empathy audit draw ..." wraps differently per width
        assert " ".join(usage) in re.sub(r"\s+", " ", html), name
    # every option of a command shows up, e.g. the bootstrap settings of metrics
    metrics = dict(commands)["metrics"]
    for action in metrics._actions:
        for option in action.option_strings:
            assert option in html


def test_the_cli_reference_is_the_parsers_help_in_order():
    text = cli_markdown(build_parser())
    headings = re.findall(r"^#+ `(empathy[^`]*)`$", text, re.M)
    assert headings == ["empathy", *(f"empathy {name}" for name, _ in _commands(build_parser()))]
    assert text.count("```text\n") == len(headings)
    assert "usage: empathy audit draw" in text


def test_the_api_reference_documents_the_main_modules(site):
    html = _page_html(site, "reference/api.md").read_text(encoding="utf-8")
    for name in ("empathy.io.load_outputs", "empathy.io.load_ratings", "empathy.metrics.sentiment_attenuation",
                 "empathy.metrics.granularity_mismatch", "empathy.metrics.conflict_avoidance",
                 "empathy.metrics.linguistic_distancing", "empathy.judges.run_judge", "empathy.items.item_table"):
        assert f'id="{name}"' in html, name
    # the docstrings' text is there, not only the names
    assert "Eq. 1" in html and "Parameters" in html
    # the docstrings' Sphinx roles render as the bare name (scripts/mkdocs_hooks.py), not ":func:`name`"
    assert "<code>item_table</code>" in html and not re.search(r":(?:func|class|data|mod|meth|attr):<code>", html)


def _run_page(page: str, folder: Path, replace: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    text = (DOCS / page).read_text(encoding="utf-8")
    for old, new in (replace or {}).items():
        text = text.replace(old, new)
    blocks = BASH_BLOCK.findall(text)
    assert blocks, page
    shims = folder / "bin"
    shims.mkdir()
    # the commands as a reader types them: `empathy` and `python` are this checkout's
    for name, command in (("empathy", f'"{sys.executable}" -m empathy'), ("python", f'"{sys.executable}"')):
        (shims / name).write_text(f'#!/bin/sh\nexec {command} "$@"\n')
        (shims / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("EMPATHY_STORE", "EMPATHY_DEMO_DIR", "EMPATHY_IDENTITY")}
    env.update(PATH=f"{shims}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(ROOT),
               EMPATHY_CACHE_DIR=str(folder / "cache"), EMPATHY_SETTINGS=str(folder / "settings.json"),
               HOME=str(folder))
    work = folder / "work"
    work.mkdir()
    script = "set -euo pipefail\n" + "\n".join(blocks)
    return subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=600)


def test_only_the_runnable_pages_hold_bash_blocks():
    # a ``bash`` block promises a command that runs as written; elsewhere commands with placeholders, servers or
    # ../shared are ``shell`` blocks
    holding = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if BASH_BLOCK.search(p.read_text("utf-8")))
    assert holding == sorted(RUN_PAGES)


@pytest.mark.parametrize("page", [p for p in RUN_PAGES if p != "how-to/llm-judge.md"])
def test_the_commands_of_a_page_run_as_written(page, tmp_path):
    done = _run_page(page, tmp_path)
    assert done.returncode == 0, f"{page}: {done.stderr[-3000:]}"
    if page == "tutorial/audit.md":
        # the figures the tutorial quotes are what its commands print
        assert "19 decisions written" in done.stdout
        fennel = next(line for line in done.stdout.splitlines() if line.split()[:2] == ["all", "fennel"])
        assert "0.662" in fennel.split() and "0.590" in fennel.split()
        text = (DOCS / page).read_text(encoding="utf-8")
        assert "`judge_value` 0.662" in text and "`ppi_value` 0.590" in text
    if page == "how-to/load-data.md":
        assert "my-run/bad_ratings.csv, row 2, column 'value': 'ca' must be 0 or 1, got '0.5'" in done.stderr


def test_the_llm_judge_guide_runs_against_an_openai_compatible_server(tmp_path):
    from fake_openai_server import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        done = _run_page("how-to/llm-judge.md", tmp_path, {GUIDE_ENDPOINT: server.base_url})
        calls = server.calls
    assert done.returncode == 0, done.stderr[-3000:]
    assert calls > 0
    # the second run of the same command is answered from the cache
    assert re.search(r"requests: 0 calls, \d+ cache hits", done.stderr)
    assert (tmp_path / "work" / "ratings_qwen.csv").is_file()
