"""Real-browser test of Relabel's audit order (issue 23): draw a random audit on the page, decide 20 drawn outputs by
key, and the corrected CA beside the queue moves to what the library computes from the store.

The demo's ``author`` labels play the humans (as in docs/statistics.md): each key is the author's CA label of the
output on screen when it went down. After 10 and after 20 keys, the table beside the queue (PPI++ per model: the
corrected value, the half-width of its interval, n_audit) must equal :func:`empathy.inference.ppi_estimates` on
the store's audit decisions (:func:`empathy.labels.audits.audit_decisions`), and it must have moved between the
two. Every decision in the store carries the design's mark, at the position its output holds in audit order.

Screenshots (the audit queue, and the Overview with error bars and the corrected column) go to a temporary
folder, or to ``$EMPATHY_SCREENSHOTS`` (``docs/screenshots`` for the committed ones). Skips without
``/usr/bin/chromium``.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
from browser_support import WAIT_MS, commit_name
from test_browser import CHROMIUM, _settle, _shot, _start, _stop
from test_browser_relabel import _wait_saved

from empathy.inference import ppi_estimates
from empathy.io import load_dataset
from empathy.labels.audits import audit_decisions, design_list, load_design
from empathy.labels.ledger import open_ledger
from empathy.labels.sqlite import OverrideStore
from empathy.paths import DEMO_DIR

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium at /usr/bin/chromium")]

#: The rows of the table beside the queue: the header's cells, then each body row's (index cells first).
TABLE_JS = """(column) => {
  for (const table of document.querySelectorAll('[data-testid="stTable"] table')) {
    const head = [...table.querySelectorAll('thead th')].map((c) => c.textContent.trim());
    if (!head.includes(column)) continue;
    return [...table.querySelectorAll('tbody tr')].map(
      (row) => Object.fromEntries([...row.cells].map((c, k) => [head[k], c.textContent.trim()])));
  }
  return null;
}"""


def _number(text: str) -> float:
    return float(text) if text.strip() else math.nan


def _corrected(tab, decided: int) -> dict[str, dict[str, float]]:
    """The corrected CA beside the queue once it counts ``decided`` audited outputs: model -> corrected, half-width
    (±) and n_audit, as the page shows them (the table is redrawn by the queue's fragment after the keys are
    saved: waited for, never read while the previous one stands)."""
    tab.wait_for_function(f"(n) => {{ const rows = ({TABLE_JS})('corrected');"
                          " return rows !== null && rows.reduce((s, r) => s + Number(r.n_audit), 0) === n; }",
                          arg=decided, timeout=WAIT_MS)
    rows = tab.evaluate(TABLE_JS, "corrected")
    return {row["model"]: {"corrected": _number(row["corrected"]), "half": _number(row["±"]),
                           "n_audit": _number(row["n_audit"])} for row in rows}


def _library(store: Path) -> tuple[dict[str, dict[str, float]], object, object]:
    """The same numbers from the library, on the store's decisions: model -> corrected, low, high, n_audit."""
    dataset = load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings_*.csv")))
    db = OverrideStore(store)
    name = str(db.fetch("SELECT DISTINCT dataset_id FROM audit_designs")[0][0])
    design = load_design(db, name, str(design_list(db, name)["digest"].iloc[0]))
    labels = audit_decisions(open_ledger(db, name, dataset.outputs, "latest").status.fresh, design, rule="latest")
    table = ppi_estimates(dataset.outputs, dataset.ratings, design, labels.decisions).table
    pooled = table[(table["task"] == "all") & (table["metric"] == "CA")]
    numbers = {row["model"]: {"corrected": row["ppi_value"], "half": (row["ppi_high"] - row["ppi_low"]) / 2,
                              "n_audit": float(row["n_audit"])} for row in pooled.to_dict("records")}
    return numbers, design, db.decisions(name)


def _same(page: dict[str, dict[str, float]], library: dict[str, dict[str, float]]) -> None:
    assert set(page) == set(library)
    for model, expected in library.items():
        for key, value in expected.items():
            shown = page[model][key]
            assert (math.isnan(shown) and math.isnan(value)) or shown == pytest.approx(round(value, 3), abs=5e-4), (
                model, key, shown, value)


class _Labels(dict):
    """The author's CA labels; an output the author left unlabelled is decided 1 (a human must decide something)."""

    def __missing__(self, key: tuple[str, str]) -> str:
        return "1"


def _press(tab, author: dict[tuple[str, str], str], count: int) -> list[tuple[str, str]]:
    """``count`` keys, each the author's label of the output on screen when it goes down, 150 ms apart."""
    pressed = []
    item = tab.locator('[data-testid="relabel-item"]')
    for _ in range(count):
        item.wait_for(state="visible", timeout=WAIT_MS)
        shown = (item.get_attribute("data-item"), item.get_attribute("data-model"))
        tab.keyboard.press(author[shown])
        pressed.append(shown)
        time.sleep(0.15)  # the key gap of the queue's other browser tests, not a wait for a result
    _wait_saved(tab)
    return pressed


def test_draw_an_audit_decide_20_by_key_and_the_corrected_ca_moves(tmp_path, browser):
    store = tmp_path / "overrides.sqlite"
    process, url = _start(store, tmp_path / "audit.log")
    context = browser.new_context(viewport={"width": 1440, "height": 1600})
    dataset = load_dataset(DEMO_DIR / "outputs.csv", sorted(DEMO_DIR.glob("ratings_*.csv")))
    ratings = dataset.ratings
    rows = ratings[(ratings["rater"] == "author") & (ratings["dimension"] == "ca") & ratings["value"].notna()]
    labels = {(str(i), str(m)): str(int(v)) for i, m, v in zip(rows["item_id"], rows["model"], rows["value"],
                                                              strict=True)}
    author = _Labels(labels)
    try:
        tab = context.new_page()
        tab.goto(f"{url}/Relabel")
        commit_name(tab, "auditor")  # the sidebar's one name box (a form: its button commits the name)
        tab.locator('[data-testid="relabel-item"]').wait_for(state="visible", timeout=WAIT_MS)
        tab.get_by_test_id("stRadioGroup").get_by_text("audit sample", exact=True).click()
        _settle(tab, "No audit of")
        for label, value in (("Outputs per model", "4"), ("Seed", "1")):
            field = tab.get_by_role("spinbutton", name=label)
            field.fill(value)
            field.press("Tab")
        tab.get_by_role("button", name="Draw and save the audit").click()
        _settle(tab, "Drew audit")
        assert "judge labels hidden" in tab.locator('[data-testid="relabel-item"]').inner_text()
        before = _corrected(tab, 0)
        assert all(math.isnan(row["corrected"]) and row["n_audit"] == 0 for row in before.values())

        first = _press(tab, author, 10)
        _settle(tab, "10 audit label(s)")
        middle = _corrected(tab, 10)
        expected, design, _ = _library(store)
        _same(middle, expected)
        assert sum(row["n_audit"] for row in middle.values()) == 10

        second = _press(tab, author, 10)
        _settle(tab, "20 audit label(s)")
        after = _corrected(tab, 20)
        expected, design, decided = _library(store)
        _same(after, expected)
        assert all(row["n_audit"] == 4 for row in after.values())  # every drawn output decided
        assert any(after[m]["corrected"] != middle[m]["corrected"] for m in after)  # the corrected CA moved
        assert any(after[m]["half"] != middle[m]["half"] for m in after)  # and its interval
        # the keys went to the drawn outputs in audit order, each saved with the design's mark at its position
        order = [(o.item_id, o.model) for o in design.outputs]
        assert first + second == order
        positions = {key: k for k, key in enumerate(order)}
        marks = decided.drop_duplicates(["item_id", "model"])
        assert len(marks) == 20 and (marks["audit_design"] == design.digest).all()
        assert all(positions[(i, m)] == p for i, m, p in zip(marks["item_id"], marks["model"], marks["audit_position"],
                                                             strict=True))
        # docs/statistics.md, *Small audits*: hazel's four audited labels agree with the judge, whose five other
        # labels are all 0: the corrected CA sits near 0, its interval widened to the four labels' exact one
        rated = ratings[(ratings["rater"] == "lexicon") & (ratings["dimension"] == "ca")]
        rated = rated[rated["model"] == "hazel"]
        judge = {str(i): float(v) for i, v in zip(rated["item_id"], rated["value"], strict=True)}
        audited = [i for i, m in order if m == "hazel"]
        assert len(audited) == 4 and all(float(author[(i, "hazel")]) == judge[i] for i in audited)
        assert len(judge) == 9 and all(v == 0 for i, v in judge.items() if i not in audited)
        assert after["hazel"]["corrected"] < 0.05 and 0.2 < after["hazel"]["half"] < 0.65
        assert not tab.locator("[data-testid='stException']").count()
        _shot(tab, "relabel_audit")

        # the Overview: error bars and the corrected column (a screenshot for docs/statistics.md)
        tab.locator('[data-testid="stSidebarNav"]').get_by_text("Overview", exact=True).click()
        _settle(tab, "and corrected by the audit")
        _settle(tab, "Error bars")
        # the intervals table, then the CA chart (its caption, under it, at the bottom of the view)
        for target, name in ((tab.get_by_role("heading", name="Values with 95 % intervals, and corrected by the "
                                                             "audit"), "overview_audit"),
                             (tab.get_by_text("The share of outputs", exact=False).first, "overview_audit_charts")):
            target.scroll_into_view_if_needed()
            tab.wait_for_timeout(1500)  # Plotly and the data grid draw after the script has finished
            _shot(tab, name)
    finally:
        context.close()
        _stop(process)
