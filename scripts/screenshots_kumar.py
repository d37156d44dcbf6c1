"""Screenshots of the app on the Kumar et al. (2025) import: 8_kumar_data.png and 9_kumar_workbench.png.

Serves ``streamlit run app.py`` on a free port with a temporary ``EMPATHY_STORE``, chooses the Kumar source on the
Data page (import report open), relabels six of gpt's EPITOME ``level_emotional_reactions`` ratings to the experts'
rounded mean through the Relabel page's buttons, and shows gpt's agreement with ``panel:experts`` on the Workbench.
Needs ``../shared/datasets/kumar2025-empathic-communication``, Playwright and ``/usr/bin/chromium``::

    python scripts/screenshots_kumar.py [OUT_DIR]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from browser_support import ROOT, screenshot_session, settle  # noqa: E402

DIMENSION = "level_emotional_reactions"


def _settle(page, text: str, timeout: float = 120_000) -> None:
    settle(page, text, timeout, fresh=False, pause_ms=1500)


def _choose(page, label: str, value: str) -> None:
    page.get_by_role("combobox", name=re.compile(label)).click()
    page.keyboard.type(value)
    page.keyboard.press("Enter")
    page.wait_for_timeout(1500)


def _nav(page, name: str) -> None:
    page.locator("[data-testid='stSidebarNav']").get_by_text(name, exact=True).click()
    _settle(page, "Include human overrides")


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with screenshot_session("empathy-kumar-shots-", width=1440, height=1900) as (url, _browser, page):
        page.goto(f"{url}/Data")
        _settle(page, "Human overrides ledger")
        page.get_by_text("Kumar et al. 2025 (expert").click()
        _settle(page, "Import and load")
        page.get_by_role("button", name="Import and load").click()
        _settle(page, "Loaded the Kumar")
        page.get_by_text("Import report:").click()
        page.wait_for_timeout(1500)
        page.screenshot(path=str(out / "8_kumar_data.png"), full_page=True)

        box = page.get_by_label("Annotator name")
        box.fill("dana")
        box.press("Enter")
        page.wait_for_timeout(1000)
        _nav(page, "Relabel")
        _choose(page, "Dimension to relabel", DIMENSION)
        _choose(page, "Apply each decision to", "gpt")
        _settle(page, "judges say")
        for _ in range(6):
            said = page.get_by_text("judges say").first.inner_text()
            experts = [float(v) for v in re.findall(r"expert\d: ([\d.]+)", said)]
            level = int(sum(experts) / len(experts) + 0.5)  # the experts' consensus, rounded half up
            page.get_by_role("button", name=re.compile(rf"^{level}\b")).first.click()
            _settle(page, "Saved (change #")

        _nav(page, "Workbench")
        _choose(page, "Dimension", DIMENSION)
        _settle(page, "Agreement with a reference")
        page.get_by_role("heading", name="Agreement workbench").click()  # no focus ring in the picture
        page.mouse.move(1430, 1890)  # nor a hover anchor beside the title
        page.wait_for_timeout(2000)
        page.screenshot(path=str(out / "9_kumar_workbench.png"), full_page=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots")
