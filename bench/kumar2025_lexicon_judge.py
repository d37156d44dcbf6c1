"""Does the offline lexicon judge track experts? Measured on the Kumar et al. (2025) import.

Usage::

    python bench/kumar2025_lexicon_judge.py [DATA_DIR]

Runs the lexicon judge (affect and conflict avoidance, default segmentation) on the responses of the
conversations whose text is public (EPITOME, Lend an Ear, EmpatheticDialogues: 150 conversations; Perceived
Empathy publishes no text) and prints, per Kumar dimension, Spearman's rho with the expert panel (the mean of
``expert1..3``) of:

* ``e_gen`` (the lexicon's affect intensity of the response),
* ``ca`` (the lexicon's conflict-avoidance label of the response; its sign is expected to be negative on the
  exploration dimensions and positive on ``advice_giving``),
* the best of the two by absolute value (the most generous reading of the lexicon judge), and
* the crowd's rho with the same panel on the same conversations, for scale.

No dimension of the Kumar data is what the lexicon judge measures; the point is whether its outputs carry
any of the signal experts rate. The figures go into ``docs/judges.md`` and the lexicon judge's description
(:data:`empathy.judges.lexicon.DESCRIPTION`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from empathy.datasets import CORPORA, import_kumar2025
from empathy.judges import run_judge
from empathy.panels import panel_ratings
from empathy.paths import shared_dataset


def _rho(a: pd.Series, b: pd.Series) -> float:
    both = pd.concat([a, b], axis=1, join="inner").dropna()
    if len(both) < 3 or both.iloc[:, 0].nunique() < 2 or both.iloc[:, 1].nunique() < 2:
        return float("nan")
    return float(spearmanr(both.iloc[:, 0], both.iloc[:, 1]).statistic)


def measure(directory: Path) -> pd.DataFrame:
    """One row per Kumar dimension with text: rho of e_gen, ca, best |rho| and crowd with the expert panel."""
    imported = import_kumar2025(directory)
    outputs = imported.outputs[imported.outputs["generation"].fillna("").str.strip() != ""]
    run = run_judge(outputs, "lexicon", protocols=["affect", "conflict"], cache=False)
    lexicon = run.ratings.pivot_table(index="item_id", columns="dimension", values="value")
    ratings = panel_ratings(imported.ratings, {"experts": ["expert1", "expert2", "expert3"]})
    rows = []
    for spec in CORPORA.values():
        for dimension in spec.dimensions:
            part = ratings[ratings["dimension"] == dimension]
            experts = part[part["rater"] == "panel:experts"].set_index("item_id")["value"]
            crowd = part[part["rater"] == "crowd"].set_index("item_id")["value"]
            experts = experts[experts.index.isin(lexicon.index)]
            if experts.empty:
                continue
            e_gen = _rho(lexicon["e_gen"], experts)
            ca = _rho(lexicon["ca"], experts)
            rows.append({"corpus": spec.title, "dimension": dimension, "n": int(len(experts)),
                         "e_gen": e_gen, "ca": ca, "lexicon_best_abs": float(np.nanmax(np.abs([e_gen, ca]))),
                         "crowd": _rho(crowd, experts)})
    return pd.DataFrame(rows)


def main(argv: list[str]) -> int:
    directory = Path(argv[0]) if argv else shared_dataset("kumar2025-empathic-communication")
    if directory is None or not Path(directory).is_dir():
        print("Kumar et al. data not found (shared/datasets/kumar2025-empathic-communication)", file=sys.stderr)
        return 2
    table = measure(Path(directory))
    print("| corpus | dimension | n | lexicon e_gen | lexicon ca | lexicon best abs | crowd |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in table.itertuples(index=False):
        print(f"| {row.corpus} | `{row.dimension}` | {row.n} | {row.e_gen:.2f} | {row.ca:.2f} | "
              f"{row.lexicon_best_abs:.2f} | {row.crowd:.2f} |")
    print(f"\nlexicon best |rho| range {table.lexicon_best_abs.min():.2f}-{table.lexicon_best_abs.max():.2f}; "
          f"crowd rho range {table.crowd.min():.2f}-{table.crowd.max():.2f} "
          f"(median lexicon {table.lexicon_best_abs.median():.2f}, crowd {table.crowd.median():.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
