"""Importers that turn published multi-annotator data sets into the empathy data model (:mod:`empathy.io`)."""

from __future__ import annotations

from empathy.datasets.kumar2025 import CORPORA, RATERS, ImportReport, ImportResult, import_kumar2025

__all__ = ["CORPORA", "RATERS", "ImportReport", "ImportResult", "import_kumar2025"]
