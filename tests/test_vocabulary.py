"""One copy of each shared list (issue 22): the command line's parsers and the engine read empathy.vocabulary."""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from empathy import metrics, vocabulary
from empathy.cli import build_parser
from empathy.labels import rules

ROOT = Path(__file__).resolve().parents[1]


def _actions(parser: argparse.ArgumentParser, prefix: str = ""):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, f"{prefix}{name} ")
        else:
            yield prefix.strip(), action


@pytest.mark.parametrize(("option", "choices", "default"), [
    ("--label-rule", vocabulary.LABEL_RULES, vocabulary.DEFAULT_LABEL_RULE),
    ("--egm-both-zero", vocabulary.EGM_BOTH_ZERO, "zero"),
    ("--ld-standardization", vocabulary.LD_STANDARDIZATIONS, "separate"),
])
def test_every_parser_option_reads_the_vocabulary(option, choices, default):
    found = [(command, action) for command, action in _actions(build_parser()) if option in action.option_strings]
    assert found, option
    for command, action in found:
        assert action.choices is choices, f"{command} {option} keeps its own copy of the choices"
        assert action.default == default, command


def test_the_engine_reads_the_same_lists():
    assert metrics.EGM_BOTH_ZERO is vocabulary.EGM_BOTH_ZERO
    assert metrics.LD_STANDARDIZATIONS is vocabulary.LD_STANDARDIZATIONS
    assert metrics.LD_DIMENSIONS is vocabulary.LD_DIMENSIONS
    assert rules.LABEL_RULES is vocabulary.LABEL_RULES
    assert vocabulary.DEFAULT_LABEL_RULE in vocabulary.LABEL_RULES
    assert set(vocabulary.LABEL_RULE_HELP) == set(vocabulary.LABEL_RULES)


def test_the_vocabulary_imports_the_standard_library_only():
    tree = ast.parse((ROOT / "empathy" / "vocabulary.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
    # and importing it loads nothing heavy
    code = "import sys, empathy.vocabulary; print(sorted(m for m in ('numpy', 'pandas') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
