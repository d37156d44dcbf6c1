"""Real browser: the sidebar's count of human decisions follows Relabel's keys (issue 25).

A key reruns the queue's fragment alone; the sidebar is outside it. The fragment redraws the count in the sidebar's
place (:func:`empathy_app.sidebar.show_decision_count`), so after the keys are saved the sidebar says as many
decisions as the store holds, without a run of the whole page (on the tree before it stayed at 0 until one).
Waits are on conditions; the keys go down as fast as the browser takes them. Skips without Chromium.
"""

from __future__ import annotations

import sqlite3

import pytest
from browser_support import WAIT_MS
from test_browser import CHROMIUM, _start, _stop
from test_browser_relabel import RECORDER, _open_relabel, _wait_saved, generated_data

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium at /usr/bin/chromium")]

KEYS = 6

SIDEBAR_COUNT = """() => {
  const bar = document.querySelector('[data-testid="stSidebar"]');
  const found = bar && bar.innerText.match(/Human decisions: (\\d+)/g);
  return found ? found.join('|') : null;
}"""


def _decisions(store) -> int:
    """Human decisions in the store: one per key (a key decides both judges' labels of its output)."""
    with sqlite3.connect(store) as connection:
        return connection.execute("SELECT COUNT(*) FROM (SELECT DISTINCT item_id, model, dimension, annotator "
                                  "FROM overrides)").fetchone()[0]


def test_the_sidebar_count_follows_the_keys(tmp_path, browser):
    folder = generated_data(tmp_path / "data", models=2, items=10)
    store = tmp_path / "overrides.sqlite"
    process, url = _start(store, tmp_path / "count.log")
    context = browser.new_context(viewport={"width": 1440, "height": 1400})
    context.add_init_script(RECORDER)
    try:
        tab = _open_relabel(context, url, folder, "counter")
        assert tab.evaluate(SIDEBAR_COUNT) == "Human decisions: 0"
        tab.evaluate("() => { document.activeElement && document.activeElement.blur(); }")
        for k in range(KEYS):
            tab.keyboard.press("1" if k % 2 else "0")
        _wait_saved(tab)
        assert _decisions(store) == KEYS
        try:
            tab.wait_for_function(f"() => ({SIDEBAR_COUNT})() === 'Human decisions: {KEYS}'", timeout=WAIT_MS)
        except Exception as error:  # say what the sidebar shows instead
            raise AssertionError(f"the sidebar says {tab.evaluate(SIDEBAR_COUNT)!r} after {KEYS} saved keys") from error
        # one undo (U): one decision fewer, still by the fragment alone
        tab.keyboard.press("u")
        tab.wait_for_function(f"() => ({SIDEBAR_COUNT})() === 'Human decisions: {KEYS - 1}'", timeout=WAIT_MS)
        _wait_saved(tab)
        assert _decisions(store) == KEYS - 1
        assert not tab.locator("[data-testid='stException']").count()
    finally:
        context.close()
        _stop(process)
