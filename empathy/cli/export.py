"""``empathy export hf OUTPUTS [--ratings FILE ...] [--store [STORE]] --out DIR``: the relabeled set as a
Hugging Face dataset (:func:`empathy.importers.hf_export.export_relabeled`).

The folder holds a ``DatasetDict`` (``outputs``, ``ratings`` with the human decisions applied under the label
rule, ``decisions``), its dataset card ``README.md`` and ``relabel.json``; ``datasets.load_from_disk(DIR)``
reads it, ``push_to_hub`` publishes it (a network step left to the user: docs/importers.md).
"""

from __future__ import annotations

import argparse

from empathy.cli.common import action_parsers, add_columns_option, check_inputs, set_handler
from empathy.vocabulary import DEFAULT_LABEL_RULE, LABEL_RULES


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``export`` and its action ``hf``."""
    parser = commands.add_parser("export", help="export the relabeled set (hf: a Hugging Face dataset with a card)",
                                 description="Export the relabeled set.")
    actions = action_parsers(parser)
    hf = actions.add_parser("hf", help="a Hugging Face DatasetDict saved to disk, with its dataset card",
                            description="Save outputs, effective ratings (human decisions applied under the label "
                            "rule) and every decision as a datasets.DatasetDict in --out, with a dataset card "
                            "(README.md) and relabel.json; load it with datasets.load_from_disk.")
    hf.add_argument("outputs", help="outputs file (CSV, JSONL or Parquet)")
    hf.add_argument("--ratings", action="append", metavar="FILE", help="long ratings file (repeatable)")
    hf.add_argument("--store", dest="overrides", metavar="STORE", nargs="?", const="",
                    help="the human decisions of this store: a SQLite file or a postgresql:// URL (without a "
                    "value: $EMPATHY_STORE, else the store beside the outputs); default: no decisions")
    hf.add_argument("--label-rule", choices=LABEL_RULES, default=DEFAULT_LABEL_RULE,
                    help=f"how several decisions on one label reduce to one (default {DEFAULT_LABEL_RULE})")
    hf.add_argument("--store-name", metavar="NAME",
                    help="the data set's name in the store (default: the outputs file, relative to the store)")
    add_columns_option(hf)
    hf.add_argument("--out", required=True, metavar="DIR", help="the export folder (new or empty)")
    set_handler(hf, run_hf)


def run_hf(args: argparse.Namespace) -> int:
    """Handler of ``export hf``."""
    check_inputs(args.outputs, *(args.ratings or []))
    import sqlite3
    import sys
    from pathlib import Path

    from empathy.escaping import terminal_literal
    from empathy.importers.hf_export import export_relabeled
    from empathy.importers.mapping import ColumnMap
    from empathy.io import DataError, load_dataset
    from empathy.signature import Signature, judge_signatures

    columns = ColumnMap.parse(args.columns)
    dataset = load_dataset(args.outputs, args.ratings or [], columns=columns)
    ledger = None
    extra = dict(columns.signature_fields())
    if args.overrides is not None:
        from empathy.labels.ledger import ledger_for_files
        from empathy.labels.locations import default_store_path, mask_location

        location = args.overrides or default_store_path(Path(args.outputs).resolve().parent)
        try:
            ledger = ledger_for_files(location, args.outputs, dataset.outputs, rule=args.label_rule,
                                      name=args.store_name)
        except sqlite3.Error as exc:
            raise DataError(mask_location(location), f"cannot read the override store ({exc})") from None
        extra.update(ledger.signature_fields())
        print(terminal_literal(f"empathy: {ledger.summary()}"), file=sys.stderr)
    signature = Signature(judges=judge_signatures(dataset.ratings), extra=extra,
                          decisions=ledger.applied_decisions if ledger is not None else None,
                          overrides=len(ledger.applied) if ledger is not None else None)
    facts = export_relabeled(dataset.outputs, dataset.ratings, ledger, args.out, signature=str(signature),
                             label_rule=args.label_rule)
    counts = facts["decisions"]
    print(f"wrote {facts['outputs']} outputs, {facts['ratings']} ratings ({facts['overridden_ratings']} relabeled) "
          f"and {facts['decision_rows']} decision rows ({counts['applied']} decisions applied) to {args.out}")  # type: ignore[index]
    print(terminal_literal(f"signature: {signature}"))
    return 0
