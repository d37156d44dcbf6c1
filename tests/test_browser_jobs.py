"""The three jobs of issue 16 scripted in Chromium on the demo data (driving code: tests/browser_jobs.py),
each answer checked against the same computation done with the empathy package:

(a) the worst SA item of the worst model (Table 6 download on Overview, then the Items page);
(b) 20 CA decisions on Relabel with the visible buttons, each counted and in the store;
(c) one example of each mechanism (the worst output under SA, EGM, CA and LD on Items).

Timings are not asserted here (see bench/bench_browser_jobs.py and docs/benchmarks.md).
"""

from __future__ import annotations

import sqlite3

import browser_jobs
import browser_support
import pytest

from empathy.evaluate import compute_metrics, text_features
from empathy.exports import table6_csv
from empathy.io import load_dataset
from empathy.items import item_table, term_column, worst_first
from empathy.paths import DEMO_DIR

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not browser_support.CHROMIUM.exists(),
                                 reason="needs Debian chromium at /usr/bin/chromium")]


@pytest.fixture(scope="module")
def reference():
    """What the jobs must find, computed with the package on the same files (no override yet)."""
    dataset = load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings*.csv")))
    features = text_features(dataset.outputs)
    return {"report": compute_metrics(dataset.outputs, dataset.ratings, features=features),
            "items": item_table(dataset.outputs, dataset.ratings, features)}


def test_a_worst_sa_item_of_the_worst_model(demo_app, page, reference):
    result = browser_jobs.job_worst_sa(page, demo_app["url"])
    judge = result.answer["judge"]
    table = reference["report"].table
    sa = table[(table["metric"] == "SA") & (table["scorer"] == judge)].set_index("model")["value"]
    assert result.answer["model"] == sa.idxmax()
    assert result.answer["sa_of_model"] == pytest.approx(sa.max())
    items = reference["items"]
    worst = worst_first(items[items["model"] == sa.idxmax()], term_column("SA", judge)).iloc[0]
    assert result.answer["item_id"] == worst["item_id"]
    # the downloaded Table 6 has the layout and the numbers of the package's export
    expected = table6_csv(table, reference["report"].signature).splitlines()[:2]
    assert [",".join(row) for row in result.answer["table6_header"]] == expected


def test_c_one_example_of_each_mechanism(demo_app, page, reference):
    result = browser_jobs.job_mechanisms(page, demo_app["url"])
    judge = result.answer["judge"]
    items = reference["items"]
    for metric in browser_jobs.MECHANISMS:
        column = "LD" if metric == "LD" else term_column(metric, judge)
        worst = worst_first(items, column).iloc[0]
        assert result.answer["examples"][metric]["item_id"] == worst["item_id"], metric
        assert result.answer["examples"][metric]["model"] == worst["model"], metric


def test_b_relabel_20_ca_items(demo_app, page):
    result = browser_jobs.job_relabel(page, demo_app["url"], 20)
    assert result.answer["last_count"] - result.answer["first_count"] == 20
    with sqlite3.connect(demo_app["folder"] / "overrides.sqlite") as connection:
        # one decision per output, each applied to the judges that rated it: count distinct outputs
        decided = connection.execute(
            "SELECT COUNT(DISTINCT item_id || '|' || model) FROM overrides WHERE dimension = 'ca' AND annotator = ?",
            (browser_jobs.ANNOTATOR,)).fetchone()[0]
    assert decided == 20
