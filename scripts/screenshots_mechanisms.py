"""Screenshots of the four mechanisms in the text (issue 16), on the demo data.

Serves ``streamlit run app.py`` on a free port with a temporary ``EMPATHY_STORE`` and, in headless Debian
chromium (Playwright), opens Inspect on one output per mechanism and saves the side-by-side view (note, legend,
both texts with their highlights and scores, the per-judge table) clipped from the page:

* ``mechanism_egm.png``: news-07 / gorse, disturbing detail sanitised away (u_ref 4-5 vs u_gen 0);
* ``mechanism_egm_added.png``: news-05 / gorse, graphic detail added (author u 3 vs 6, lexicon 2 vs 5);
* ``mechanism_sa.png``: news-08 / larch, affect flattened in the text (the lexicon's E 0.603 vs 0.210: the SA
  marks of both sides and the "lost:" line);
* ``mechanism_ld.png``: news-01 / larch, nominalisations and agentless passives;
* ``mechanism_ca.png``: co-05 / sorrel, the CA cues behind the lexicon's label 1 (solution-giving, reassurance)
  on the response and the client's tension on the narrative;
* ``mechanism_sa_ca.png``: co-03 / fennel, both at once: affect dropped (E 0.611 vs 0.259) and solution-giving;
* ``items_mechanisms.png``: the Items page's row view of news-05 / gorse (the same side by side);
* ``relabel_mechanisms.png``: the Relabel key queue on CA, its first output with all four mechanisms' marks;
* ``exhibit_presentation.png``: the Exhibits page's Presentation tab (the sidebar hidden), the curated CA exhibit;
* ``overview_1400.png``: the Overview at 1400 px wide (every metric column visible);
* ``keys_help.png``: the keyboard help opened with ``?`` on Inspect;
* ``items.png``: the Items page as it opens (the table worst first, the first row open under it);
* ``progress_bar.png``: the Overview on a second app whose distancing cache is empty, while its first text
  analysis runs (the bar with its counts and ETA).

Usage: ``python scripts/screenshots_mechanisms.py [OUT_DIR]`` (default ``docs/screenshots``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from browser_support import ROOT, commit_name, running_app, screenshot_session, settle  # noqa: E402

SHOTS = (("mechanism_egm.png", "news", "gorse", "news-07 · gorse"),
         ("mechanism_egm_added.png", "news", "gorse", "news-05 · gorse"),
         ("mechanism_sa.png", "news", "larch", "news-08 · larch"),
         ("mechanism_ld.png", "news", "larch", "news-01 · larch"),
         ("mechanism_ca.png", "counseling", "sorrel", "co-05 · sorrel"),
         ("mechanism_sa_ca.png", "counseling", "fennel", "co-03 · fennel"))


def _settle(page, text: str, timeout: float = 120_000) -> None:
    settle(page, text, timeout, fresh=False, pause_ms=1200)


def _choose(page, key: str, value: str) -> None:
    page.locator(f".st-key-{key}").get_by_role("combobox").click()
    page.keyboard.type(value)
    page.keyboard.press("Enter")
    _settle(page, "Judges' labels for this output")


def _clip_mechanisms(page, path: Path) -> None:
    """The part of the page from the row's note to the per-judge table under the texts."""
    page.wait_for_timeout(2500)  # the data grids draw (and grow to their rows) after the script has finished
    # Streamlit scrolls its main section, not the window: bring the view to the top of the viewport first
    page.evaluate("() => document.querySelector('.ld-legend').scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    box = page.evaluate("""() => {
        const legend = document.querySelector('.ld-legend').getBoundingClientRect();
        const frames = [...document.querySelectorAll('[data-testid="stDataFrame"]')];
        const below = frames.map(f => f.getBoundingClientRect()).filter(r => r.top > legend.top)[0];
        return {top: Math.max(0, legend.top - 70), bottom: below.bottom + 10};
    }""")
    page.screenshot(path=str(path), clip={"x": 0, "y": box["top"], "width": 1440, "height": box["bottom"] - box["top"]})


def _relabel(page, path: Path) -> None:
    """The key queue on CA (the default dimension) after committing an annotator name: its first output."""
    page.goto(page.url.split("/Items")[0] + "/Relabel")
    _settle(page, "Annotator")
    commit_name(page, "screenshots")
    page.get_by_test_id("relabel-item").wait_for(state="visible", timeout=120_000)
    _settle(page, "raters say")
    page.mouse.move(5, 5)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(path))


def _presentation(page, path: Path) -> None:
    """The curated exhibits pinned, the Presentation tab open at the CA exhibit (the third): no sidebar."""
    page.goto(page.url.split("/Relabel")[0] + "/Exhibits")
    _settle(page, "Ranking fragility")
    page.get_by_role("button", name="Pin the demo's curated exhibits").click()
    _settle(page, "news-07")
    page.get_by_role("tab", name="Presentation").click()
    _settle(page, "Exhibit 1 of")
    for _ in range(2):
        page.get_by_role("button", name="Next ▶").click()
        _settle(page, None)
    _settle(page, "Exhibit 3 of")
    page.mouse.move(5, 5)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(path), full_page=False)


def _progress_bar(browser, path: Path) -> None:
    """The Overview of a fresh app (empty distancing cache) while the first text analysis runs: the bar."""
    folder = Path(tempfile.mkdtemp(prefix="empathy-progress-shot-"))
    env = {"EMPATHY_STORE": str(folder / "overrides.sqlite"), "EMPATHY_CACHE_DIR": str(folder / "cache"),
           "EMPATHY_SETTINGS": str(folder / "app-settings.json")}
    with running_app(env, folder / "streamlit.log") as url:
        page = browser.new_context(viewport={"width": 1440, "height": 700}).new_page()
        page.goto(f"{url}/Overview")
        # the bar's text counts the parsed texts; wait until 20-99 % are done: the ETA of the first few is wild
        page.get_by_text("Analysing the texts").first.wait_for(state="visible", timeout=120_000)
        page.wait_for_function("""() => [...document.querySelectorAll('[data-testid="stProgress"]')]
            .some(bar => /\\(([2-9]\\d)%\\)/.test(bar.innerText))""", timeout=300_000)
        page.mouse.move(5, 5)
        page.screenshot(path=str(path))


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with screenshot_session("empathy-mechanism-shots-", width=1440, height=1800) as (url, browser, page):
        page.goto(f"{url}/Inspect")
        _settle(page, "Judges' labels for this output")
        for name, task, model, output in SHOTS:
            _choose(page, "inspect_task", task)
            _choose(page, "inspect_model", model)
            _choose(page, "_w_inspect_pick", output)
            page.mouse.move(5, 5)
            _clip_mechanisms(page, out / name)
        page.get_by_role("heading", name="Inspect").first.click()  # focus on the page, not a field
        page.keyboard.press("?")
        page.get_by_text("what it does").wait_for(state="visible", timeout=30_000)
        page.wait_for_timeout(800)
        page.screenshot(path=str(out / "keys_help.png"))
        page.keyboard.press("Escape")

        page.goto(f"{url}/Items")
        _settle(page, "One output")
        page.locator(".st-key-items_pick").get_by_role("combobox").click()
        page.keyboard.type("news-05 · gorse")
        page.keyboard.press("Enter")
        _settle(page, "One output")
        page.mouse.move(5, 5)
        _clip_mechanisms(page, out / "items_mechanisms.png")

        page.goto(f"{url}/Items")
        _settle(page, "One output")
        page.mouse.move(5, 5)
        page.wait_for_timeout(2500)  # the data grid draws after the script has finished
        page.screenshot(path=str(out / "items.png"))

        _relabel(page, out / "relabel_mechanisms.png")
        _presentation(page, out / "exhibit_presentation.png")

        wide = browser.new_context(viewport={"width": 1400, "height": 1100}).new_page()
        wide.goto(f"{url}/Overview")
        _settle(wide, "Reproducibility signature")
        wide.locator("[data-testid='stDataFrame'] canvas").first.wait_for(state="visible", timeout=60_000)
        wide.wait_for_timeout(4000)  # the data grids draw after the script has finished
        wide.screenshot(path=str(out / "overview_1400.png"))
        _progress_bar(browser, out / "progress_bar.png")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots")
