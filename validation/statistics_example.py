"""The worked example of docs/statistics.md on the demo data (run: ``python -m validation.statistics_example``).

Every figure the document quotes comes from :func:`demo_tables` (and the paper's Table 6 rows from
tests/test_agreement.py); tests/test_statistics.py recomputes them and finds each line in the document, so the
text cannot drift from the code. The demo's ``author`` ratings play the humans and the ``lexicon`` judge the
judge (``data/README.md``: both are ratings of the same outputs), on the demo's 25 hand-written items (121 outputs,
whose author ratings are hand-assigned; the generated items' are assigned by construction, which would make the
"humans" of the example the generator's own rules).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from empathy.audit import draw_audit
from empathy.bootstrap import judge_agreement, model_intervals
from empathy.inference import ALL_TASKS, ppi_estimates
from empathy.io import load_dataset
from empathy.label_budget import label_budget
from empathy.stability import metric_matrix, metric_terms

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
#: The hand-written items of the demo (``scripts/make_demo.py`` copies them into ``data/`` verbatim).
HAND_WRITTEN = ROOT / "scripts" / "demo_bank" / "handwritten" / "outputs.csv"
SEED = 1
RESAMPLES = 2000
PER_MODEL = 12


def _cell(value: object, digits: int = 2) -> str:
    return "-" if value is None or pd.isna(value) else f"{float(value):.{digits}f}"


def _interval(low: object, high: object) -> str:
    return f"[{_cell(low)}, {_cell(high)}]"


def load_demo() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The demo's outputs and ratings (author and lexicon) on its hand-written items."""
    data = load_dataset(DATA / "outputs.csv", [DATA / "ratings_author.csv", DATA / "ratings_lexicon.csv"])
    items = set(pd.read_csv(HAND_WRITTEN, dtype=str, keep_default_na=False)["item_id"])
    outputs = data.outputs[data.outputs["item_id"].isin(items)].reset_index(drop=True)
    ratings = data.ratings[data.ratings["item_id"].isin(items)].reset_index(drop=True)
    return outputs, ratings


def model_table(outputs: pd.DataFrame, ratings: pd.DataFrame, metric: str, judge: str,
                task: str | None = None) -> list[str]:
    """Per-model value, 95 % interval, rank and rank interval, and each adjacent pair's support (Markdown rows)."""
    part = outputs if task is None else outputs[outputs["task"] == task]
    result = model_intervals(metric_matrix(metric_terms(part, ratings, metric), judge), n_resamples=RESAMPLES,
                             seed=SEED)
    support = dict(zip(result.pairs["worse"], result.pairs["p_better"], strict=True))
    rows = []
    for row in result.models.to_dict("records"):
        above = support.get(row["model"])
        rows.append(f"| {row['model']} | {row['n']} | {_cell(row['value'])} | {_interval(row['low'], row['high'])} | "
                    f"{row['rank']} | {row['rank_low']}-{row['rank_high']} | "
                    f"{'-' if above is None else f'{above:.2f}'} |")
    return rows


def agreement_rows(outputs: pd.DataFrame, ratings: pd.DataFrame) -> list[str]:
    """Table 6 on the demo: author vs lexicon, per metric, rho with its interval, exact p, tau-b and its p."""
    rows = []
    for metric, task in (("SA", None), ("CA", "counseling")):
        part = outputs if task is None else outputs[outputs["task"] == task]
        table = judge_agreement(metric_terms(part, ratings, metric), n_resamples=RESAMPLES, seed=SEED).table
        for row in table.to_dict("records"):
            rows.append(f"| {metric} | {row['n_models']} | {row['n_items']} | {row['spearman']:.3f} | "
                        f"{_interval(row['ci_low'], row['ci_high'])} | {row['p_exact']:.3f} | "
                        f"{row['kendall_tau_b']:.3f} | {row['p_kendall']:.3f} |")
    return rows


def audit_rows(outputs: pd.DataFrame, ratings: pd.DataFrame) -> tuple[str, list[str], list[str]]:
    """An audit of the lexicon judge's ``e_gen`` (12 per model, seed 1) decided with the author's values: the
    design's digest, per model the judge-only, human-only and PPI values with the full-data truth, and the
    label budget's adjacent pairs."""
    design = draw_audit(outputs, ratings, judge="lexicon", dimension="e_gen", per_model=PER_MODEL, seed=SEED)
    author = ratings[(ratings["rater"] == "author") & (ratings["dimension"] == "e_gen")]
    report = ppi_estimates(outputs, ratings, design, author[["item_id", "model", "dimension", "value"]])
    # the quantity the audit estimates: SA with the lexicon's E(t) and the author's E(g), on every output
    lexicon_ref = ratings[(ratings["rater"] == "lexicon") & (ratings["dimension"] == "e_ref")]
    hybrid = pd.concat([lexicon_ref, author]).assign(rater="hybrid")
    truth = metric_terms(outputs, hybrid, "SA").groupby("model")["term"].mean()
    pooled = report.table[report.table["task"] == ALL_TASKS]
    rows = [f"| {r['model']} | {r['n_audit']} | {_cell(r['judge_value'])} | {_cell(r['human_value'])} "
            f"{_interval(r['human_low'], r['human_high'])} | {_cell(r['ppi_value'])} "
            f"{_interval(r['ppi_low'], r['ppi_high'])} | {_cell(r['lam'])} | {_cell(r['n_effective'], 1)} | "
            f"{_cell(truth[r['model']])} |" for r in pooled.to_dict("records")]
    pairs = [f"| {r['better']} | {r['worse']} | {_cell(r['difference'])} | {_cell(r['se_difference'])} | "
             f"{'yes' if r['separated'] else 'no'} | {_cell(r['planned_difference'])} | "
             f"{int(r['further_decisions']) if r['reachable'] else str(r['note']).split(':')[0]} |"
             for r in label_budget(report).pairs.to_dict("records")]
    return design.short_digest, rows, pairs


def demo_tables() -> dict[str, list[str]]:
    """Every Markdown row the worked example of docs/statistics.md quotes, by table."""
    outputs, ratings = load_demo()
    digest, audit, budget = audit_rows(outputs, ratings)
    return {"sa_author": model_table(outputs, ratings, "SA", "author"),
            "ca_counseling": model_table(outputs, ratings, "CA", "author", task="counseling"),
            "agreement": agreement_rows(outputs, ratings), "audit": audit, "budget": budget,
            "digest": [f"`audit:{digest}`"]}


if __name__ == "__main__":
    for name, lines in demo_tables().items():
        print(f"--- {name}")
        print("\n".join(lines))
