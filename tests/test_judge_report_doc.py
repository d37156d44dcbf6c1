"""docs/judge-report.md holds the Alt-Test table that scripts/judge_report_doc.py computes on the Kumar et al.
import (skipped when the shared data set is absent), and the script refuses a page without its markers."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from empathy.paths import PROJECT_ROOT, shared_dataset

spec = importlib.util.spec_from_file_location("judge_report_doc", PROJECT_ROOT / "scripts" / "judge_report_doc.py")
doc = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = doc
spec.loader.exec_module(doc)  # type: ignore[union-attr]


def test_the_page_holds_what_the_script_computes():
    directory = shared_dataset(doc.NAME)
    if directory is None:
        pytest.skip(f"shared/datasets/{doc.NAME} is absent")
    page = doc.DOC.read_text(encoding="utf-8")
    assert doc.shown_block(page) == doc.table(directory), "run: python scripts/judge_report_doc.py --write"


def test_the_page_holds_the_lexicon_probes_the_script_computes():
    page = doc.DOC.read_text(encoding="utf-8")
    shown = doc.shown_block(page, doc.PROBES_START, doc.PROBES_END)
    assert shown == doc.probes_table(), "run: python scripts/judge_report_doc.py --write"


def test_replacing_the_block_keeps_the_rest_and_needs_the_markers():
    text = f"before\n{doc.START}\nold\n{doc.END}\nafter\n"
    assert doc.replace_block(text, "new") == f"before\n{doc.START}\nnew\n{doc.END}\nafter\n"
    assert doc.shown_block(doc.replace_block(text, "new")) == "new"
    with pytest.raises(ValueError, match="markers"):
        doc.replace_block("no markers here", "new")


def test_the_page_holds_the_probe_coverage_the_simulation_computes():
    from validation.probe_coverage import markdown

    page = doc.DOC.read_text(encoding="utf-8")
    shown = doc.shown_block(page, doc.COVERAGE_START, doc.COVERAGE_END)
    assert shown == markdown(), "run: python scripts/judge_report_doc.py --write"
