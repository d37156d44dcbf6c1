"""Regenerate ``data/ratings_lexicon.csv``: the offline lexicon judge's ratings of the demo data.

Affect and disturbing-content protocols on every row (as the author rated them); the conflict-avoidance
protocol only on counseling rows, since it reads a client narrative and a reply. Run from the repo root:
``python scripts/make_demo_lexicon_ratings.py``. The signature of the run is stored in every row.
``scripts/make_demo.py`` rates the demo it generates with :func:`lexicon_ratings` too.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from empathy.io import load_outputs
from empathy.judges import run_judge
from empathy.paths import DEMO_DIR

TASK_PROTOCOLS = {
    "news": ("affect", "disturbing"),
    "translation": ("affect", "disturbing"),
    "counseling": ("affect", "disturbing", "conflict"),
}


def lexicon_ratings(outputs_path: Path) -> pd.DataFrame:
    """The lexicon judge's long-form ratings of an outputs file, through the package's public API."""
    outputs, _ = load_outputs(outputs_path)
    return run_judge(outputs, "lexicon", task_protocols=TASK_PROTOCOLS, cache=False).ratings


def main() -> None:
    ratings = lexicon_ratings(DEMO_DIR / "outputs.csv")
    ratings.to_csv(DEMO_DIR / "ratings_lexicon.csv", index=False)
    print(f"{len(ratings)} ratings, {int(ratings['value'].isna().sum())} missing -> "
          f"{DEMO_DIR / 'ratings_lexicon.csv'}")


if __name__ == "__main__":
    main()
