"""Compatibility re-exports: the override store moved to :mod:`empathy.labels` (issue 22).

Nothing is defined here. Import from the new modules instead: the tables from :mod:`empathy.labels.schema`,
locations and :class:`StoreError` from :mod:`empathy.labels.locations`, :class:`Change`, hashes and data-set
names from :mod:`empathy.labels.records`, :class:`OverrideStore` from :mod:`empathy.labels.sqlite`,
:func:`open_store` from :mod:`empathy.labels.backends` (``OverrideStore(url)`` no longer returns the PostgreSQL
backend), the ledger file and migration from :mod:`empathy.labels.transfer`, :func:`apply_overrides` and
:func:`human_ratings` from :mod:`empathy.labels.ledger`. The store's former methods ``overrides`` (use the
ledger), ``export_jsonl``, ``export_csv``, ``import_ledger``, ``rows``, ``restore`` (functions of
:mod:`empathy.labels.transfer`) and the exhibit methods (:mod:`empathy.labels.exhibit_list`) are gone.
Kept while branches written against the old paths are merged; new code must not import it.
"""

from __future__ import annotations

from empathy.labels.backends import (
    open_store,
)
from empathy.labels.ledger import (
    apply_overrides,
    human_ratings,
)
from empathy.labels.locations import (
    SERVER_SCHEMES,
    STORE_ENV,
    STORE_FILENAME,
    StoreError,
    default_store_path,
    is_server_location,
    mask_location,
)
from empathy.labels.records import (
    Change,
    dataset_id,
    dataset_name,
    output_hashes,
    text_hash,
    validate_value,
)
from empathy.labels.schema import (
    ACTIONS,
    AUDIT_COLUMNS,
    BASE_VERSION,
    DECISION_COLUMNS,
    EXHIBIT_COLUMNS,
    KEY_COLUMNS,
    LEDGER_COLUMNS,
    ROLES,
    SCHEMA_UPGRADES,
    SCHEMA_VERSION,
    UNDOABLE,
    upgrade_statements,
)
from empathy.labels.sqlite import (
    BUSY_TIMEOUT_S,
    OverrideStore,
)
from empathy.labels.transfer import (
    MigrationReport,
    escape_cell,
    migrate_store,
    read_ledger,
    unescape_cell,
)

__all__ = [
    "ACTIONS",
    "AUDIT_COLUMNS",
    "BASE_VERSION",
    "BUSY_TIMEOUT_S",
    "Change",
    "DECISION_COLUMNS",
    "EXHIBIT_COLUMNS",
    "KEY_COLUMNS",
    "LEDGER_COLUMNS",
    "MigrationReport",
    "OverrideStore",
    "ROLES",
    "SCHEMA_UPGRADES",
    "SCHEMA_VERSION",
    "SERVER_SCHEMES",
    "STORE_ENV",
    "STORE_FILENAME",
    "StoreError",
    "UNDOABLE",
    "apply_overrides",
    "dataset_id",
    "dataset_name",
    "default_store_path",
    "escape_cell",
    "human_ratings",
    "is_server_location",
    "mask_location",
    "migrate_store",
    "open_store",
    "output_hashes",
    "read_ledger",
    "text_hash",
    "unescape_cell",
    "upgrade_statements",
    "validate_value",
]
