"""The app names its session keys once (``empathy_app/session_keys.py``) and namespaces its widget keys per page.

Read from the source (AST), over ``app.py``, ``app_pages/`` and ``empathy_app/``:

* :func:`session_key_problems`: every key of ``st.session_state`` — a subscript (read, write, ``del``),
  ``.get``/``.setdefault``/``.pop``/``__setitem__``/..., ``key in st.session_state``, or an attribute-style
  ``st.session_state.name`` — must come from the keys module: ``session_keys.NAME``, a name imported from it, or a
  call of one of its functions (``session_keys.kept(key)``). A parameter or local variable passes (the key comes
  from the caller, checked there) unless the file binds that name to a string literal somewhere; a raw string,
  an f-string, a module-level name of the file or another module's constant fails.
* :func:`widget_key_problems`: every ``key=`` of a page that resolves to a string (a literal, an f-string's or a
  sum's literal start, ``output_key("prefix", ...)``'s first argument, a constant of the keys module) starts with
  the page's prefix (:data:`empathy_app.session_keys.PAGE_PREFIXES`), or with ``_w_`` and the prefix (a widget
  mirrored into a state key). Keys computed at run time are not resolved.
* :func:`literal_constant_keys`: a page's literal ``key=`` that is the value of a keys-module constant names a key
  the app reads or writes elsewhere: it must be written as the constant (two meanings under one key made
  Exhibits' "Make a PNG" crash: its bytes were kept under the download button's key).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

from empathy_app import session_keys

ROOT = Path(__file__).resolve().parent.parent
KEYS_MODULE = "empathy_app.session_keys"
#: ``st.session_state``'s own methods: any other attribute is a key read or written as an attribute.
METHODS = {"get", "setdefault", "pop", "keys", "items", "values", "clear", "update", "to_dict", "__getitem__",
           "__setitem__", "__delitem__", "__contains__"}
#: The methods whose first argument is a key.
KEYED_METHODS = {"get", "setdefault", "pop", "__getitem__", "__setitem__", "__delitem__", "__contains__"}


def scanned_files(root: Path = ROOT) -> list[Path]:
    """The app's files: ``app.py``, the pages and the ``empathy_app`` package, the keys module aside."""
    files = [root / "app.py", *sorted((root / "app_pages").glob("*.py")), *sorted((root / "empathy_app").rglob("*.py"))]
    return [f for f in files if f != root / "empathy_app" / "session_keys.py"]


# ------------------------------------------------------------------------------------------ the checkers

def _keys_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names the file binds to the keys module itself, and the names it imports from it."""
    aliases: set[str] = set()
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update(a.asname for a in node.names if a.name == KEYS_MODULE and a.asname)
        elif isinstance(node, ast.ImportFrom) and node.module == "empathy_app":
            aliases.update(a.asname or a.name for a in node.names if a.name == "session_keys")
        elif isinstance(node, ast.ImportFrom) and node.module == KEYS_MODULE:
            imported.update(a.asname or a.name for a in node.names)
    return aliases, imported


def _module_level_names(tree: ast.Module) -> set[str]:
    """Names bound at the top of the module (assignments, loops, functions, classes, imports)."""
    names: set[str] = set()
    for node in tree.body:
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            targets = [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        for target in targets:
            names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _is_text(node: ast.AST) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)) or isinstance(node, ast.JoinedStr)


def _literal_bound_names(tree: ast.Module) -> set[str]:
    """Names the file binds to a string literal anywhere (``k = "x"``, ``for k in ("a", "b")``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_text(node.value):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and node.value is not None and _is_text(node.value):
            names.update([node.target.id] if isinstance(node.target, ast.Name) else [])
        elif (isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.iter, (ast.Tuple, ast.List, ast.Set))
              and any(_is_text(e) for e in node.iter.elts) and isinstance(node.target, ast.Name)):
            names.add(node.target.id)
    return names


def _is_session_state(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "session_state") or (
        isinstance(node, ast.Name) and node.id == "session_state")


def session_key_problems(source: str, filename: str = "<source>") -> list[str]:
    """``"file:line: key"`` for every session-state key of ``source`` that does not come from the keys module."""
    tree = ast.parse(source, filename=filename)
    aliases, imported = _keys_names(tree)
    module_level = _module_level_names(tree) - imported
    literal = _literal_bound_names(tree)

    def from_keys(key: ast.AST) -> bool:
        if isinstance(key, ast.Call):
            return from_keys(key.func)
        if isinstance(key, ast.Attribute):
            return isinstance(key.value, ast.Name) and key.value.id in aliases
        if isinstance(key, ast.Name):
            return key.id in imported or (key.id not in module_level and key.id not in literal)
        return False

    problems: list[tuple[int, str]] = []

    def check(key: ast.AST, line: int) -> None:
        if not from_keys(key):
            problems.append((line, ast.unparse(key)))

    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_session_state(node.value):
            check(node.slice, node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_session_state(
                node.func.value) and node.func.attr in KEYED_METHODS and node.args:
            check(node.args[0], node.lineno)
        elif isinstance(node, ast.Attribute) and _is_session_state(node.value) and node.attr not in METHODS:
            problems.append((node.lineno, f"session_state.{node.attr}"))
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and any(
                _is_session_state(c) for c in node.comparators):
            check(node.left, node.lineno)
    return [f"{filename}:{line}: {text}" for line, text in sorted(problems)]


def _resolve(node: ast.AST, aliases: set[str], imported: set[str], constants: Mapping[str, object]) -> str | None:
    """The string a widget key starts with, when the source says it (else ``None``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        first = node.values[0] if node.values else None
        return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _resolve(node.left, aliases, imported, constants)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
        value = constants.get(node.attr)
        return value if isinstance(value, str) else None
    if isinstance(node, ast.Name) and node.id in imported:
        value = constants.get(node.id)
        return value if isinstance(value, str) else None
    if isinstance(node, ast.Call) and node.args:
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name == "output_key":
            return _resolve(node.args[0], aliases, imported, constants)
    return None


def widget_key_problems(source: str, prefix: str, filename: str = "<page>",
                        constants: Mapping[str, object] | None = None) -> list[str]:
    """``"file:line: key"`` for every ``key=`` of a page that starts with neither ``prefix`` nor ``_w_`` + prefix."""
    tree = ast.parse(source, filename=filename)
    aliases, imported = _keys_names(tree)
    constants = vars(session_keys) if constants is None else constants
    problems = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg != "key":
                continue
            start = _resolve(keyword.value, aliases, imported, constants)
            if start is not None and not start.startswith((prefix, f"_w_{prefix}")):
                problems.append(f"{filename}:{node.lineno}: {start!r}")
    return problems


def literal_constant_keys(source: str, filename: str = "<page>",
                          constants: Mapping[str, object] | None = None) -> list[str]:
    """``"file:line: key"`` for every literal ``key=`` whose text is the value of a keys-module constant."""
    constants = vars(session_keys) if constants is None else constants
    values = {v for name, v in constants.items() if name.isupper() and isinstance(v, str)}
    return [f"{filename}:{node.lineno}: {keyword.value.value!r}" for node in ast.walk(ast.parse(source, filename))
            if isinstance(node, ast.Call) for keyword in node.keywords
            if keyword.arg == "key" and isinstance(keyword.value, ast.Constant) and keyword.value.value in values]


# ------------------------------------------------------------------------------------------ the app

def test_every_session_key_comes_from_the_keys_module():
    problems = [p for path in scanned_files()
                for p in session_key_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert problems == [], "use a constant of empathy_app/session_keys.py for these keys:\n" + "\n".join(problems)


def test_the_scan_covers_the_frame_every_page_and_the_package():
    names = {str(p.relative_to(ROOT)) for p in scanned_files()}
    assert {"app.py", "app_pages/4_Relabel.py", "empathy_app/sidebar.py", "empathy_app/loading.py"} <= names
    assert "empathy_app/session_keys.py" not in names
    # the scan finds the session's keys where the app uses them (a checker that sees nothing passes anything)
    used = sum(path.read_text(encoding="utf-8").count("session_state") for path in scanned_files())
    assert used > 100


def test_every_page_has_a_prefix_and_its_widget_keys_carry_it():
    pages = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "app_pages").glob("*.py"))
    assert sorted(session_keys.PAGE_PREFIXES) == pages, "add the page's widget-key prefix to PAGE_PREFIXES"
    prefixes = list(session_keys.PAGE_PREFIXES.values())
    assert not [(a, b) for a in prefixes for b in prefixes if a != b and b.startswith(a)]  # no view in another's
    problems = [p for page, prefix in session_keys.PAGE_PREFIXES.items()
                for p in widget_key_problems((ROOT / page).read_text(encoding="utf-8"), prefix, page)]
    assert problems == [], "namespace these widget keys with the page's prefix:\n" + "\n".join(problems)
    shadowed = [p for page in session_keys.PAGE_PREFIXES
                for p in literal_constant_keys((ROOT / page).read_text(encoding="utf-8"), page)]
    assert shadowed == [], "these keys are session keys: write the constant, or name the widget otherwise:\n" + \
        "\n".join(shadowed)


def test_the_keys_are_distinct_strings_and_the_defaults_are_keys():
    constants = {name: value for name, value in vars(session_keys).items() if name.isupper() and isinstance(value, str)}
    assert len(set(constants.values())) == len(constants), "two constants name the same session key"
    assert set(session_keys.DEFAULTS) <= set(constants.values())
    assert session_keys.kept("judge_config_path") == session_keys.JUDGE_CONFIG_PATH_KEPT == "_kept_judge_config_path"


# ------------------------------------------------------------------------------------------ the checkers themselves

PLANTED = '''
import streamlit as st
from empathy_app import session_keys
from empathy_app.session_keys import FLASH as MESSAGE

SHOWN = "relabel_shown"
OTHER = session_keys.SOURCE


def ok(widget_key: str, state_key: str) -> None:
    st.session_state[state_key] = st.session_state[widget_key]  # parameters: checked at the caller
    st.session_state[session_keys.SOURCE] = {"kind": "demo"}
    st.session_state.get(MESSAGE)
    st.session_state.setdefault(session_keys.kept(widget_key), 1)
    if session_keys.TASK in st.session_state:
        del st.session_state[session_keys.TASK]


def bad(name: str) -> None:
    st.session_state["flash"] = None
    st.session_state.get("annotator", "")
    st.session_state.setdefault(f"_kept_{name}", 1)
    st.session_state.pop("_link" + name, None)
    st.session_state[SHOWN] = None
    st.session_state[OTHER] = None
    st.session_state.__setitem__("label_rule", 1)
    if "relabel_session" not in st.session_state:
        st.session_state.relabel_session = 1
    local = "inspect_pick"
    st.session_state[local] = 1
    for widget in ("inspect_task", "inspect_model"):
        st.session_state[widget] = "(any)"
    st.session_state[keyqueue.KEY] = None
'''


def test_the_session_key_checker_on_a_planted_snippet():
    assert session_key_problems(PLANTED, "planted.py") == [
        "planted.py:20: 'flash'",
        "planted.py:21: 'annotator'",
        "planted.py:22: f'_kept_{name}'",
        "planted.py:23: '_link' + name",
        "planted.py:24: SHOWN",
        "planted.py:25: OTHER",
        "planted.py:26: 'label_rule'",
        "planted.py:27: 'relabel_session'",
        "planted.py:28: session_state.relabel_session",
        "planted.py:30: local",
        "planted.py:32: widget",
        "planted.py:33: keyqueue.KEY",
    ]
    fixed = PLANTED.split("def bad")[0]
    assert session_key_problems(fixed) == []


PLANTED_PAGE = '''
import streamlit as st
from empathy_app import session_keys
from empathy_app.decisions import output_key

st.selectbox("Task", [], key="items_task")
st.toggle("Blind", key="_w_items_blind")
st.button("Save", key=output_key("items_save", 1, 2))
st.dataframe(None, key=f"items_table_{1}")
st.selectbox("Pick", [], key=session_keys.ITEMS_PICK)
st.selectbox("Task", [], key="overview_task")
st.button("Save", key=output_key("save", 1))
st.dataframe(None, key=f"table_{1}" + "x")
st.selectbox("Pick", [], key=session_keys.INSPECT_TASK)
st.toggle("Blind", key="_w_blind")
sorted([], key=str)
st.text_input("Name", key=name_of_the_widget)
'''


def test_the_widget_key_checker_on_a_planted_page():
    assert widget_key_problems(PLANTED_PAGE, "items", "planted.py") == [
        "planted.py:11: 'overview_task'",
        "planted.py:12: 'save'",
        "planted.py:13: 'table_'",
        "planted.py:14: 'inspect_task'",
        "planted.py:15: '_w_blind'",
    ]
    assert widget_key_problems("st.button('x', key='items')\n", "items") == []  # the prefix alone is a key
    assert literal_constant_keys(PLANTED_PAGE, "planted.py", {"ITEMS_PICK": "items_table_1", "X": "overview_task",
                                                              "lower": "items_task"}) == [
        "planted.py:11: 'overview_task'"]
