"""A new metric is its terms function and one registry entry: then it shows on the Overview and the Items page.

A throwaway metric, GAIN = E(g) - E(t) per output (the affect the generation adds; higher is better here, the
opposite direction of the paper's four, so that every ranking and "worst first" must read the entry), is registered
with :func:`empathy.metrics.registered` and nothing else is edited: its column with its help, its chart with its
how-to-read note, its ranks, its Items column and its sort order must all follow from the entry (issue 22).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from empathy_app import markup  # noqa: E402

pytest.importorskip("streamlit")
from conftest import open_page  # noqa: E402

from empathy import metrics as m  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402
from empathy.vocabulary import HIGHER_IS_BETTER  # noqa: E402

TIMEOUT = 240
HELP = "affect the generation adds to its reference (E(g) - E(t)); > 0 more intense"
READ = "Above 0 the generations carry more affect than their references: the opposite of attenuation."

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _gain_terms(x: m.TermInputs) -> m.Terms:
    ref, gen = x.ratings["e_ref"], x.ratings["e_gen"]
    return gen - ref, np.where(np.isnan(ref) | np.isnan(gen), m.MISSING, m.OK).astype(np.int8)


GAIN = m.MetricSpec("GAIN", ("e_ref", "e_gen"), _gain_terms, better=HIGHER_IS_BETTER, display_name="Affect Gain",
                    equation="not in the paper", value_range=(-1.0, 1.0), help=HELP, how_to_read=READ)


@pytest.fixture
def gain():
    with m.registered(GAIN):
        yield GAIN
    assert "GAIN" not in m.METRIC_SPECS


def _expected_terms() -> pd.Series:
    """E(g) - E(t) per (judge, item_id, model) from the demo's rating files, by hand (pandas, not the engine)."""
    ratings = pd.concat([pd.read_csv(DEMO_DIR / f"ratings_{judge}.csv", dtype={"item_id": str, "model": str})
                         for judge in ("author", "lexicon")])
    wide = ratings.pivot_table(index=["rater", "item_id", "model"], columns="dimension", values="value",
                               aggfunc="first")
    return (wide["e_gen"] - wide["e_ref"]).dropna()


def _frame(at, column: str) -> pd.DataFrame:
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame
    raise AssertionError([list(f.value.columns) for f in at.dataframe])


def test_overview_shows_a_registered_metric(gain):
    at = open_page("app_pages/2_Overview.py", session={"pooled_tasks": True}, timeout=TIMEOUT)
    expected = _expected_terms().groupby(level=["rater", "model"]).mean()
    element = _frame(at, "GAIN (author)")
    pivot = element.value.set_index("model")
    for judge in ("author", "lexicon"):
        assert pivot[f"GAIN ({judge})"].to_dict() == pytest.approx(expected[judge].round(3).to_dict(), abs=1e-9)
    # its help on its columns and in the legend, with its direction
    config = json.loads(element.proto.columns)
    # the column names a judge (data), so the tooltip (Markdown) carries it escaped
    assert config["GAIN (author)"]["help"] == (f"Affect Gain (not in the paper): {HELP} · column "
                                              f"{markup.md('GAIN (author)')}")
    legend = next(str(c.value) for c in at.caption if str(c.value).startswith("**SA**"))
    assert f"**GAIN**: Affect Gain (not in the paper): {HELP}" in legend
    assert "Lower is better for SA, EGM, CA and LD; Higher is better for GAIN." in legend
    # rank 1 = the highest GAIN (its direction), the lowest SA (theirs)
    _, counts, ranks = (f.value for f in at.dataframe if "GAIN (author)" in f.value.columns)  # in page order
    n = _expected_terms()["author"].groupby(level="model").size()
    assert counts.set_index("model")["GAIN (author)"].to_dict() == n.to_dict()  # the n's in their expander
    ranks = ranks.set_index("model")
    assert ranks["GAIN (author)"].idxmin() == expected["author"].idxmax()
    assert ranks["GAIN (author)"].to_dict() == expected["author"].rank(ascending=False, method="min").astype(
        int).to_dict()
    sa = pivot["SA (author)"]
    assert ranks["SA (author)"].to_dict() == sa.rank(method="min").astype(int).to_dict()
    # its chart, and its how-to-read note under it
    titles = [json.loads(chart.proto.spec)["layout"]["title"]["text"] for chart in at.get("plotly_chart")]
    assert "GAIN by model and judge" in titles and "SA by model and judge" in titles
    assert sum(str(c.value) == READ for c in at.caption) == 1


def test_items_shows_a_registered_metric(gain):
    at = open_page("app_pages/8_Items.py", timeout=TIMEOUT)
    table = _frame(at, "generation").value
    assert {"GAIN:author", "GAIN:lexicon"} <= set(table.columns)
    expected = _expected_terms()
    for judge in ("author", "lexicon"):
        shown = table.set_index(["item_id", "model"])[f"GAIN:{judge}"].dropna()
        assert shown.to_dict() == pytest.approx(expected[judge].to_dict(), abs=1e-12)
    sort = at.selectbox(key="items_sort")
    assert "GAIN · judge author" in sort.options and sort.value == "SA:author"
    assert "Larger is worse for SA, EGM, CA and LD, smaller for GAIN" in "\n".join(str(c.value) for c in at.caption)
    # worst first by GAIN: the smallest gain first (higher is better), NaN last
    sort.set_value("GAIN:author").run()
    ordered = _frame(at, "generation").value["GAIN:author"].to_numpy(dtype=float)
    known = ordered[~np.isnan(ordered)]
    assert len(known) and np.all(np.diff(known) >= 0) and not np.isnan(ordered[:len(known)]).any()
