"""Export the relabeled set as a Hugging Face dataset: a ``DatasetDict`` saved to disk, with a dataset card.

:func:`export_relabeled` writes, into one folder (:meth:`datasets.DatasetDict.save_to_disk`):

* split ``outputs``: the outputs table as loaded (``item_id``, ``model``, ``task``, ``reference``,
  ``generation`` and every metadata column);
* split ``ratings``: the *effective* ratings, each judge label replaced by the human decision the label rule
  applies (``overridden`` true there, ``judge_value`` the judge's own label, missing where a human filled a gap);
* split ``decisions``: every human decision of the store's ledger, one row per decision and judge label, with
  its ``status`` (``applied``, ``fresh`` not applied under the rule, ``stale``: the text changed since,
  ``orphaned``: the output is gone);
* ``README.md``: the dataset card (YAML metadata the Hub reads, then counts, the label rule, the
  reproducibility signature, the columns and how to load it), and ``relabel.json`` with the same facts for
  scripts.

Every split's :class:`datasets.DatasetInfo` description carries the signature and the label rule, so a split
copied on its own still says how it was made. :func:`load_relabeled` reads the folder back as pandas frames (the
round trip the tests check). Publishing needs a network and is the user's step (``push_to_hub``, see
``docs/importers.md``); nothing here talks to the Hub.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from empathy.escaping import markdown_literal
from empathy.importers.common import require
from empathy.labels.ledger import Ledger, apply_ledger

SPLITS: tuple[str, ...] = ("outputs", "ratings", "decisions")
CARD = "README.md"
FACTS = "relabel.json"
_datasets = require("datasets", "datasets", "exporting a Hugging Face dataset")


def _arrow_ready(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each object column of mixed Python types as text (Arrow needs one type per column; gaps
    stay missing), and a plain index."""
    out = frame.reset_index(drop=True).copy()
    for column in out.columns:
        values = out[column]
        if values.dtype != object:
            continue
        kinds = {type(v) for v in values if v is not None and not (isinstance(v, float) and np.isnan(v))}
        if len(kinds) > 1 or (kinds and not kinds <= {str}):
            out[column] = values.map(lambda v: None if v is None or (isinstance(v, float) and np.isnan(v))
                                     else str(v))
    out.columns = [str(c) for c in out.columns]
    return out


def relabeled_ratings(ratings: pd.DataFrame, ledger: Ledger | None) -> pd.DataFrame:
    """The effective ratings under ``ledger`` with ``overridden`` and ``judge_value`` (the judge's own label)."""
    judge = ratings.set_index(["item_id", "model", "rater", "dimension"])["value"]
    effective = apply_ledger(ratings, ledger) if ledger is not None else ratings.assign(overridden=False)
    keys = pd.MultiIndex.from_frame(effective[["item_id", "model", "rater", "dimension"]])
    effective = effective.assign(judge_value=judge.reindex(keys).to_numpy(dtype=float))
    return effective


def ledger_decisions(ledger: Ledger | None) -> pd.DataFrame:
    """Every decision of ``ledger`` with its ``status``: applied, fresh (not applied under the rule), stale,
    orphaned."""
    if ledger is None:
        return pd.DataFrame({"item_id": pd.Series(dtype=str), "status": pd.Series(dtype=str)})
    parts = []
    keys = ["item_id", "model", "rater", "dimension", "annotator"]
    applied = ledger.applied
    fresh = ledger.status.fresh
    if len(fresh):
        usable = [k for k in keys if k in fresh.columns and k in applied.columns]
        hit = (pd.MultiIndex.from_frame(fresh[usable]).isin(pd.MultiIndex.from_frame(applied[usable]))
               if len(applied) and usable else np.zeros(len(fresh), dtype=bool))
        parts.append(fresh.assign(status=np.where(hit, "applied", "fresh")))
    for name in ("stale", "orphaned"):
        frame = getattr(ledger.status, name)
        if len(frame):
            parts.append(frame.assign(status=name))
    if not parts:
        return ledger.decisions.iloc[0:0].assign(status=pd.Series(dtype=str))
    return pd.concat(parts, ignore_index=True)


def dataset_card(facts: dict[str, object]) -> str:
    """The dataset card (Markdown with the Hub's YAML header); every name from the data is escaped."""
    models = ", ".join(markdown_literal(m) for m in facts["models"]) or "-"  # type: ignore[union-attr]
    tasks = ", ".join(markdown_literal(t) for t in facts["tasks"]) or "-"  # type: ignore[union-attr]
    counts = facts["decisions"]
    lines = [
        "---",
        "pretty_name: Relabeled outputs (empathy)",
        "tags:", "- empathy", "- llm-evaluation", "- human-relabeling",
        "---", "",
        "# Relabeled outputs", "",
        "Model outputs with judge labels and the human decisions that relabel them, exported by "
        "the empathy tool (`empathy export hf`). Three parts, each a split of the saved "
        "`DatasetDict` (and a config once pushed to the Hub):", "",
        f"- **outputs** ({facts['outputs']} rows): one per (item, model): `item_id`, `model`, `task`, `reference`, "
        "`generation` and the metadata columns.",
        f"- **ratings** ({facts['ratings']} rows): the effective labels under the label rule: `value` is the "
        "human decision where one applies (`overridden` true; `judge_value` keeps the judge's own label), else "
        "the judge's label.",
        f"- **decisions** ({facts['decision_rows']} rows): every human decision with annotator, time, reason "
        "and `status` (applied; fresh but not applied under the rule; stale: the text changed since; orphaned: "
        "the output is gone).", "",
        f"Models: {models}. Tasks: {tasks}.", "",
        f"Human decisions: {counts['applied']} applied, {counts['stale']} stale, "  # type: ignore[index]
        f"{counts['orphaned']} orphaned, {counts['unresolved']} unresolved; "  # type: ignore[index]
        f"{facts['overridden_ratings']} judge labels replaced.", "",
        f"Label rule: `{facts['label_rule']}` (latest decision, majority of annotators, or the adjudicator's).",
        "", "## Reproducibility signature", "", "```", str(facts["signature"]), "```", "",
        "## Loading", "", "```python", "from datasets import load_from_disk", "",
        "parts = load_from_disk(\"PATH\")   # a DatasetDict: outputs, ratings, decisions",
        "ratings = parts[\"ratings\"].to_pandas()", "```", "",
        "On the Hub, each part is a config: `load_dataset(\"ORG/NAME\", \"ratings\", split=\"train\")`.", "",
        "The texts are the data set's own: check their licence before publishing.", "",
    ]
    return "\n".join(lines)


def export_relabeled(outputs: pd.DataFrame, ratings: pd.DataFrame, ledger: Ledger | None, out_dir: str | Path, *,
                     signature: str, label_rule: str = "latest") -> dict[str, object]:
    """Save the relabeled set to ``out_dir`` as a ``DatasetDict`` with a dataset card (see the module docstring).

    Parameters
    ----------
    outputs, ratings
        The validated data set (:func:`empathy.io.load_dataset`), the judges' ratings before any override.
    ledger
        The human decisions (:func:`empathy.labels.ledger.ledger_for_files`), or ``None`` for none.
    signature
        The reproducibility signature of the set (judges, label rule, ledger digest, decision counts).
    label_rule
        The rule the ledger was reduced by (recorded in the card and every split's description).

    Returns
    -------
    dict
        The facts written to ``relabel.json`` (counts, label rule, signature, paths).
    """
    datasets = _datasets()
    datasets.disable_progress_bars()  # type: ignore[attr-defined]  # a command's output is its summary line
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(17, "the export folder is not empty (choose a new one)", str(out))
    effective = relabeled_ratings(ratings, ledger)
    decisions = ledger_decisions(ledger)
    counts = (dict(ledger.decision_counts) if ledger is not None
              else {"applied": 0, "stale": 0, "orphaned": 0, "unresolved": 0})
    facts: dict[str, object] = {
        "outputs": len(outputs), "ratings": len(effective), "decision_rows": len(decisions),
        "decisions": counts, "overridden_ratings": int(effective["overridden"].sum()),
        "label_rule": label_rule, "signature": signature, "ledger": ledger.digest if ledger is not None else "",
        "models": sorted(map(str, outputs["model"].unique())),
        "tasks": sorted(str(t) for t in outputs["task"].unique() if t) if "task" in outputs.columns else [],
        "splits": list(SPLITS),
    }
    description = json.dumps({"signature": signature, "label_rule": label_rule, "ledger": facts["ledger"]})
    parts = {}
    for name, frame in zip(SPLITS, (outputs, effective, decisions), strict=True):
        info = datasets.DatasetInfo(description=description)  # type: ignore[attr-defined]
        parts[name] = datasets.Dataset.from_pandas(_arrow_ready(frame), info=info,  # type: ignore[attr-defined]
                                                   preserve_index=False)
    # an empty split (no decisions yet) gets one shard: by default it gets none, and load_from_disk then fails
    empty = {name: 1 for name, part in parts.items() if part.num_rows == 0}
    datasets.DatasetDict(parts).save_to_disk(str(out), num_shards=empty or None)  # type: ignore[attr-defined]
    (out / CARD).write_text(dataset_card(facts), encoding="utf-8")
    (out / FACTS).write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    return facts


def load_relabeled(path: str | Path) -> dict[str, pd.DataFrame]:
    """The three splits of an export as pandas frames (``{"outputs": ..., "ratings": ..., "decisions": ...}``)."""
    datasets = _datasets()
    datasets.disable_progress_bars()  # type: ignore[attr-defined]
    loaded = datasets.load_from_disk(str(path))  # type: ignore[attr-defined]
    return {name: loaded[name].to_pandas() for name in SPLITS}


__all__ = ["CARD", "FACTS", "SPLITS", "dataset_card", "export_relabeled", "ledger_decisions", "load_relabeled",
           "relabeled_ratings"]
