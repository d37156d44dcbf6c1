"""The layer rule of the package and the app, checked on their import graph (docs/development.md, "Layers and
imports").

Every module of ``empathy/``, ``empathy_app/``, ``app_pages/`` and ``app.py`` has a layer from :data:`LAYER_OF`; a
module may import only modules of its own layer or a lower one (:data:`LAYERS`, lowest first), and no import cycle
is allowed at all. The graph is read
from the source (:func:`import_graph`): every ``import`` and ``from ... import`` anywhere in a module — at the
top, inside functions, inside ``if TYPE_CHECKING:`` blocks (they count like any other: a type a module names is
a dependency of its layer) — plus, in a module that imports :mod:`importlib`, every string constant that names
a scanned module (``"empathy.datasets.kumar2025"`` or ``"empathy.datasets.kumar2025:import_kumar2025"``), since
that is how a registry loads a module by name. Importing a submodule also runs its package's ``__init__``; that
implicit step is not an edge (a package's ``__init__`` importing its own submodules is the normal pattern).

The app's layers come after the library's: the keys of the session (and the escaping and progress helpers) <-
loading the data set <- its overrides <- the computations <- the views and the sidebar <- the frame and the pages.
To extend the rule to another package: add its modules to :data:`LAYER_OF` with a new layer in :data:`LAYERS` and
its name to :data:`PACKAGES` (a single-file module such as ``app.py`` is named without ``.py``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The library: it never imports the app (:data:`FORBIDDEN`).
LIBRARY: tuple[str, ...] = ("empathy",)
#: The Streamlit app: its package, its pages and its entry file (the frame).
APP: tuple[str, ...] = ("empathy_app", "app_pages", "app")
#: The packages (and single-file modules) whose modules are scanned and must each have a layer.
PACKAGES: tuple[str, ...] = (*LIBRARY, *APP)
#: The layers, lowest first: a module may import its own layer and those before it.
LAYERS: tuple[str, ...] = ("core", "data", "labels", "analysis", "interfaces",
                           "app_base", "app_loading", "app_overrides", "app_compute", "app_views", "app_frame")
#: The layer of every module: a module name, or ``"package.*"`` for a package and all its submodules (the most
#: specific entry wins: an exact name over a pattern, a longer pattern over a shorter one).
LAYER_OF: dict[str, str] = {
    # core: names, tables and helpers every layer uses; no data model
    "empathy": "core",
    "empathy.vocabulary": "core",
    "empathy.distributions": "core",
    "empathy.codes": "core",
    "empathy.blas": "core",
    "empathy.identifiers": "core",
    "empathy.raw_files": "core",
    "empathy.metrics": "core",
    "empathy.escaping": "core",
    "empathy.files": "core",
    "empathy.paths": "core",
    "empathy.progress": "core",
    "empathy.signature": "core",
    "empathy.sqlite_wal": "core",
    "empathy.cachefiles": "core",
    "empathy.settings": "core",
    "empathy.render": "core",
    "empathy.scheduler": "core",
    # data: reading outputs and ratings, and producing them (detectors, judges, importers, the cluster)
    "empathy.io": "data",
    "empathy.dataset_cache": "data",
    "empathy.distancing.*": "data",
    "empathy.judges.*": "data",
    "empathy.datasets.*": "data",
    "empathy.cluster": "data",
    "empathy.standard": "data",
    "empathy.importers.*": "data",  # Inspect, lm-eval and HF datasets onto the outputs table; column mapping
    # labels: human decisions, their store and what they mean (and the old paths, re-exports only)
    "empathy.labels.*": "labels",
    "empathy.store": "labels",
    "empathy.store_postgres": "labels",
    "empathy.overrides": "labels",
    "empathy.audit": "labels",  # a random audit's design: what the store keeps and the estimators read
    # analysis: statistics and reports over ratings and labels
    "empathy.evaluate": "analysis",
    "empathy.agreement": "analysis",
    "empathy.review": "analysis",
    "empathy.items": "analysis",
    "empathy.fragility": "analysis",
    "empathy.stability": "analysis",
    "empathy.slices": "analysis",
    "empathy.slice_tests": "analysis",
    "empathy.calibration": "analysis",
    "empathy.panels": "analysis",
    "empathy.exhibits": "analysis",
    "empathy.exports": "analysis",
    "empathy.importers.hf_export": "analysis",  # the relabeled set as a HF dataset, beside the other exports
    "empathy.mechanisms": "analysis",
    "empathy.inference": "analysis",
    "empathy.small_sample": "analysis",
    "empathy.label_budget": "analysis",
    "empathy.ppi_rows": "analysis",
    "empathy.bootstrap": "analysis",
    # the judge report: Alt-Test, length dependence, verdict, and the judge's repeatability, order effect and probes
    "empathy.judge_report.*": "analysis",
    # interfaces: the command line and the `python -m` entry points
    "empathy.cli.*": "interfaces",
    "empathy.__main__": "interfaces",
    "empathy.distancing.__main__": "interfaces",
    "empathy.launch": "interfaces",  # starts the app from an installed package (`empathy app`)
    # app_base: the session's keys (imports nothing), the escaping and progress helpers
    "empathy_app": "app_base",
    "empathy_app.session_keys": "app_base",
    "empathy_app.markup": "app_base",
    "empathy_app.progress": "app_base",
    "empathy_app.identity": "app_base",  # who decides and what they may: loading opens the store with the roles
    # the data set of the session, its human overrides, the computations on both
    "empathy_app.loading": "app_loading",
    "empathy_app.overrides": "app_overrides",
    "empathy_app.compute": "app_compute",
    # what the pages draw with, and the sidebar with the data set's memory
    "empathy_app.*": "app_views",
    # the frame (app.py) and the pages it runs
    "app": "app_frame",
    "app_pages.*": "app_frame",
}
#: Top-level packages the scanned ones must never import (the app, its pages, tests, benchmarks, harnesses).
FORBIDDEN: tuple[str, ...] = ("streamlit", "empathy_app", "app_pages", "tests", "bench", "validation", "scripts")


# ------------------------------------------------------------------------------------------ the graph

def module_files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``: dotted name -> file (a package is its ``__init__.py``; a name
    without a folder but with a ``name.py`` beside the packages is that single module)."""
    found: dict[str, Path] = {}
    for package in packages:
        if not (root / package).is_dir() and (root / f"{package}.py").is_file():
            found[package] = root / f"{package}.py"
            continue
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _deepest(name: str, known: Mapping[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a scanned module (``empathy.io.DataError`` -> ``empathy.io``)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _imported_names(tree: ast.Module, module: str, is_package: bool) -> list[str]:
    """Every dotted name the module's import statements name, anywhere in it (``from X import Y`` gives ``X.Y``)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package, one level up per extra dot
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            names.extend(f"{origin}.{alias.name}" for alias in node.names)
    return names


_MODULE_STRING = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?")


def _loaded_by_name(tree: ast.Module, names: list[str], known: Mapping[str, Path]) -> set[str]:
    """In a module that imports :mod:`importlib`: the scanned modules its string constants name exactly."""
    if "importlib" not in {name.split(".")[0] for name in names}:
        return set()
    strings = (node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str))
    return {text.partition(":")[0] for text in strings
            if _MODULE_STRING.fullmatch(text) and text.partition(":")[0] in known}


def import_graph(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, set[str]]:
    """Module -> the scanned modules it imports (itself left out), from the source of every module."""
    files = module_files(root, packages)
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names = _imported_names(tree, module, path.name == "__init__.py")
        targets = {_deepest(name, files) for name in names} | _loaded_by_name(tree, names, files)
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def foreign_imports(root: Path = ROOT, packages: Iterable[str] = LIBRARY,
                    forbidden: Iterable[str] = FORBIDDEN) -> list[str]:
    """``"module -> name"`` for every import of a forbidden top-level package."""
    banned = set(forbidden)
    found = []
    for module, path in module_files(root, packages).items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name in _imported_names(tree, module, path.name == "__init__.py"):
            if name.split(".")[0] in banned:
                found.append(f"{module} -> {name}")
    return sorted(set(found))


# ------------------------------------------------------------------------------------------ the checks

def layer_of(module: str, table: Mapping[str, str] = LAYER_OF) -> str | None:
    """The module's layer by :data:`LAYER_OF`'s most specific entry, ``None`` when no entry covers it."""
    if module in table:
        return table[module]
    patterns = [key[:-2] for key in table if key.endswith(".*")]
    covering = [p for p in patterns if module == p or module.startswith(p + ".")]
    return table[max(covering, key=len) + ".*"] if covering else None


def unassigned(graph: Mapping[str, set[str]], table: Mapping[str, str] = LAYER_OF) -> list[str]:
    """Modules without a layer."""
    return sorted(module for module in graph if layer_of(module, table) is None)


def stale_entries(graph: Mapping[str, set[str]], table: Mapping[str, str] = LAYER_OF) -> list[str]:
    """Table entries that cover no module (a module was renamed or removed)."""
    return sorted(key for key in table
                  if not any(m == key or (key.endswith(".*") and (m == key[:-2] or m.startswith(key[:-1])))
                             for m in graph))


def layer_violations(graph: Mapping[str, set[str]], table: Mapping[str, str] = LAYER_OF,
                     layers: tuple[str, ...] = LAYERS) -> list[str]:
    """``"a (layer) imports b (higher layer)"`` for every import of a higher layer."""
    rank = {name: index for index, name in enumerate(layers)}
    found = []
    for module, targets in sorted(graph.items()):
        mine = layer_of(module, table)
        for target in sorted(targets):
            theirs = layer_of(target, table)
            if mine is not None and theirs is not None and rank[theirs] > rank[mine]:
                found.append(f"{module} ({mine}) imports {target} ({theirs})")
    return found


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


# ------------------------------------------------------------------------------------------ the package

@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_every_module_has_a_layer_and_every_entry_a_module(graph):
    assert not unassigned(graph), f"give these modules a layer in LAYER_OF (tests/test_layers.py): {unassigned(graph)}"
    assert not stale_entries(graph), f"LAYER_OF names modules that do not exist: {stale_entries(graph)}"


def test_no_module_imports_a_higher_layer(graph):
    assert layer_violations(graph) == []


def test_no_import_cycle_at_all(graph):
    assert cycles(graph) == []


def test_the_package_never_imports_the_app_tests_or_benchmarks():
    assert foreign_imports() == []


def test_the_labels_layer_reaches_only_core_and_data_outside_itself(graph):
    # stated in empathy/labels/__init__.py: the store, rules and ledger need no statistics
    outside = {target for module, targets in graph.items() if layer_of(module) == "labels" for target in targets
               if layer_of(target) != "labels"}
    assert outside == {"empathy.cachefiles", "empathy.escaping", "empathy.identifiers", "empathy.io", "empathy.metrics",
                       "empathy.raw_files", "empathy.sqlite_wal", "empathy.vocabulary"}


def test_the_session_keys_module_imports_nothing(graph):
    # the lowest layer of the app: a page, a view and a test can all name the keys without importing Streamlit
    tree = ast.parse((ROOT / "empathy_app" / "session_keys.py").read_text(encoding="utf-8"))
    imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert [getattr(node, "module", None) for node in imports] == ["__future__"]
    assert graph["empathy_app.session_keys"] == set()


def test_the_app_is_scanned_module_by_module(graph):
    app = {module for module in graph if module.split(".")[0] in APP}
    assert {"app", "app_pages.4_Relabel", "empathy_app.loading", "empathy_app.sidebar"} <= app
    assert graph["app"] >= {"empathy_app.loading", "empathy_app.sidebar"}  # the frame loads and draws the sidebar
    # no app module imports a page or the frame (the top layer)
    top = {module for module in app if layer_of(module) == "app_frame"}
    assert not [module for module in app - top if graph[module] & top]


def test_the_compatibility_modules_only_re_export():
    for name in ("store", "store_postgres", "overrides"):
        tree = ast.parse((ROOT / "empathy" / f"{name}.py").read_text(encoding="utf-8"))
        body = [node for node in tree.body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
        kinds = {type(node).__name__ for node in body}
        assert kinds <= {"ImportFrom", "Assign"}, (name, kinds)
        sources = {node.module for node in body if isinstance(node, ast.ImportFrom)} - {"__future__"}
        assert all(source.startswith("empathy.labels.") for source in sources), (name, sources)
        assigned = [t.id for node in body if isinstance(node, ast.Assign) for t in node.targets]
        assert assigned == ["__all__"], (name, assigned)
        assert "compatibility re-export" in (ast.get_docstring(tree) or "").lower(), name


def test_no_first_party_code_imports_the_compatibility_modules():
    old = {"empathy.store", "empathy.store_postgres", "empathy.overrides"}
    users = []
    for folder in ("empathy", "empathy_app", "app_pages", "scripts", "bench", "validation", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.parent == ROOT / "empathy" and path.stem in {"store", "store_postgres", "overrides"}:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                named = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or "", *(f"{node.module}.{a.name}" for a in node.names)]
                         if isinstance(node, ast.ImportFrom) else [])  # from empathy import store
                users.extend(f"{path.relative_to(ROOT)}: {n}" for n in named if n in old)
    allowed = {"bench/bench_recompute.py: empathy.overrides", "bench/bench_recompute.py: empathy.store"}
    assert set(users) <= allowed, sorted(set(users) - allowed)


# ------------------------------------------------------------------------------------------ the checker itself

SYNTHETIC = {"a.low": set(), "a.mid": {"a.low"}, "a.top": {"a.mid", "a.low"}}
SYNTHETIC_LAYERS = ("bottom", "middle", "upper")
SYNTHETIC_TABLE = {"a.low": "bottom", "a.mid": "middle", "a.top": "upper"}


def test_the_checker_accepts_a_layered_graph_and_names_each_violation():
    assert layer_violations(SYNTHETIC, SYNTHETIC_TABLE, SYNTHETIC_LAYERS) == []
    upward = {**SYNTHETIC, "a.low": {"a.top"}}
    assert layer_violations(upward, SYNTHETIC_TABLE, SYNTHETIC_LAYERS) == ["a.low (bottom) imports a.top (upper)"]
    assert unassigned({**SYNTHETIC, "a.new": set()}, SYNTHETIC_TABLE) == ["a.new"]
    assert stale_entries({"a.low": set()}, {"a.low": "bottom", "a.gone": "bottom", "b.*": "upper"}) == [
        "a.gone", "b.*"]


def test_the_checker_finds_every_cycle_and_only_cycles():
    assert cycles(SYNTHETIC) == []
    assert cycles({"x": {"y"}, "y": {"z"}, "z": {"x"}, "w": {"x"}, "p": {"q"}, "q": {"p"}}) == [
        ["p", "q"], ["x", "y", "z"]]
    assert cycles({"x": {"x"}}) == []  # import_graph never keeps a self-edge


def test_the_most_specific_table_entry_wins():
    table = {"p.*": "data", "p.cli.*": "interfaces", "p.cli.common": "core"}
    assert [layer_of(m, table) for m in ("p", "p.io", "p.cli", "p.cli.run", "p.cli.common", "q")] == [
        "data", "data", "interfaces", "interfaces", "core", None]


def test_the_scan_sees_imports_in_functions_type_checking_blocks_relative_and_by_name(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("VALUE = 1\n")
    (package / "sub" / "__init__.py").write_text("from . import leaf\n")
    (package / "sub" / "leaf.py").write_text("from ..low import VALUE\n")
    (package / "typed.py").write_text("from typing import TYPE_CHECKING\n"
                                      "if TYPE_CHECKING:\n    from pkg.sub import leaf\n")
    (package / "lazy.py").write_text("def f():\n    import pkg.low.VALUE\n    from pkg import typed\n")
    (package / "registry.py").write_text('import importlib\nLOADERS = {"x": "pkg.sub.leaf:run", "y": "not.pkg"}\n')
    graph = import_graph(tmp_path, ("pkg",))
    assert graph == {"pkg": set(), "pkg.low": set(), "pkg.sub": {"pkg.sub.leaf"}, "pkg.sub.leaf": {"pkg.low"},
                     "pkg.typed": {"pkg.sub.leaf"}, "pkg.lazy": {"pkg.low", "pkg.typed"},
                     "pkg.registry": {"pkg.sub.leaf"}}
    # a cycle through a function-level import is a cycle: low -> lazy -> typed -> sub.leaf -> low
    (package / "low.py").write_text("def g():\n    from pkg import lazy\n")
    assert cycles(import_graph(tmp_path, ("pkg",))) == [["pkg.lazy", "pkg.low", "pkg.sub.leaf", "pkg.typed"]]
    (package / "low.py").write_text("import streamlit\n")
    assert foreign_imports(tmp_path, ("pkg",)) == ["pkg.low -> streamlit"]
