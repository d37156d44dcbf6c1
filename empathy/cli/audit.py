"""A random audit of one judge: ``empathy audit draw|list|show|estimate|budget OUTPUTS ...``.

``draw`` draws the outputs a human should decide, at random, before anyone looks at them
(:func:`empathy.audit.draw_audit`) and, with ``--store``, keeps the design in the override store
(:mod:`empathy.labels.audits`); the app's Relabel decides them in audit order. ``list`` and ``show`` read the
stored designs back (``show``: the drawn outputs in audit order and which are decided). ``estimate`` prints the
prediction-powered estimates (:func:`empathy.inference.ppi_estimates`: judge-only, human-only and PPI++ values
per model and task) from the audit decisions in the store, ``budget`` the label budget
(:func:`empathy.label_budget.label_budget`). A data set is named in the store as ``metrics --store`` names it (its
outputs file relative to the store, or ``--store-name``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from empathy.cli.common import (
    FORMATS,
    action_parsers,
    bounded_int,
    check_inputs,
    emit,
    json_rows,
    print_json,
    print_table,
    set_handler,
)
from empathy.vocabulary import DEFAULT_LABEL_RULE, EGM_BOTH_ZERO, LABEL_RULES

if TYPE_CHECKING:
    import pandas as pd

    from empathy.audit import AuditDesign
    from empathy.inference import PPIReport
    from empathy.io import Dataset
    from empathy.labels.audits import AuditDecisions
    from empathy.labels.sqlite import OverrideStore

#: The largest seed the store keeps (:data:`empathy.labels.audits.MAX_SEED`, not imported: the parser stays light).
_MAX_SEED = 2 ** 63 - 1


def _store_options(parser: argparse.ArgumentParser, *, optional: bool) -> None:
    if optional:
        parser.add_argument("--store", nargs="?", const="", metavar="STORE",
                            help="keep the design in this override store: a SQLite file or a postgresql:// URL "
                            "(without a value: $EMPATHY_STORE, else the store beside the outputs)")
    else:
        parser.add_argument("--store", default="", metavar="STORE",
                            help="the override store: a SQLite file or a postgresql:// URL (default: "
                            "$EMPATHY_STORE, else the store beside the outputs)")
    parser.add_argument("--store-name", metavar="NAME",
                        help="the data set's name in the store (default: the outputs file, relative to the store)")


def _inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("outputs", help="outputs file (CSV, JSONL or Parquet)")
    parser.add_argument("--ratings", action="append", metavar="FILE",
                        help="long-form ratings file (repeat for several): the judges' own ratings")


def _design_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--audit", metavar="DIGEST",
                        help="the stored audit design (its digest or a prefix of 6+ hex digits; default: the data "
                        "set's only design)")
    parser.add_argument("--label-rule", choices=LABEL_RULES, default=DEFAULT_LABEL_RULE,
                        help="which human label counts where several annotators decided one output")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``audit`` sub-command with ``draw``, ``list``, ``show``, ``estimate`` and ``budget``."""
    parser = commands.add_parser(
        "audit", help="a random audit of a judge: draw it, list and show stored designs, corrected estimates, "
                      "the label budget",
        description="Draw a random audit of one judge on one dimension (the outputs humans decide in audit order "
                    "so that their decisions become an estimate), keep it in the override store, and compute the "
                    "prediction-powered (PPI++) estimates and the label budget from the decisions made on it.")
    actions = action_parsers(parser)
    draw = actions.add_parser("draw", help="draw the outputs to decide, at random, in one random order",
                              description="Draw PER_MODEL outputs from every model (or every model and task) among "
                                          "those the judge rated on the dimension, by simple random sampling, in "
                                          "one random order; print them and the design's digest.")
    _inputs(draw)
    draw.add_argument("--judge", required=True, help="the rater audited")
    draw.add_argument("--dimension", required=True, help="the dimension humans decide (e.g. ca, e_gen)")
    draw.add_argument("--per-model", type=bounded_int(1), required=True, metavar="N",
                      help="outputs drawn per model (per model and task with --stratify-by-task)")
    draw.add_argument("--seed", type=bounded_int(0, _MAX_SEED), required=True,
                      help="the seed of the draw (the same data, judge, size and seed give the same design)")
    draw.add_argument("--stratify-by-task", action="store_true", help="draw N from every (model, task)")
    _store_options(draw, optional=True)
    draw.add_argument("--annotator", default="", help="who drew it (kept with the design)")
    draw.add_argument("--format", choices=FORMATS, default="table")
    set_handler(draw, run_draw)

    listing = actions.add_parser("list", help="the audit designs stored for a data set")
    listing.add_argument("outputs", help="outputs file (names the data set in the store)")
    _store_options(listing, optional=False)
    listing.add_argument("--format", choices=FORMATS, default="table")
    set_handler(listing, run_list)

    show = actions.add_parser("show", help="a stored design: its drawn outputs in audit order, which are decided")
    show.add_argument("outputs", help="outputs file (names the data set; its texts make decisions fresh or stale)")
    show.add_argument("digest", nargs="?", metavar="DIGEST", help="the design (as --audit)")
    _store_options(show, optional=False)
    _design_option(show)
    show.add_argument("--format", choices=FORMATS, default="table")
    set_handler(show, run_show)

    for name, text in (("estimate", "judge-only, human-only and PPI++ values per model and task, from the audit "
                                    "decisions"),
                       ("budget", "per model the interval's half-width, per adjacent pair the further audit "
                                  "decisions to separate them")):
        action = actions.add_parser(name, help=text)
        _inputs(action)
        _store_options(action, optional=False)
        _design_option(action)
        action.add_argument("--egm-both-zero", choices=EGM_BOTH_ZERO, default=EGM_BOTH_ZERO[0],
                            help="EGM of an item with a + b = 0 (as metrics)")
        if name == "budget":
            action.add_argument("--power", type=float, default=0.8, help="power of the z-test (default 0.8)")
        action.add_argument("--format", choices=FORMATS, default="table")
        set_handler(action, run_estimate if name == "estimate" else run_budget)


# ------------------------------------------------------------------------------------------ helpers

def _location(args: argparse.Namespace) -> str:
    """The store's location: ``--store``, else ``$EMPATHY_STORE``, else the store beside the outputs."""
    from pathlib import Path

    from empathy.labels.locations import default_store_path

    return str(args.store or default_store_path(Path(args.outputs).resolve().parent))


def _open(args: argparse.Namespace, *, create: bool) -> tuple[OverrideStore, str]:
    """The store and the data set's name in it; a SQLite store that does not exist is an error unless ``create``."""
    from empathy.labels.backends import open_store
    from empathy.labels.locations import StoreError, is_server_location
    from empathy.labels.records import dataset_name

    location = _location(args)
    if not create and not is_server_location(location) and not os.path.exists(location):
        raise StoreError(location, "no such store (draw an audit with --store first)")
    return open_store(location), dataset_name(args.outputs, store_path=location, explicit=args.store_name)


def _design(store: OverrideStore, name: str, digest: str | None) -> AuditDesign:
    """The design ``--audit`` names, or the data set's only one."""
    from empathy.labels.audits import design_list, load_design

    if digest:
        return load_design(store, name, digest)
    listed = design_list(store, name)
    if listed.empty:
        raise ValueError(f"data set {name!r} has no audit design in {store.label}: draw one with audit draw --store")
    if len(listed) > 1:
        raise ValueError(f"data set {name!r} has {len(listed)} audit designs in {store.label} "
                         f"({', '.join(d[:12] for d in listed['digest'])}): choose one with --audit DIGEST")
    return load_design(store, name, str(listed["digest"].iloc[0]))


def _labels(args: argparse.Namespace, store: OverrideStore, name: str, dataset: Dataset, design: AuditDesign
            ) -> AuditDecisions:
    """The audit decisions of ``design`` under ``--label-rule``: fresh decisions made in audit order only."""
    from empathy.labels.audits import audit_decisions
    from empathy.labels.ledger import open_ledger

    ledger = open_ledger(store, name, dataset.outputs, args.label_rule)
    labels = audit_decisions(ledger.status.fresh, design, rule=args.label_rule, stale=ledger.status.stale)
    print(f"empathy: {labels.summary()}", file=sys.stderr)
    return labels


def _signature(ratings: pd.DataFrame, extra: dict[str, str]) -> str:
    from empathy.signature import Signature, judge_signatures

    return str(Signature(judges=judge_signatures(ratings), extra=extra))


def _header(design: AuditDesign) -> dict[str, object]:
    header, _ = design.to_rows()
    return {**header, "short_digest": design.short_digest}


# ------------------------------------------------------------------------------------------ handlers

def run_draw(args: argparse.Namespace) -> int:
    """Handler of ``audit draw``: the drawn outputs in audit order and the digest (kept in the store: ``--store``)."""
    check_inputs(args.outputs, *(args.ratings or []))
    from empathy.audit import draw_audit
    from empathy.io import load_dataset

    dataset = load_dataset(args.outputs, args.ratings or [])
    design = draw_audit(dataset.outputs, dataset.ratings, judge=args.judge, dimension=args.dimension,
                        per_model=args.per_model, seed=args.seed, stratify_by_task=args.stratify_by_task)
    stored = None
    if args.store is not None:
        from empathy.labels.audits import save_design

        store, name = _open(args, create=True)
        save_design(store, name, design, annotator=args.annotator)
        stored = {"store": store.label, "dataset": name}
    signature = _signature(dataset.ratings[dataset.ratings["rater"].astype(str) == args.judge],
                           {**design.signature_fields(), "audit-seed": str(design.seed)})
    if args.format == "json":
        print_json({"design": _header(design), "outputs": json_rows(design.frame()), "stored": stored,
                    "signature": signature})
        return 0
    if args.format == "table":
        where = f"; kept in {stored['store']} as data set {stored['dataset']!r}" if stored else " (not kept: --store)"
        print(f"audit {design.short_digest} ({design.digest}): {len(design.outputs)} of {design.n_frame} outputs "
              f"{args.judge!r} rated on {args.dimension!r}, {design.per_model} per "
              f"{'model and task' if design.stratify_by_task else 'model'}, seed {design.seed}{where}")
    emit(design.frame(), args.format, signature)
    return 0


def run_list(args: argparse.Namespace) -> int:
    """Handler of ``audit list``: the data set's stored designs (headers)."""
    from empathy.labels.audits import design_list

    store, name = _open(args, create=False)
    table = design_list(store, name)
    if args.format == "json":
        print_json({"store": store.label, "dataset": name, "designs": json_rows(table)})
        return 0
    if args.format == "csv":
        emit(table, "csv", f"store:{store.label}|dataset:{name}")
        return 0
    print(f"{len(table)} audit design(s) of data set {name!r} in {store.label}")
    if len(table):
        print_table(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    """Handler of ``audit show``: the design (validated) and its drawn outputs in audit order with their labels."""
    check_inputs(args.outputs)
    from empathy.io import load_dataset
    from empathy.labels.audits import audit_queue

    dataset = load_dataset(args.outputs, [])
    store, name = _open(args, create=False)
    if args.digest and args.audit and args.digest != args.audit:
        raise ValueError(f"audit show: DIGEST {args.digest!r} and --audit {args.audit!r} name two designs")
    design = _design(store, name, args.digest or args.audit)
    labels = _labels(args, store, name, dataset, design)
    queue = audit_queue(design, labels)
    signature = _signature(dataset.ratings, {**design.signature_fields(), "labels": args.label_rule})
    if args.format == "json":
        print_json({"design": _header(design), "outputs": json_rows(queue), "decided": int(queue["decided"].sum()),
                    "unresolved": labels.unresolved, "unmarked": labels.unmarked, "mismatched": labels.mismatched,
                    "stale": labels.stale, "signature": signature})
        return 0
    if args.format == "table":
        print(f"audit {design.short_digest}: judge {design.judge!r} on {design.dimension!r}, {design.per_model} per "
              f"{'model and task' if design.stratify_by_task else 'model'}, seed {design.seed}; "
              f"{int(queue['decided'].sum())} of {len(queue)} decided in audit order"
              + (f"; {labels.stale} more have stale decisions only (made on other text or naming none: re-decide "
                 "them)" if labels.stale else ""))
    emit(queue, args.format, signature)
    return 0


def _report(args: argparse.Namespace) -> tuple[PPIReport, Dataset, dict[str, str]]:
    """The PPI report of the chosen design from the store's audit decisions, the data set and signature fields."""
    check_inputs(args.outputs, *(args.ratings or []))
    from empathy.evaluate import text_features
    from empathy.inference import ppi_estimates
    from empathy.io import load_dataset
    from empathy.labels.rules import label_rule_field

    dataset = load_dataset(args.outputs, args.ratings or [])
    store, name = _open(args, create=False)
    design = _design(store, name, args.audit)
    labels = _labels(args, store, name, dataset, design)
    from empathy import metrics as registry

    # EGM needs the sentence counts (spaCy); an audit of another dimension does not
    needs_sentences = any(spec.needs_sentences and design.dimension in spec.dimensions
                          for spec in registry.METRIC_SPECS.values())
    sentences = text_features(dataset.outputs).frame(dataset.outputs) if needs_sentences else None
    # the judges' own ratings, never with the overrides applied (the correction would vanish)
    report = ppi_estimates(dataset.outputs, dataset.ratings, design, labels.decisions, sentences=sentences,
                           egm_both_zero=args.egm_both_zero)
    key, value = label_rule_field(args.label_rule)
    return report, dataset, {**report.signature_fields(), key: value}


def run_estimate(args: argparse.Namespace) -> int:
    """Handler of ``audit estimate``: per (task, model, metric) the judge-only, human-only and PPI++ values."""
    from empathy.label_budget import adjacent_pairs

    report, dataset, fields = _report(args)
    signature = _signature(dataset.ratings, fields)
    if args.format == "json":
        print_json({"estimates": json_rows(report.table), "pairs": json_rows(adjacent_pairs(report)),
                    "n_ignored": report.n_ignored, "signature": signature})
        return 0
    table = report.table if args.format == "csv" else report.table[
        ["task", "model", "metric", "scheme", "n_frame", "n_audit", "n_skipped", "judge_value", "human_value",
         "human_low", "human_high", "ppi_value", "ppi_low", "ppi_high", "lam", "n_effective"]]
    emit(table, args.format, signature)
    return 0


def run_budget(args: argparse.Namespace) -> int:
    """Handler of ``audit budget``: the interval half-widths now and the decisions to separate adjacent models."""
    if not 0 < args.power < 1:
        raise ValueError(f"--power must be between 0 and 1, got {args.power:g}")
    from empathy.label_budget import budget_promise, label_budget

    report, dataset, fields = _report(args)
    budget = label_budget(report, power=args.power)
    signature = _signature(dataset.ratings, {**fields, **budget.signature_fields()})
    if args.format == "json":
        print_json({"models": json_rows(budget.models), "pairs": json_rows(budget.pairs),
                    "hit_rate": budget.hit_rate, "signature": signature})
        return 0
    if args.format == "csv":
        emit(budget.pairs, "csv", signature)
        return 0
    print("per model: the PPI interval's half-width now")
    print_table(budget.models)
    print(f"\nadjacent pairs: further audit decisions for a t-test at {report.confidence:g} to reach power "
          f"{args.power:g} against the shrunk difference ('-': no plan, the note says why)")
    print_table(budget.pairs)
    print("\n" + budget_promise(budget))
    print(f"\nsignature: {signature}")
    return 0
