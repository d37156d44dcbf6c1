"""The figures the README, data/README.md and docs/*.md quote are what the data give (scripts/docs_figures.py).

The demo figures are always checked; those from ``../shared`` only when the data set is there (skipped cleanly
otherwise). A figure that differs from the data, a marker the script does not know and a known figure whose
marker is gone all fail.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from empathy.paths import DEMO_DIR, PROJECT_ROOT, SHIPPED_DEMO_DIR, shared_dataset

spec = importlib.util.spec_from_file_location("docs_figures", PROJECT_ROOT / "scripts" / "docs_figures.py")
figures = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = figures  # its dataclasses look their module up there
spec.loader.exec_module(figures)  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def sources():
    """The figures of the shipped demo (``data/``), which the docs quote."""
    return figures.Sources()


@pytest.fixture(scope="module")
def first_demo():
    """The figures computed on the first demo (``tests/demo_v1/data/``, the suite's demo), on which issue 27 found
    the claims wrong."""
    return figures.Sources(DEMO_DIR)


def _only(source: str) -> tuple:
    return tuple(f for f in figures.FIGURES if f.source == source)


def test_demo_figures_are_what_the_demo_gives(sources):
    result = figures.run(sources=sources, figures=_only(figures.DEMO))
    assert [str(p) for p in result.problems] == []
    assert len(result.checked) >= len(_only(figures.DEMO))


def test_shared_figures_are_what_the_data_give(sources):
    if shared_dataset(figures.KUMAR) is None:
        pytest.skip(f"shared/datasets/{figures.KUMAR} is absent")
    result = figures.run(sources=sources, figures=_only(figures.KUMAR))
    assert [str(p) for p in result.problems] == []


def test_issue_27_claims_are_corrected(first_demo):
    """The claims issue 27 found wrong, as the data give them now (distancing rules 10: under rules 9 they were
    2.39, 2.29, 2.19 against 2.24, 2.14, 2.00 and 9.21 against 1.48-2.33)."""
    assert figures._ld_eq4(first_demo) == ("has the highest LD of the 5 models in every task under Eq. 4 (counseling "
                                        "2.35, news 2.17, translation 2.19; the best other model 2.24, 2.07, 2.00)")
    assert figures._ld_reference(first_demo) == "pooled, 9.36 against 1.39-2.33"
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    data = (PROJECT_ROOT / "data" / "README.md").read_text(encoding="utf-8")
    assert "unremarkable LD" not in readme and "about 7.9" not in data


def test_a_changed_figure_is_found_and_rewritten(tmp_path, sources):
    chosen = tuple(f for f in figures.FIGURES if f.name in ("ld-reference", "rows-outputs"))
    for path in sorted({p for f in chosen for p in f.paths}):  # the README, data/README.md and the docs pages
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROJECT_ROOT / path, tmp_path / path)
    readme = tmp_path / "data" / "README.md"
    text = readme.read_text(encoding="utf-8")
    right = figures._ld_reference(sources)
    readme.write_text(text.replace(f"<!-- fig:ld-reference -->{right}<!-- /fig -->",
                                   "<!-- fig:ld-reference -->about 7.9 against 1.5-2.2<!-- /fig -->")
                      + "\n<!-- fig:no-such-figure -->1<!-- /fig -->\n", encoding="utf-8")
    result = figures.run(tmp_path, sources=sources, figures=chosen)
    kinds = sorted((p.path, p.name, p.kind) for p in result.problems)
    assert kinds == [("data/README.md", "ld-reference", "stale"), ("data/README.md", "no-such-figure", "unknown")]
    stale = next(p for p in result.problems if p.kind == "stale")
    assert (stale.found, stale.expected) == ("about 7.9 against 1.5-2.2", right)
    figures.run(tmp_path, write=True, sources=sources, figures=chosen)
    assert f"<!-- fig:ld-reference -->{right}<!-- /fig -->" in readme.read_text(encoding="utf-8")
    # a figure whose marker was deleted is reported, not silently dropped
    readme.write_text(readme.read_text(encoding="utf-8").replace("<!-- fig:rows-outputs -->", ""), encoding="utf-8")
    missing = [p for p in figures.run(tmp_path, sources=sources, figures=chosen).problems if p.kind == "missing"]
    assert [(p.path, p.name) for p in missing] == [("data/README.md", "rows-outputs")]


def test_every_marker_in_the_docs_is_a_known_figure():
    known = {f.name for f in figures.FIGURES}
    for path in [PROJECT_ROOT / "README.md", PROJECT_ROOT / "data" / "README.md",
                 *sorted((PROJECT_ROOT / "docs").rglob("*.md"))]:
        names = {m.group("name") for m in figures.MARKER.finditer(path.read_text(encoding="utf-8"))}
        assert names <= known, (path, names - known)
    assert all(Path(PROJECT_ROOT / p).is_file() for f in figures.FIGURES for p in f.paths)


def test_the_figures_describe_the_shipped_demo(sources):
    """The docs quote the demo the app ships (``data/``), never the suite's fixture, whatever
    ``$EMPATHY_DEMO_DIR`` says."""
    assert sources.demo_dir == SHIPPED_DEMO_DIR and DEMO_DIR != SHIPPED_DEMO_DIR
    assert figures._count("outputs.csv", len)(sources) == "436"
    assert figures._count("outputs.csv", len)(figures.Sources(DEMO_DIR)) == "121"


def test_the_demo_readme_is_written_with_its_figures(tmp_path, sources):
    """``fill`` writes every figure data/README.md quotes as the check computes it, and refuses a figure the file
    does not quote."""
    names = [f.name for f in figures.FIGURES if figures.DATA_README in f.paths]
    blank = "\n".join(f"<!-- fig:{name} --><!-- /fig -->" for name in names)
    filled = figures.fill(blank, sources)
    assert "<!-- fig:rows-outputs -->436<!-- /fig -->" in filled
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "README.md").write_text(filled, encoding="utf-8")
    chosen = tuple(f for f in figures.FIGURES if f.name in names)
    for path in sorted({p for f in chosen for p in f.paths} - {figures.DATA_README}):  # ld-reference: the README too
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROJECT_ROOT / path, tmp_path / path)
    result = figures.run(tmp_path, sources=sources, figures=chosen)
    assert result.problems == []
    assert sorted(c for c in result.checked if c.startswith("data/")) == sorted(f"data/README.md:{n}" for n in names)
    with pytest.raises(ValueError, match="sa-term-min"):
        figures.fill("<!-- fig:sa-term-min --><!-- /fig -->", sources)
