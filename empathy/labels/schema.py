"""The override store's tables: column tuples, the DDL of both backends, the schema version and its upgrades.

Standard library only (strings and tuples), so that both backends, the transfer functions and the label rules
read one copy. Five tables (schema version :data:`SCHEMA_VERSION`, in SQLite's ``user_version`` and in
PostgreSQL's ``empathy_meta``):

``overrides``
    the current decision of each annotator on each rating (one row per key, annotator and role);
``audit``
    every change, never updated except to mark a change as undone: annotator, UTC time, old value (the
    value the rating had: the annotator's previous value, else the latest decision of anyone, else the judge's
    value it replaced), new value, reason, action (:data:`ACTIONS`) and the text hash. Changes made together
    (one decision applied to three judges, one imported file) share a ``batch`` number so that
    :meth:`empathy.labels.sqlite.OverrideStore.undo_last` undoes them together;
``exhibits``
    the outputs pinned for a demo (:mod:`empathy.labels.exhibit_list`): one row per (data set, item, model)
    with its place in the data set's ordered list and a note (added in version 3: :data:`SCHEMA_UPGRADES`);
``audit_designs`` and ``audit_design_outputs``
    random audits (:mod:`empathy.audit`, :mod:`empathy.labels.audits`): one header row per (data set, design
    digest) with every field of :meth:`empathy.audit.AuditDesign.to_rows`, and the drawn outputs in audit
    order with their inclusion probabilities (added in version 4). ``overrides`` and ``audit`` gained
    ``audit_design`` and ``audit_position`` then: a decision made on a drawn output in audit order carries the
    design's digest and the output's position (``''`` and ``NULL`` otherwise), so that only such decisions feed
    the audit's estimators.

A new table or column: raise :data:`SCHEMA_VERSION` and add one step to :data:`SCHEMA_UPGRADES` with a script
for each backend; both backends apply the steps in their opening transaction.
"""

from __future__ import annotations

#: Version of the store's tables; version 1 files are migrated on open. Raising it: add the step to
#: :data:`SCHEMA_UPGRADES`.
SCHEMA_VERSION = 4
#: The version the base schemas (:data:`SQLITE_SCHEMA`, :data:`POSTGRES_SCHEMA`) create.
BASE_VERSION = 2

#: The key of a rating: which rater's label of which dimension of which output.
KEY_COLUMNS: tuple[str, ...] = ("item_id", "model", "rater", "dimension")
#: Who decided: an annotator's own decision or an adjudicator's resolution of a disagreement.
ROLES: tuple[str, ...] = ("annotator", "adjudicator")
#: What marks a decision as an audit decision: the design's digest (``''``: none) and the output's position in
#: audit order (``NULL``: none); on ``overrides`` and ``audit`` (version 4).
AUDIT_MARK_COLUMNS: tuple[str, ...] = ("audit_design", "audit_position")
#: The columns of one decision (a row of ``overrides`` without its data set).
DECISION_COLUMNS: tuple[str, ...] = (*KEY_COLUMNS, "value", "annotator", "role", "updated_at", "reason",
                                     "text_hash", "judge_value", "judge_signature", *AUDIT_MARK_COLUMNS)
#: A row of ``overrides``, and of an exported ledger.
LEDGER_COLUMNS: tuple[str, ...] = ("dataset_id", *DECISION_COLUMNS)
#: A row of ``audit``.
AUDIT_COLUMNS: tuple[str, ...] = ("id", "batch", "dataset_id", *KEY_COLUMNS, "annotator", "role", "at",
                                  "old_value", "new_value", "reason", "action", "undone_by", "text_hash", "prior",
                                  *AUDIT_MARK_COLUMNS)
#: A row of ``exhibits`` without its data set.
EXHIBIT_COLUMNS: tuple[str, ...] = ("item_id", "model", "position", "note", "annotator", "updated_at")
#: A row of ``audit_designs`` without its data set: :data:`empathy.audit.HEADER_FIELDS` (a test keeps them
#: equal; this module imports nothing) and who stored the design when.
DESIGN_COLUMNS: tuple[str, ...] = ("format", "digest", "seed", "judge", "dimension", "per_model", "stratify_by_task",
                                   "frame_digest", "n_frame", "n_drawn", "annotator", "created_at")
#: A row of ``audit_design_outputs`` without its data set and design: :data:`empathy.audit.OUTPUT_FIELDS`.
DESIGN_OUTPUT_COLUMNS: tuple[str, ...] = ("position", "item_id", "model", "task", "stratum_size", "stratum_drawn",
                                          "inclusion")
#: What an audit row records.
ACTIONS: frozenset[str] = frozenset({"set", "undo", "import", "adjudicate", "confirm", "migrate"})
#: Actions that :meth:`empathy.labels.sqlite.OverrideStore.undo_last` can undo.
UNDOABLE: tuple[str, ...] = ("set", "import", "adjudicate")
#: The columns each table must have (checked when a PostgreSQL store is opened).
EXPECTED_COLUMNS: dict[str, frozenset[str]] = {
    "overrides": frozenset(LEDGER_COLUMNS), "audit": frozenset(AUDIT_COLUMNS),
    "exhibits": frozenset({"dataset_id", *EXHIBIT_COLUMNS}),
    "audit_designs": frozenset({"dataset_id", *DESIGN_COLUMNS}),
    "audit_design_outputs": frozenset({"dataset_id", "digest", *DESIGN_OUTPUT_COLUMNS})}

# Version 3: the exhibit list (plain portable SQL: no INSERT OR REPLACE, positions renumbered by UPDATE).
EXHIBITS_SCHEMA = """
CREATE TABLE IF NOT EXISTS exhibits (
    dataset_id TEXT NOT NULL,
    item_id    TEXT NOT NULL,
    model      TEXT NOT NULL,
    position   INTEGER NOT NULL,
    note       TEXT NOT NULL DEFAULT '',
    annotator  TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL,
    PRIMARY KEY (dataset_id, item_id, model)
);
"""


def _audit_designs_schema(key: str, real: str, big: str, add: str) -> str:
    """Version 4 on one backend: the audit design tables and the audit mark of decisions and audit rows.

    ``key`` is the type of a sorted text key, ``real`` of a float, ``big`` of a seed (64-bit), ``add`` the
    backend's ``ADD COLUMN`` (PostgreSQL's skips a column that exists; SQLite has no such clause, and
    :func:`empathy.labels.sqlite.open_sqlite_schema` skips those statements itself). Booleans are 0/1 integers on
    both backends (:meth:`empathy.audit.AuditDesign.from_rows` reads them back).
    """
    return f"""
ALTER TABLE overrides {add} audit_design TEXT NOT NULL DEFAULT '';
ALTER TABLE overrides {add} audit_position INTEGER;
ALTER TABLE audit {add} audit_design TEXT NOT NULL DEFAULT '';
ALTER TABLE audit {add} audit_position INTEGER;
CREATE TABLE IF NOT EXISTS audit_designs (
    dataset_id       {key},
    digest           {key},
    format           INTEGER NOT NULL,
    seed             {big} NOT NULL,
    judge            TEXT NOT NULL,
    dimension        TEXT NOT NULL,
    per_model        INTEGER NOT NULL,
    stratify_by_task INTEGER NOT NULL,
    frame_digest     TEXT NOT NULL,
    n_frame          INTEGER NOT NULL,
    n_drawn          INTEGER NOT NULL,
    annotator        TEXT NOT NULL DEFAULT '',
    created_at       TEXT NOT NULL,
    PRIMARY KEY (dataset_id, digest)
);
CREATE TABLE IF NOT EXISTS audit_design_outputs (
    dataset_id    {key},
    digest        {key},
    position      INTEGER NOT NULL,
    item_id       TEXT NOT NULL,
    model         TEXT NOT NULL,
    task          TEXT NOT NULL,
    stratum_size  INTEGER NOT NULL,
    stratum_drawn INTEGER NOT NULL,
    inclusion     {real} NOT NULL,
    PRIMARY KEY (dataset_id, digest, position)
);
"""


#: Version 4 (the random audit, issue 23) on each backend.
AUDIT_DESIGNS_SQLITE = _audit_designs_schema("TEXT NOT NULL", "REAL", "INTEGER", "ADD COLUMN")
AUDIT_DESIGNS_POSTGRES = _audit_designs_schema('TEXT COLLATE "C" NOT NULL', "DOUBLE PRECISION", "BIGINT",
                                               "ADD COLUMN IF NOT EXISTS")

#: Upgrade steps after the base schema: ``{from_version: {"sqlite": script, "postgresql": script}}``, applied in
#: order in the opening transaction until :data:`SCHEMA_VERSION` (a new table, e.g. pinned exhibits, is one
#: entry here with its ``CREATE TABLE`` for each backend). Scripts hold no ``;`` inside strings.
SCHEMA_UPGRADES: dict[int, dict[str, str]] = {
    2: {"sqlite": EXHIBITS_SCHEMA, "postgresql": EXHIBITS_SCHEMA},
    3: {"sqlite": AUDIT_DESIGNS_SQLITE, "postgresql": AUDIT_DESIGNS_POSTGRES},
}

# The base schema (version 2) on SQLite.
_ACTION_LIST = ", ".join(f"'{action}'" for action in sorted(ACTIONS))
SQLITE_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS overrides (
    dataset_id      TEXT NOT NULL,
    item_id         TEXT NOT NULL,
    model           TEXT NOT NULL,
    rater           TEXT NOT NULL,
    dimension       TEXT NOT NULL,
    annotator       TEXT NOT NULL,
    role            TEXT NOT NULL DEFAULT 'annotator' CHECK (role IN ('annotator', 'adjudicator')),
    value           REAL NOT NULL,
    updated_at      TEXT NOT NULL,
    reason          TEXT NOT NULL DEFAULT '',
    text_hash       TEXT NOT NULL DEFAULT '',
    judge_value     REAL,
    judge_signature TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (dataset_id, item_id, model, rater, dimension, annotator, role)
);
CREATE TABLE IF NOT EXISTS audit (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    batch      INTEGER NOT NULL,
    dataset_id TEXT NOT NULL,
    item_id    TEXT NOT NULL,
    model      TEXT NOT NULL,
    rater      TEXT NOT NULL,
    dimension  TEXT NOT NULL,
    annotator  TEXT NOT NULL,
    role       TEXT NOT NULL DEFAULT 'annotator',
    at         TEXT NOT NULL,
    old_value  REAL,
    new_value  REAL,
    reason     TEXT NOT NULL DEFAULT '',
    action     TEXT NOT NULL CHECK (action IN ({_ACTION_LIST})),
    undone_by  INTEGER,
    text_hash  TEXT NOT NULL DEFAULT '',
    prior      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS audit_dataset ON audit (dataset_id, id);
"""

# Version 1 (no annotator in the key, no text hash): copied into the version 2 tables on open.
MIGRATE_V1 = """
ALTER TABLE overrides RENAME TO overrides_v1;
ALTER TABLE audit RENAME TO audit_v1;
DROP INDEX IF EXISTS audit_dataset;
{schema}
INSERT INTO overrides (dataset_id, item_id, model, rater, dimension, annotator, role, value, updated_at, reason)
    SELECT dataset_id, item_id, model, rater, dimension, annotator, 'annotator', value, updated_at, reason
    FROM overrides_v1;
INSERT INTO audit (id, batch, dataset_id, item_id, model, rater, dimension, annotator, role, at, old_value,
                   new_value, reason, action, undone_by, text_hash, prior)
    SELECT id, batch, dataset_id, item_id, model, rater, dimension, annotator, 'annotator', at, old_value,
           new_value, reason, action, undone_by, '', CASE WHEN old_value IS NULL THEN 0 ELSE 1 END
    FROM audit_v1;
DROP TABLE overrides_v1;
DROP TABLE audit_v1;
"""

_PG_KEY = 'TEXT COLLATE "C" NOT NULL'
# The SQLite schema with PostgreSQL's types: DOUBLE PRECISION (REAL is 4 bytes here), identity ids, "C" collation.
POSTGRES_SCHEMA = f"""
CREATE TABLE empathy_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE overrides (
    dataset_id      {_PG_KEY},
    item_id         {_PG_KEY},
    model           {_PG_KEY},
    rater           {_PG_KEY},
    dimension       {_PG_KEY},
    annotator       {_PG_KEY},
    role            TEXT COLLATE "C" NOT NULL DEFAULT 'annotator' CHECK (role IN ('annotator', 'adjudicator')),
    value           DOUBLE PRECISION NOT NULL,
    updated_at      TEXT COLLATE "C" NOT NULL,
    reason          TEXT NOT NULL DEFAULT '',
    text_hash       TEXT NOT NULL DEFAULT '',
    judge_value     DOUBLE PRECISION,
    judge_signature TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (dataset_id, item_id, model, rater, dimension, annotator, role)
);
CREATE TABLE audit (
    id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    batch      BIGINT NOT NULL,
    dataset_id {_PG_KEY},
    item_id    {_PG_KEY},
    model      {_PG_KEY},
    rater      {_PG_KEY},
    dimension  {_PG_KEY},
    annotator  {_PG_KEY},
    role       TEXT COLLATE "C" NOT NULL DEFAULT 'annotator',
    at         TEXT COLLATE "C" NOT NULL,
    old_value  DOUBLE PRECISION,
    new_value  DOUBLE PRECISION,
    reason     TEXT NOT NULL DEFAULT '',
    action     TEXT NOT NULL CHECK (action IN ({_ACTION_LIST})),
    undone_by  BIGINT,
    text_hash  TEXT NOT NULL DEFAULT '',
    prior      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX audit_dataset ON audit (dataset_id, id);
CREATE INDEX audit_batch ON audit (batch)
"""


def split_sql(script: str) -> list[str]:
    """The statements of a script (ours: no ``;`` inside strings), to run them inside one transaction."""
    return [statement.strip() for statement in script.split(";") if statement.strip()]


def upgrade_statements(version: int, backend: str) -> list[str]:
    """The statements that bring a ``backend`` store from schema ``version`` to :data:`SCHEMA_VERSION`.

    Raises :class:`ValueError` when a step is missing (a bug: :data:`SCHEMA_VERSION` raised without its step).
    """
    statements: list[str] = []
    for step in range(version, SCHEMA_VERSION):
        scripts = SCHEMA_UPGRADES.get(step)
        if scripts is None or backend not in scripts:
            raise ValueError(f"no {backend} upgrade of the store schema from version {step} to {step + 1}")
        statements.extend(split_sql(scripts[backend]))
    return statements
