"""Human labels: the override store (two backends), its transfer, the label rules and the ledger.

Modules, lowest first (each imports only those above it in this list, :mod:`empathy.audit` (a random audit's
design, of this layer), and the core and data layers: ``empathy.vocabulary``, ``empathy.metrics``,
``empathy.escaping``, ``empathy.sqlite_wal``, ``empathy.io``):

``schema``
    the tables: column tuples, the DDL of both backends, :data:`~empathy.labels.schema.SCHEMA_VERSION` and its
    upgrade steps (standard library only).
``locations``
    where a store is (a SQLite file, a ``postgresql://`` URL or libpq's keyword form), the default places (never
    the working directory), printing it with every password masked, where a password comes from, and
    :class:`~empathy.labels.locations.StoreError`.
``records``
    one decision (:class:`~empathy.labels.records.Change`, value validation) and what ties it to data: text
    hashes, the data set's stable name, the legacy version 1 key; the store's commit order
    (:func:`~empathy.labels.records.in_commit_order`).
``roles``
    who may do what: the roles file (:func:`~empathy.labels.roles.load_roles`) and the check every write of a
    store opened with roles goes through (:meth:`~empathy.labels.roles.Roles.require`).
``sqlite``
    :class:`~empathy.labels.sqlite.OverrideStore`, the store on SQLite and the interface of every backend:
    opening a file safely, writes (set, adjudicate, confirm, undo, adopt version 1 rows), reads (decisions,
    audit, counts, version), and the two primitives other modules build on (``transaction``, ``fetch``).
``postgres``
    :class:`~empathy.labels.postgres.PostgresOverrideStore`, the same queries on a PostgreSQL server.
``backends``
    :func:`~empathy.labels.backends.open_store`: a location to the right backend (the only module that
    imports both, so choosing one needs no import cycle).
``exhibit_list``
    the outputs pinned for a demo, per data set, in order (functions over a store).
``audits``
    random audits in the store (:mod:`empathy.audit`'s designs saved, listed and loaded, ``audit_mark`` for a
    decision made in audit order, ``audit_decisions``: a design's audit labels under a label rule).
``queue_state``
    the team's queue state in the store: skips, assignments (a balanced design with an overlap quota) and
    per-annotator progress (functions over a store).
``transfer``
    the ledger as JSONL/CSV (export, read, import) and copying a whole store (``store_rows``, ``queue_rows``,
    ``restore``, ``migrate_store``), audit designs and marks included.
``relocation``
    moving the uploads' store that earlier versions left in the working directory to its place, with a message.
``rules``
    what a decision means: which ratings it replaces (``override_targets``, ``make_changes``), which label
    wins under a label rule (``effective_overrides``), what one more decision would change
    (``decision_effects``), the paper's rubrics.
``decisions``
    counting decisions as a person made them (one "(all judges)" decision is one, whatever number of judge
    labels it wrote) and the human decisions in two judges' labels (``pair_decisions``: Table 6's warning).
``ledger``
    the decisions of a data set against the loaded outputs: fresh, stale, orphaned, and what applies under the
    rule (:class:`~empathy.labels.ledger.Ledger`, ``open_ledger``); the effective ratings
    (``apply_overrides``); annotators as raters, adjudication, judge re-runs.

Every count a page shows and every metric with human labels goes through :attr:`Ledger.applied
<empathy.labels.ledger.Ledger.applied>`; the store only keeps decisions. This package imports nothing from the
analysis layer (agreement statistics over annotators are :func:`empathy.review.human_agreement`); the layer
rule is in ``docs/development.md`` and ``tests/test_layers.py``. ``empathy.store``, ``empathy.store_postgres``
and ``empathy.overrides`` are compatibility re-exports of these modules.
"""
