"""The override store: ``empathy store info [STORE]`` and ``empathy store migrate SRC DST``.

A store is a SQLite file or a PostgreSQL URL (``postgresql://user:password@host:5432/db``); an omitted STORE is
``$EMPATHY_STORE``. ``migrate`` copies every decision and the whole audit trail into an empty store in one
transaction (a team moving its SQLite ledger to its server runs it once). Passwords are never printed; a damaged
or unreachable store exits 2 with one line.
"""

from __future__ import annotations

import argparse
import os

from empathy.cli.common import print_json, print_table, set_handler
from empathy.escaping import terminal_literal


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``store`` sub-command with ``info`` and ``migrate``."""
    parser = commands.add_parser(
        "store", help="the override store (SQLite file or postgresql:// URL): info, migrate",
        description="Inspect an override store or copy it into another (e.g. a SQLite ledger into a team's "
                    "PostgreSQL server). STORE is a SQLite file or a postgresql:// URL; default $EMPATHY_STORE.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    info = actions.add_parser("info", help="backend, schema version and the decisions per data set",
                              description="Print the store's backend, schema version and, per data set, the "
                                          "number of rated keys, decisions, annotators and audit rows.")
    info.add_argument("store", nargs="?", metavar="STORE", help="SQLite file or postgresql:// URL "
                      "(default: $EMPATHY_STORE)")
    info.add_argument("--json", action="store_true", help="print JSON instead of a table")
    set_handler(info, run_info)
    migrate = actions.add_parser(
        "migrate", help="copy every decision and the audit trail into an empty store (one transaction)",
        description="Copy every decision and the whole audit trail of SRC into DST, which must be empty, in one "
                    "transaction; ids, batches and undo links are kept. Data sets named by an outputs file beside "
                    "a SQLite SRC are renamed to that file's name in DST (on a server: <folder>/<file>).")
    migrate.add_argument("source", metavar="SRC", help="the store to copy (SQLite file or postgresql:// URL)")
    migrate.add_argument("target", metavar="DST", help="the empty store to fill (SQLite file or postgresql:// URL)")
    migrate.add_argument("--rename", action="append", default=[], metavar="OLD=NEW",
                         help="rename a data set on the way (repeat for several); wins over the automatic names")
    migrate.add_argument("--keep-names", action="store_true", help="keep every data-set name as it is in SRC")
    set_handler(migrate, run_migrate)


def _location(given: str | None) -> str:
    from empathy.labels.locations import STORE_ENV

    location = (given or os.environ.get(STORE_ENV, "")).strip()
    if not location:
        raise ValueError("store: give STORE or set EMPATHY_STORE")
    return location


def run_info(args: argparse.Namespace) -> int:
    """Handler of ``store info``."""
    import pandas as pd

    from empathy.labels.backends import open_store
    from empathy.labels.locations import StoreError

    location = _location(args.store)
    if "://" not in location and not os.path.exists(location):
        raise StoreError(location, "no such store")
    store = open_store(location)
    decisions = store.decisions()
    audit = store.audit()
    rows = []
    for name in sorted(set(decisions["dataset_id"]) | set(audit["dataset_id"])):
        mine = decisions[decisions["dataset_id"] == name]
        keys = mine[["item_id", "model", "rater", "dimension"]].drop_duplicates()
        rows.append({"dataset": name, "ratings": len(keys), "decisions": len(mine),
                     "annotators": mine["annotator"].nunique(), "audit_rows": int((audit["dataset_id"] == name).sum())})
    table = pd.DataFrame(rows, columns=["dataset", "ratings", "decisions", "annotators", "audit_rows"])
    if args.json:
        print_json({"store": store.label, "backend": store.backend, "version": store.version(),
                    "datasets": table.to_dict(orient="records")})
        return 0
    print(terminal_literal(f"store {store.label} ({store.backend}); {len(decisions)} decisions, {len(audit)} audit "
                           "rows"))
    if len(table):
        print_table(table)
    return 0


def run_migrate(args: argparse.Namespace) -> int:
    """Handler of ``store migrate``."""
    from empathy.labels.transfer import migrate_store

    rename: dict[str, str] = {}
    for pair in args.rename:
        old, sep, new = pair.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise ValueError(f"--rename: expected OLD=NEW, got {pair!r}")
        rename[old.strip()] = new.strip()
    report = migrate_store(args.source, args.target, rename=rename, translate_names=not args.keep_names)
    print(terminal_literal(report.summary()))  # it names the data sets
    return 0
