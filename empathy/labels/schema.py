"""The override store's tables: column tuples, the DDL of both backends, the schema version and its upgrades.

Standard library only (strings and tuples), so that both backends, the transfer functions and the label rules
read one copy. Five tables (schema version :data:`SCHEMA_VERSION`, in SQLite's ``user_version`` and in
PostgreSQL's ``empathy_meta``):

``overrides``
    the current decision of each annotator on each rating (one row per key, annotator and role), with the
    commit order ``seq`` of the change that last set its value;
``audit``
    every change, never updated except to mark a change as undone: annotator, the writer's UTC time (``at``,
    recorded, never used to order), old value (the value the rating had: the annotator's previous value, else
    the latest decision of anyone, else the judge's value it replaced), new value, reason, action
    (:data:`ACTIONS`), the text hash and ``seq``. Changes made together (one decision applied to three judges,
    one imported file) share a ``batch`` number so that :meth:`empathy.labels.sqlite.OverrideStore.undo_last`
    undoes them together;
``exhibits``
    the outputs pinned for a demo (:mod:`empathy.labels.exhibit_list`): one row per (data set, item, model)
    with its place in the data set's ordered list and a note (added in version 3: :data:`SCHEMA_UPGRADES`);
``skips`` and ``assignments``
    the team's shared queue state (:mod:`empathy.labels.queue_state`, version 4): the outputs each annotator
    skipped (per dimension), and which outputs each annotator was given by an assignment design.

**Commit order** (version 4). ``seq`` is the store's own sequence: every audit row gets the next number,
``MAX(audit.seq) + 1``, assigned inside the write transaction, which holds the store's write lock on both
backends (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's advisory lock), so ``seq`` follows the order in which the
changes were committed whatever the writers' clocks say. "Latest" (the ``latest`` label rule, the value a
change replaced, undo) means the highest ``seq``; ``updated_at``/``at`` are the writer's clock, kept as a record
only (a decision frame without ``seq``, built by hand, falls back to them).
``audit_designs`` and ``audit_design_outputs``
    random audits (:mod:`empathy.audit`, :mod:`empathy.labels.audits`): one header row per (data set, design
    digest) with every field of :meth:`empathy.audit.AuditDesign.to_rows`, and the drawn outputs in audit
    order with their inclusion probabilities (added in version 5). ``overrides`` and ``audit`` gained
    ``audit_design`` and ``audit_position`` then: a decision made on a drawn output in audit order carries the
    design's digest and the output's position (``''`` and ``NULL`` otherwise), so that only such decisions feed
    the audit's estimators. Version 6 adds indexes only (:data:`READ_INDEXES`).

A new table, column or index: raise :data:`SCHEMA_VERSION` and add one step to :data:`SCHEMA_UPGRADES` with a script
for each backend; both backends apply the steps in their opening transaction.
"""

from __future__ import annotations

#: Version of the store's tables; version 1 files are migrated on open. Raising it: add the step to
#: :data:`SCHEMA_UPGRADES`.
SCHEMA_VERSION = 6
#: The version the base schemas (:data:`SQLITE_SCHEMA`, :data:`POSTGRES_SCHEMA`) create.
BASE_VERSION = 2

#: The key of a rating: which rater's label of which dimension of which output.
KEY_COLUMNS: tuple[str, ...] = ("item_id", "model", "rater", "dimension")
#: Who decided: an annotator's own decision or an adjudicator's resolution of a disagreement.
ROLES: tuple[str, ...] = ("annotator", "adjudicator")
#: What marks a decision as an audit decision: the design's digest (``''``: none) and the output's position in
#: audit order (``NULL``: none); on ``overrides`` and ``audit`` (version 5).
AUDIT_MARK_COLUMNS: tuple[str, ...] = ("audit_design", "audit_position")
#: The columns of one decision (a row of ``overrides`` without its data set).
DECISION_COLUMNS: tuple[str, ...] = (*KEY_COLUMNS, "value", "annotator", "role", "updated_at", "reason",
                                     "text_hash", "judge_value", "judge_signature", *AUDIT_MARK_COLUMNS)
#: A row of an exported ledger (JSONL/CSV): a decision, its audit mark and its data set. The file lists decisions
#: in commit order, so an import keeps which decision came last without carrying the store's numbers.
LEDGER_COLUMNS: tuple[str, ...] = ("dataset_id", *DECISION_COLUMNS)
#: The store's commit order (see the module docstring).
ORDER_COLUMN = "seq"
#: What :meth:`empathy.labels.sqlite.OverrideStore.decisions` returns: a decision and its commit order.
STORED_DECISION_COLUMNS: tuple[str, ...] = (*DECISION_COLUMNS, ORDER_COLUMN)
#: A row of ``overrides`` as stored (what ``store migrate`` copies).
OVERRIDE_ROW_COLUMNS: tuple[str, ...] = (*LEDGER_COLUMNS, ORDER_COLUMN)
#: A row of ``audit``.
AUDIT_COLUMNS: tuple[str, ...] = ("id", "batch", "dataset_id", *KEY_COLUMNS, "annotator", "role", "at",
                                  "old_value", "new_value", "reason", "action", "undone_by", "text_hash", "prior",
                                  ORDER_COLUMN, *AUDIT_MARK_COLUMNS)
#: A row of ``skips``: an annotator set an output aside on one dimension (``seq``: the data set's skip order).
SKIP_COLUMNS: tuple[str, ...] = ("dataset_id", "dimension", "annotator", "item_id", "model", "reason", "at",
                                 ORDER_COLUMN)
#: A row of ``assignments``: an output given to an annotator by a design (``position``: the annotator's order;
#: ``copies``: how many annotators the design gave this output; ``design``: the design's digest).
ASSIGNMENT_COLUMNS: tuple[str, ...] = ("dataset_id", "annotator", "item_id", "model", "position", "copies",
                                       "design", "seed", "k", "overlap", "assigned_by", "at")
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
    "overrides": frozenset(OVERRIDE_ROW_COLUMNS), "audit": frozenset(AUDIT_COLUMNS),
    "exhibits": frozenset({"dataset_id", *EXHIBIT_COLUMNS}), "skips": frozenset(SKIP_COLUMNS),
    "assignments": frozenset(ASSIGNMENT_COLUMNS),
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

# Version 4: the commit order and the shared queue state. ``seq`` is backfilled from the audit ids (which a
# version 3 store assigned in commit order under the same write lock): an audit row's seq is its id; a decision's
# seq is the id of the last audit row that set its value (a set, import or adjudication, or an undo that put a
# value back), 0 when no audit row names it (a version 1 row without history), which then orders by updated_at.
# The key index makes the backfill one index look-up per decision (linear in the store), then goes.
_UNDO_RESTORED = "(action = 'undo' AND new_value IS NOT NULL AND (old_value IS NULL OR old_value <> new_value))"
ORDER_UPGRADE = f"""
ALTER TABLE overrides ADD COLUMN seq {{integer}} NOT NULL DEFAULT 0;
ALTER TABLE audit ADD COLUMN seq {{integer}} NOT NULL DEFAULT 0;
UPDATE audit SET seq = id;
CREATE INDEX audit_key_backfill ON audit (dataset_id, item_id, model, rater, dimension, annotator, role, id);
UPDATE overrides SET seq = COALESCE((SELECT MAX(a.id) FROM audit AS a WHERE a.dataset_id = overrides.dataset_id
    AND a.item_id = overrides.item_id AND a.model = overrides.model AND a.rater = overrides.rater
    AND a.dimension = overrides.dimension AND a.annotator = overrides.annotator AND a.role = overrides.role
    AND (a.action IN ('set', 'import', 'adjudicate') OR {_UNDO_RESTORED})), 0);
DROP INDEX audit_key_backfill;
CREATE INDEX audit_seq ON audit (seq);
CREATE TABLE skips (
    dataset_id {{key}},
    dimension  {{key}},
    annotator  {{key}},
    item_id    {{key}},
    model      {{key}},
    reason     TEXT NOT NULL DEFAULT '',
    at         TEXT NOT NULL,
    seq        {{integer}} NOT NULL,
    PRIMARY KEY (dataset_id, dimension, annotator, item_id, model)
);
CREATE TABLE assignments (
    dataset_id  {{key}},
    annotator   {{key}},
    item_id     {{key}},
    model       {{key}},
    position    INTEGER NOT NULL,
    copies      INTEGER NOT NULL,
    design      TEXT NOT NULL,
    seed        {{integer}} NOT NULL,
    k           INTEGER NOT NULL,
    overlap     {{real}} NOT NULL,
    assigned_by TEXT NOT NULL DEFAULT '',
    at          TEXT NOT NULL,
    PRIMARY KEY (dataset_id, annotator, item_id, model)
);
CREATE INDEX assignments_output ON assignments (dataset_id, item_id, model)
"""


def _audit_designs_schema(key: str, real: str, big: str, add: str) -> str:
    """Version 5 on one backend: the audit design tables and the audit mark of decisions and audit rows.

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


#: Version 5 (the random audit, issue 23) on each backend.
AUDIT_DESIGNS_SQLITE = _audit_designs_schema("TEXT NOT NULL", "REAL", "INTEGER", "ADD COLUMN")
AUDIT_DESIGNS_POSTGRES = _audit_designs_schema('TEXT COLLATE "C" NOT NULL', "DOUBLE PRECISION", "BIGINT",
                                               "ADD COLUMN IF NOT EXISTS")

#: Version 6: indexes for the reads of every decision (no table or column changes). What changed in a data set
#: after a version (:meth:`empathy.labels.sqlite.OverrideStore.changed_decisions`, read at every key of every
#: annotator) is a range of ``seq`` within the data set: without this index SQLite read every audit row of the
#: data set (its index on ``(dataset_id, id)``). The next undo batch (``MAX(batch)``, at every write) read the
#: whole audit table on SQLite (PostgreSQL's base schema has the batch index already).
READ_INDEXES = """
CREATE INDEX IF NOT EXISTS audit_dataset_seq ON audit (dataset_id, seq);
CREATE INDEX IF NOT EXISTS audit_batch ON audit (batch)
"""

#: Upgrade steps after the base schema: ``{from_version: {"sqlite": script, "postgresql": script}}``, applied in
#: order in the opening transaction until :data:`SCHEMA_VERSION` (a new table, e.g. pinned exhibits, is one
#: entry here with its ``CREATE TABLE`` for each backend). Scripts hold no ``;`` inside strings.
SCHEMA_UPGRADES: dict[int, dict[str, str]] = {
    2: {"sqlite": EXHIBITS_SCHEMA, "postgresql": EXHIBITS_SCHEMA},
    3: {"sqlite": ORDER_UPGRADE.format(integer="INTEGER", key="TEXT NOT NULL", real="REAL"),
        "postgresql": ORDER_UPGRADE.format(integer="BIGINT", key='TEXT COLLATE "C" NOT NULL',
                                           real="DOUBLE PRECISION")},
    4: {"sqlite": AUDIT_DESIGNS_SQLITE, "postgresql": AUDIT_DESIGNS_POSTGRES},
    5: {"sqlite": READ_INDEXES, "postgresql": READ_INDEXES},
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
