"""Real-browser tests of the Relabel queue (issue 14): keys pressed faster than the server answers, and two
annotators at once.

* 200 keyboard decisions, 150 ms apart, on a generated data set of 250 CA outputs: every key is recorded for the
  output that was on screen when it went down (read in the browser, in a keydown listener that runs before the
  page's), none lost, none duplicated, read back from the SQLite store and its audit trail.
* Two browser contexts (two sessions, two annotators) decide the same 20 outputs differently: 40 human decisions
  kept, human-human agreement shown, the 20 conflicts listed for adjudication, and the second annotator warned
  that the first decided those outputs in the meantime.

Waits are on conditions with generous timeouts (the machine may be loaded); the only fixed sleeps are the
150 ms between keys the issue asks for. Skips when ``/usr/bin/chromium`` is absent.
"""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path

import pandas as pd
import pytest
from browser_support import WAIT_MS, commit_name
from test_browser import CHROMIUM, _settle, _start, _stop

from empathy_app.keyqueue import FLUSH_MS

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium at /usr/bin/chromium")]

KEYS = 200
GAP_S = 0.150
# Records, in the browser, the output on screen when each key goes down: installed before the page's scripts,
# on window in the capture phase, so it runs before the queue's own listener moves to the next output.
RECORDER = """
window.__keys = [];
window.addEventListener('keydown', (ev) => {
  const shown = document.querySelector('[data-testid="relabel-item"]');
  window.__keys.push({key: ev.key, item: shown ? shown.getAttribute('data-item') : null,
                      model: shown ? shown.getAttribute('data-model') : null});
}, true);
"""


def generated_data(folder: Path, *, models: int = 5, items: int = 50, judges: int = 2, seed: int = 7) -> Path:
    """``models`` x ``items`` outputs with short distinct texts, each rated on CA by ``judges`` LLM judges."""
    import numpy as np

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"m{k:02d}" for k in range(models)]
    rows = [{"item_id": f"i{i:03d}", "model": m, "task": "counseling",
             "reference": f"Case {i}: my sister has not called me back in weeks and I feel alone.",
             "generation": f"Reply {m}-{i}: that sounds hard; maybe write to her first."}
            for m in names for i in range(items)]
    pd.DataFrame(rows).to_csv(folder / "outputs.csv", index=False)
    ratings = [{"item_id": r["item_id"], "model": r["model"], "rater": f"judge{j}", "dimension": "ca",
                "value": int(rng.integers(0, 2)), "rater_kind": "llm", "reason": "", "signature": f"judge{j}-v1"}
               for j in range(judges) for r in rows]
    pd.DataFrame(ratings).to_csv(folder / "ratings.csv", index=False)
    return folder


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield instance
        instance.close()


def _open_relabel(context, url: str, folder: Path, annotator: str):
    """A tab of ``context`` with ``folder`` loaded on the Data page and ``annotator`` committed on Relabel."""
    tab = context.new_page()
    tab.goto(f"{url}/Data")
    _settle(tab, "Human overrides ledger")
    tab.get_by_text("Path on this machine", exact=True).click()
    box = tab.get_by_label("Folder or outputs file")
    box.wait_for(state="visible", timeout=WAIT_MS)
    box.fill(str(folder))
    box.press("Tab")
    tab.get_by_role("button", name="Load from path").click()
    _settle(tab, "ratings file(s)")
    # the sidebar link keeps the session (a new URL would start a new one, with the demo data)
    tab.locator('[data-testid="stSidebarNav"]').get_by_text("Relabel", exact=True).click()
    # the sidebar's one name box; the name another tab of this machine committed is remembered: changed first
    commit_name(tab, annotator)
    tab.locator('[data-testid="relabel-item"]').wait_for(state="visible", timeout=WAIT_MS)
    return tab


def _wait_saved(tab, timeout_ms: float = 300_000) -> None:
    """Until the queue says every key it took is saved (acknowledged by the server)."""
    tab.wait_for_function(
        "() => { const s = document.querySelector('[data-testid=\"relabel-queue-status\"]');"
        " return s && s.getAttribute('data-pending') === '0'; }", timeout=timeout_ms)


def _decisions(store: Path) -> pd.DataFrame:
    with sqlite3.connect(store) as connection:
        return pd.read_sql_query("SELECT item_id, model, rater, dimension, value, annotator FROM overrides",
                                 connection)


def _audit(store: Path) -> pd.DataFrame:
    with sqlite3.connect(store) as connection:
        return pd.read_sql_query("SELECT item_id, model, rater, action, annotator, new_value FROM audit", connection)


def test_200_keys_150ms_apart_each_recorded_for_the_output_on_screen(tmp_path, browser):
    folder = generated_data(tmp_path / "data")
    store = tmp_path / "overrides.sqlite"
    process, url = _start(store, tmp_path / "keys.log")
    context = browser.new_context(viewport={"width": 1440, "height": 1400})
    context.add_init_script(RECORDER)
    try:
        tab = _open_relabel(context, url, folder, "speedy")
        pattern = [("1" if (k * 7) % 3 else "0") for k in range(KEYS)]  # both values, irregularly
        live: list = []
        pressed = _press_all(tab, pattern, live)
        assert [p["key"] for p in pressed] == pattern
        missing = [k for k, p in enumerate(pressed) if not p["item"]]
        status = tab.locator("[data-testid='relabel-queue-status']").inner_text()
        assert not missing, f"keys {missing} went down with no output on screen; the queue says: {status}"
        on_screen = [(p["item"], p["model"], float(p["key"])) for p in pressed]
        assert len(set((i, m) for i, m, _ in on_screen)) == KEYS  # each key on its own output
        # keys 150 ms apart share the server's runs: sent at most once per keyqueue.FLUSH_MS (30 s of keys: about
        # 30 sends at 1 s; never one per key)
        sends = tab.evaluate("() => Object.values(globalThis.__empathyRelabelQueue.queues)"
                             ".reduce((n, q) => n + (q.sends || 0), 0)")
        assert 0 < sends <= KEYS * GAP_S * 1000 / FLUSH_MS + 10, sends
        decided = _decisions(store)
        assert set(decided["annotator"]) == {"speedy"} and set(decided["dimension"]) == {"ca"}
        # every judge of each output carries the key's value: one row per (output, judge), nothing else
        per_output = decided.groupby(["item_id", "model"])["value"].agg(["min", "max", "size"])
        assert len(per_output) == KEYS
        assert (per_output["size"] == 2).all()
        expected = {(i, m): v for i, m, v in on_screen}
        got = {key: row["min"] for key, row in per_output.iterrows()}
        assert got == expected
        assert (per_output["min"] == per_output["max"]).all()
        sets = _audit(store)
        sets = sets[sets["action"] == "set"]
        assert len(sets) == 2 * KEYS  # no key applied twice (a repeat would add audit rows)
        assert not tab.locator("[data-testid='stException']").count()
        assert not tab.get_by_text(re.compile("^Refused")).count()
        # the live CA (judge0) the browser drew at the last key, with the keys the server had not saved yet,
        # is the server's recomputation once all are saved, and both are CA of the store's labels
        (pending, drawn), (_, confirmed) = live
        assert drawn == confirmed, (pending, drawn, confirmed)
        labels = pd.read_csv(folder / "ratings.csv", dtype={"item_id": str, "model": str})
        labels = labels[labels["rater"] == "judge0"].set_index(["item_id", "model"])["value"].astype(float)
        for (item, model), value in got.items():
            labels[(item, model)] = value
        ca = labels.groupby(level="model").mean()
        # rank 1 = the least conflict avoidance (the one rank convention): lowest first, ties by model
        expected_rows = sorted(((round(v, 4), m) for m, v in ca.items()), key=lambda r: (r[0], r[1]))
        assert [(float(row[2]), row[1].replace(" ◀", "")) for row in confirmed] == expected_rows
    finally:
        context.close()
        _stop(process)


LIVE_JS = """() => { const live = document.querySelector('[data-testid="relabel-live"]');
  return live ? [Number(live.getAttribute('data-pending')),
                 [...live.querySelectorAll('tbody tr')].map((r) => [...r.cells].map((c) => c.textContent))]
              : null; }"""


def _press_all(tab, keys: list[str], live: list | None = None) -> list[dict]:
    """Press ``keys`` 150 ms apart; wait until all are saved; return what the recorder saw on screen.

    ``live``: gets the live metric's table (pending keys, rows) right after the last key and once all are saved."""
    tab.evaluate("() => { window.__keys = []; document.activeElement && document.activeElement.blur(); }")
    start = time.perf_counter()
    for k, key in enumerate(keys):
        delay = start + k * GAP_S - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        tab.keyboard.press(key)
    if live is not None:
        live.append(tab.evaluate(LIVE_JS))
    _wait_saved(tab)
    if live is not None:
        tab.wait_for_function("() => document.querySelector('[data-testid=\"relabel-live\"]')"
                              ".getAttribute('data-pending') === '0'", timeout=300_000)
        live.append(tab.evaluate(LIVE_JS))
    return tab.evaluate("() => window.__keys")


def test_two_sessions_decide_the_same_20_outputs_differently(tmp_path, browser):
    folder = generated_data(tmp_path / "data", models=2, items=10)
    store = tmp_path / "overrides.sqlite"
    process, url = _start(store, tmp_path / "two.log")
    contexts = [browser.new_context(viewport={"width": 1440, "height": 1400}) for _ in range(2)]
    try:
        for context in contexts:
            context.add_init_script(RECORDER)
        # both sessions show their queue before either decides anything
        ann, bob = (_open_relabel(c, url, folder, name) for c, name in zip(contexts, ("ann", "bob"), strict=True))
        seen_ann = _press_all(ann, ["1"] * 20)
        seen_bob = _press_all(bob, ["0"] * 20)
        outputs = {(p["item"], p["model"]) for p in seen_ann}
        assert len(outputs) == 20 and {(p["item"], p["model"]) for p in seen_bob} == outputs
        decided = _decisions(store)
        people = decided.drop_duplicates(["item_id", "model", "annotator"])
        assert len(people) == 40  # 40 human decisions kept: nobody overwrote the other
        assert sorted(people.groupby("annotator")["value"].agg(lambda v: sorted(set(v))).items()) == [
            ("ann", [1.0]), ("bob", [0.0])]
        from empathy.labels.sqlite import OverrideStore
        from empathy.review import human_agreement

        pairs = human_agreement(OverrideStore(store).decisions()).pairs  # what the page's table shows
        assert pairs[["rater_a", "rater_b", "n", "percent_agreement"]].values.tolist() == [["ann", "bob", 20, 0.0]]
        # bob is told that ann decided these outputs after they were shown to him
        bob.get_by_text("in the meantime", exact=False).first.wait_for(state="visible", timeout=WAIT_MS)
        # a full run of the page (via the sidebar, same session) lists agreement and conflicts
        nav = bob.locator('[data-testid="stSidebarNav"]')
        nav.get_by_text("Data", exact=True).click()
        _settle(bob, "Human overrides ledger")
        nav.get_by_text("Relabel", exact=True).click()
        _settle(bob, "Several annotators")
        bob.get_by_text("Several annotators: agreement and adjudication", exact=True).click()
        bob.get_by_text("Human-human agreement on the 20 outputs decided by two or more annotators",
                        exact=False).first.wait_for(state="visible", timeout=WAIT_MS)
        # the conflicts line is drawn after the agreement table, possibly in a later delta: wait, don't sample
        bob.get_by_text("20 outputs where annotators disagree on ca",
                        exact=False).first.wait_for(state="visible", timeout=WAIT_MS)
        assert not bob.locator("[data-testid='stException']").count()
    finally:
        for context in contexts:
            context.close()
        _stop(process)
