"""No metric is named outside the registry: every surface reads ``empathy.metrics.METRIC_SPECS`` (issue 22).

The check parses the package, the app's modules and pages and ``app.py`` and fails on any string constant exactly
equal to a registered metric's name (``"SA"``, ``"EGM"``, ...), docstrings aside. Text that mentions a metric
inside a longer sentence (help, captions) is not a name the code branches on and is allowed; so are data files,
docs and tests. In ``empathy/metrics.py``, the registry's home, only the entries themselves may name their metric:
the first argument of ``MetricSpec(...)`` and of ``aggregate(...)`` (the equation's own result).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from empathy import metrics

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("empathy", "empathy_app", "app_pages")
#: In the registry's module, calls whose first argument is the name of the metric they define.
DEFINING_CALLS = frozenset({"MetricSpec", "aggregate"})


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _defining(tree: ast.AST) -> set[int]:
    """The name arguments of the registry's defining calls (``MetricSpec("SA", ...)``, ``aggregate("SA", ...)``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in DEFINING_CALLS:
                found.add(id(node.args[0]))
    return found


def metric_literals(source: str, names: frozenset[str], *, registry: bool = False) -> list[tuple[int, str]]:
    """``(line, name)`` of every string constant in ``source`` equal to one of ``names``, docstrings excluded
    (``registry``: also the name arguments of the registry's defining calls)."""
    tree = ast.parse(source)
    allowed = _docstrings(tree) | (_defining(tree) if registry else set())
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
                  and id(node) not in allowed)


def _scanned_files() -> list[Path]:
    files = [path for folder in SCANNED for path in sorted((ROOT / folder).rglob("*.py"))]
    return [*files, ROOT / "app.py"]


NAMES = frozenset({"SA", "EGM", "CA", "LD"})


@pytest.mark.parametrize(("source", "expected"), [
    ('x = table[table["metric"] == "CA"]\n', [(1, "CA")]),                       # a branch on a name
    ('for m in ("SA", "EGM"):\n    pass\n', [(1, "EGM"), (1, "SA")]),          # a hard-coded list
    ('def f():\n    """SA and CA."""\n    return "LD"\n', [(3, "LD")]),          # docstring allowed, return not
    ('"""Module docstring: SA."""\nhelp = "the SA of a model"\n', []),            # text mentioning a metric
    ('d = {"CA": 1}\nkey = f"chart_{d}"\n', [(1, "CA")]),                         # a dictionary key
    ('column = "ca"\n', []),                                                       # a dimension, not a metric
])
def test_the_checker_finds_planted_literals(source, expected):
    assert metric_literals(source, NAMES) == expected


def test_the_registry_module_may_name_only_its_entries():
    source = 'S = MetricSpec("SA", ("e_ref",), f)\nr = aggregate("CA", t, s)\nx = "LD"\n'
    assert metric_literals(source, NAMES, registry=True) == [(3, "LD")]
    assert metric_literals(source, NAMES) == [(1, "SA"), (2, "CA"), (3, "LD")]


def test_no_metric_name_literal_outside_the_registry():
    names = frozenset(metrics.METRIC_SPECS)
    assert names >= NAMES  # the scan covers at least the paper's four
    found = []
    for path in _scanned_files():
        registry = path == ROOT / "empathy" / "metrics.py"
        for line, name in metric_literals(path.read_text(encoding="utf-8"), names, registry=registry):
            found.append(f"{path.relative_to(ROOT)}:{line}: {name!r}")
    assert not found, "metric names written out instead of read from empathy.metrics.METRIC_SPECS:\n" + "\n".join(
        found)


def test_the_scan_reads_every_module():
    files = _scanned_files()
    assert ROOT / "app_pages" / "2_Overview.py" in files and ROOT / "empathy" / "cli" / "stability.py" in files
    assert ROOT / "empathy_app" / "keyqueue.py" in files and (ROOT / "app.py").exists()
