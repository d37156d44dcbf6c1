"""The override store: ``empathy store info|export|import|migrate|assign|progress``.

A store is a SQLite file or a PostgreSQL server (``postgresql://user:password@host:5432/db``, or libpq's keyword
form ``host=db user=ann dbname=team``; ``PG*`` environment variables fill the rest); an omitted STORE is
``$EMPATHY_STORE``. ``migrate`` copies every decision, the whole audit trail and the queue state into an empty
store in one transaction (a team moving its SQLite ledger to its server runs it once). Reading commands (``info``,
``export``, ``progress``) open a store that cannot be written for reading. Writing commands (``import``,
``assign``) check the roles file (``--roles`` or ``$EMPATHY_ROLES``) with the identity ``--as`` (or
``$EMPATHY_IDENTITY``): a viewer's write, an annotator's adjudication or assignment, is refused with one line.
Passwords are never printed; a damaged, unreachable or read-only store exits 2 with one line.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from empathy.cli.common import action_parsers, print_json, print_table, set_handler
from empathy.escaping import terminal_literal

if TYPE_CHECKING:
    from empathy.labels.sqlite import OverrideStore

#: Environment variable naming who runs a writing command (checked against the roles file).
IDENTITY_ENV = "EMPATHY_IDENTITY"


def _location(given: str | None) -> str:
    from empathy.labels.locations import STORE_ENV

    location = (given or os.environ.get(STORE_ENV, "")).strip()
    if not location:
        raise ValueError("store: give STORE or set EMPATHY_STORE")
    return location


def run_info(args: argparse.Namespace) -> int:
    """Handler of ``store info``."""
    import pandas as pd

    from empathy.labels.backends import open_for_reading
    from empathy.labels.locations import password_source

    location = _location(args.store)
    store = open_for_reading(_existing(location))
    decisions = store.decisions()
    audit = store.audit()
    rows = []
    for name in sorted(set(decisions["dataset_id"]) | set(audit["dataset_id"])):
        mine = decisions[decisions["dataset_id"] == name]
        keys = mine[["item_id", "model", "rater", "dimension"]].drop_duplicates()
        rows.append({"dataset": name, "ratings": len(keys), "decisions": len(mine),
                     "annotators": mine["annotator"].nunique(), "audit_rows": int((audit["dataset_id"] == name).sum())})
    table = pd.DataFrame(rows, columns=["dataset", "ratings", "decisions", "annotators", "audit_rows"])
    source = password_source(location)
    if args.json:
        print_json({"store": store.label, "backend": store.backend, "version": store.version(),
                    "read_only": store.read_only, "password_from": source,
                    "datasets": table.to_dict(orient="records")})
        return 0
    notes = ["read-only"] if store.read_only else []
    if source is not None:
        notes.append(f"password from {source}")
    print(terminal_literal(f"store {store.label} ({', '.join([store.backend, *notes])}); {len(decisions)} decisions, "
                           f"{len(audit)} audit rows"))
    if len(table):
        print_table(table)
    return 0


def _existing(location: str) -> str:
    """``location``, after checking a SQLite file exists (a reading command never creates a store)."""
    from empathy.labels.locations import StoreError, is_server_location

    if not is_server_location(location) and not os.path.exists(location):
        raise StoreError(location, "no such store")
    return location


def _writer(location: str, args: argparse.Namespace, action: str) -> tuple[OverrideStore, str]:
    """The store opened for writing with the roles of ``--roles``/``$EMPATHY_ROLES`` (if any), and the identity
    (``--as``/``$EMPATHY_IDENTITY``), checked for ``action`` before anything is read."""
    from empathy.labels.backends import open_store
    from empathy.labels.roles import roles_from_env

    roles = roles_from_env(args.roles)
    identity = (args.identity or os.environ.get(IDENTITY_ENV, "")).strip()
    if roles is not None:
        roles.require(identity, action)
    return open_store(location, roles=roles), identity


def _data_store(args: argparse.Namespace) -> tuple[str, str]:
    """The store location and the data set's name of a command given OUTPUTS (as ``metrics --overrides``)."""
    from pathlib import Path

    from empathy.cli.common import check_inputs
    from empathy.labels.locations import default_store_path
    from empathy.labels.records import dataset_name

    check_inputs(args.outputs)
    location = args.store or os.environ.get("EMPATHY_STORE", "").strip() or default_store_path(
        Path(args.outputs).resolve().parent)
    return str(location), dataset_name(args.outputs, store_path=location, explicit=args.store_name)


def run_export(args: argparse.Namespace) -> int:
    """Handler of ``store export``."""
    from pathlib import Path

    from empathy.labels.backends import open_for_reading
    from empathy.labels.transfer import export_csv, export_jsonl

    suffix = Path(args.file).suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise ValueError(f"{args.file}: the ledger is written as .jsonl or .csv, not {suffix or '(no suffix)'}")
    store = open_for_reading(_existing(args.store))
    written = (export_csv if suffix == ".csv" else export_jsonl)(store, args.file, args.dataset)
    print(f"exported {written} decisions from {store.label} to {args.file}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    """Handler of ``store import``: every record checked, then written in one batch; with ``--outputs`` each
    decision's text hash is compared with the output's current text (stale or orphaned ones refused unless
    ``--allow-stale``, and counted either way)."""
    from empathy.labels.records import dataset_name, output_hashes
    from empathy.labels.transfer import check_texts, import_ledger, read_ledger

    records = read_ledger(args.file)  # checked before the store is opened: a bad file names its row
    location = _location(args.store)
    hashes, target = None, args.dataset
    if args.outputs is not None:
        from empathy.cli.common import check_inputs
        from empathy.io import load_outputs

        check_inputs(args.outputs)
        named = sorted({str(record.get("dataset_id") or "") for _, record in records} - {""})
        if target is None and len(named) > 1:
            listed = ", ".join(named[:3]) + (", ..." if len(named) > 3 else "")
            raise ValueError(f"{args.file}: the ledger holds decisions of {len(named)} data sets ({listed}); "
                             "--outputs checks one: import one data set's (store export --dataset NAME)")
        hashes = output_hashes(load_outputs(args.outputs)[0])
        target = dataset_name(args.outputs, store_path=location, explicit=args.dataset)
    store, identity = _writer(location, args, "decide")
    if any(record.get("role") == "adjudicator" for _, record in records):
        store.require(identity, "adjudicate")
    written = import_ledger(store, args.file, dataset_id=target, annotator=args.annotator, hashes=hashes,
                            allow_stale=args.allow_stale)
    into = f" (data set {target!r})" if args.outputs is not None else ""
    print(terminal_literal(f"imported {written} decisions into {store.label}{into} (one undo batch); "
                           f"{check_texts(records, hashes).summary()}"))
    return 0


def run_assign(args: argparse.Namespace) -> int:
    """Handler of ``store assign``."""
    from empathy.io import load_outputs
    from empathy.labels.queue_state import assign

    location, name = _data_store(args)
    outputs = load_outputs(args.outputs)[0]
    store, identity = _writer(location, args, "assign")
    people = [person.strip() for person in args.annotators.split(",") if person.strip()]
    plan = assign(store, name, outputs, people, k=args.k, overlap=args.overlap, seed=args.seed, by=identity,
                  replace=args.replace)
    loads = plan.loads()
    print(f"assigned {plan.n_outputs} outputs of {name} to {len(loads)} annotators ({plan.n_overlap} to {plan.k} "
          f"each, the others to one; {loads.min()}-{loads.max()} per annotator; design {plan.digest}, seed "
          f"{plan.seed})")
    return 0


def run_progress(args: argparse.Namespace) -> int:
    """Handler of ``store progress``."""
    from empathy.cli.common import json_rows
    from empathy.io import load_outputs
    from empathy.labels.backends import open_for_reading
    from empathy.labels.queue_state import annotator_progress

    location, name = _data_store(args)
    outputs = load_outputs(args.outputs)[0]
    store = open_for_reading(_existing(location))
    table = annotator_progress(store, name, dimension=args.dimension, outputs=outputs)
    if args.json:
        print_json({"store": store.label, "dataset": name, "annotators": json_rows(table)})
    else:
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


_STORE_HELP = "SQLite file or postgresql:// URL"
#: Options of the writing commands: who writes, and the roles that say whether they may.
_ACCESS = (
    (("--as",), {"dest": "identity", "metavar": "IDENTITY",
                 "help": f"who writes (checked against the roles file; default ${IDENTITY_ENV})"}),
    (("--roles",), {"metavar": "FILE", "help": "the roles file (TOML; default $EMPATHY_ROLES)"}),
)
#: Options of the commands about one data set given by its outputs file.
_DATA = (
    (("outputs",), {"metavar": "OUTPUTS", "help": "the data set's outputs file (CSV, JSONL or Parquet)"}),
    (("--store",), {"metavar": "STORE", "help": f"{_STORE_HELP} (default: $EMPATHY_STORE, else the store beside "
                                                "OUTPUTS)"}),
    (("--store-name",), {"metavar": "NAME", "help": "the data set's name in the store (default: the outputs file, "
                                                    "relative to the store)"}),
)
_JSON = (("--json",), {"action": "store_true", "help": "print JSON instead of a table"})
#: Each action: name, help, description, arguments (flags, argparse keywords), handler.
_ACTIONS: tuple[tuple[str, str, str, tuple, Callable[[argparse.Namespace], int]], ...] = (
    ("info", "backend, schema version and the decisions per data set",
     "Print the store's backend (read-only or not, where its password comes from), schema version and, per data "
     "set, the number of rated keys, decisions, annotators and audit rows.",
     ((("store",), {"nargs": "?", "metavar": "STORE", "help": f"{_STORE_HELP} (default: $EMPATHY_STORE)"}), _JSON),
     run_info),
    ("migrate", "copy every decision and the audit trail into an empty store (one transaction)",
     "Copy every decision, the whole audit trail, the exhibits and the queue state (skips, assignments) of SRC into "
     "DST, which must be empty, in one transaction; ids, batches, undo links and the commit order are kept. Data "
     "sets named by an outputs file beside a SQLite SRC are renamed to that file's name in DST (on a server: "
     "<folder>/<file>).",
     ((("source",), {"metavar": "SRC", "help": f"the store to copy ({_STORE_HELP})"}),
      (("target",), {"metavar": "DST", "help": f"the empty store to fill ({_STORE_HELP})"}),
      (("--rename",), {"action": "append", "default": [], "metavar": "OLD=NEW",
                       "help": "rename a data set on the way (repeat for several); wins over the automatic names"}),
      (("--keep-names",), {"action": "store_true", "help": "keep every data-set name as it is in SRC"})),
     run_migrate),
    ("export", "write the decisions as a ledger file (JSONL or CSV)",
     "Write every decision (of one data set with --dataset) to FILE, in the store's commit order; .csv cells are "
     "spreadsheet-safe. A store that cannot be written is opened for reading.",
     ((("store",), {"metavar": "STORE", "help": _STORE_HELP}),
      (("file",), {"metavar": "FILE", "help": "the ledger to write (.jsonl or .csv)"}),
      (("--dataset",), {"metavar": "NAME", "help": "only this data set"})),
     run_export),
    ("import", "apply a ledger file (JSONL or CSV) as one undoable batch",
     "Check every record of FILE (the contract: docs/ledger-format.md), then write them in one transaction (one "
     "undo batch), in file order. A decision must name the text it was made on (text_hash); with --outputs each is "
     "compared with the output's current text. A decision that would be stale (other text, no hash) or orphaned "
     "is refused unless --allow-stale, and the line after the import counts them. With a roles file, the identity "
     "(--as) must be allowed to decide (and to adjudicate for adjudications), and so must every annotator the "
     "records name.",
     ((("file",), {"metavar": "FILE", "help": "a ledger exported by 'store export' or the app (.jsonl/.csv)"}),
      (("--store",), {"metavar": "STORE", "help": f"{_STORE_HELP} (default $EMPATHY_STORE)"}),
      (("--dataset",), {"metavar": "NAME", "help": "write every record into this data set"}),
      (("--outputs",), {"metavar": "OUTPUTS", "help": "the data set's outputs file: every record goes to its data "
                        "set (as metrics --store names it, or --dataset) and its text_hash is checked against the "
                        "output's current text"}),
      (("--allow-stale",), {"action": "store_true", "help": "import decisions made on other text, without a text "
                            "hash or on outputs OUTPUTS lacks, as stale (counted; never applied until re-decided); "
                            "default: refuse the file"}),
      (("--annotator",), {"metavar": "NAME", "help": "write every record in this annotator's name"}), *_ACCESS),
     run_import),
    ("assign", "give each output to annotators: k per output on an overlap share, balanced, seeded",
     "Store an assignment design for a data set: ceil(overlap x N) outputs go to K annotators each (the overlap "
     "human-human agreement needs), the others to one; loads differ by at most one; the same seed gives the same "
     "design (empathy.labels.queue_state.plan_assignments). With a roles file, --as must be an adjudicator.",
     (*_DATA, (("--annotators",), {"required": True, "metavar": "A,B,...", "help": "comma-separated annotator names"}),
      (("--k",), {"type": int, "default": 2, "help": "annotators per overlapping output (default 2)"}),
      (("--overlap",), {"type": float, "default": 0.2,
                        "help": "share of the outputs given to K annotators (0-1, default 0.2)"}),
      (("--seed",), {"type": int, "default": 0, "help": "seed of the design (default 0)"}),
      (("--replace",), {"action": "store_true", "help": "replace the data set's assignment design"}), *_ACCESS),
     run_assign),
    ("progress", "per annotator: outputs assigned, decided, skipped, remaining",
     "Per annotator: the outputs assigned to them, decided, skipped and remaining (of the loaded outputs).",
     (*_DATA, (("--dimension",), {"metavar": "DIM", "help": "count decisions and skips of this dimension only"}),
      _JSON),
     run_progress),
)


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``store`` sub-command with its actions (:data:`_ACTIONS`)."""
    parser = commands.add_parser(
        "store", help="the override store (SQLite file or postgresql:// URL): info, export, import, migrate, assign, "
                      "progress",
        description="Inspect an override store, move decisions in and out, copy it into another (e.g. a SQLite "
                    "ledger into a team's PostgreSQL server), assign outputs to annotators and see their progress. "
                    "STORE is a SQLite file or a postgresql:// URL; default $EMPATHY_STORE.")
    actions = action_parsers(parser)
    for name, help_text, description, arguments, handler in _ACTIONS:
        action = actions.add_parser(name, help=help_text, description=description)
        for flags, options in arguments:
            action.add_argument(*flags, **options)
        set_handler(action, handler)
