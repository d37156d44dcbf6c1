"""Screenshot one page of the app in headless chromium (Playwright), on the demo data.

Serves ``streamlit run app.py`` on a free port with a temporary ``EMPATHY_STORE``, opens ``/PAGE``, waits until
the text ``--wait-for`` is visible and the script has stopped running, and saves the page's main column from
the ``--from-heading`` heading to just above the ``--to-heading`` one (or the whole viewport, sidebar included,
when no heading is given).

Usage::

    python scripts/screenshot_page.py Disagreement docs/screenshots/disagreement.png \\
        --wait-for "Slices that depart most" --from-heading "The mechanism x disagreement map" \\
        --to-heading "Judge vs human, per model"

The Disagreement screenshot of ``docs/explanation/disagreement.md`` is made with exactly that command; the
judge report's checks (``docs/judge-report.md``) with::

    python scripts/screenshot_page.py Judge_report docs/screenshots/judge-report-checks.png \\
        --click "Repeatability, order effect and probes" --click "Run the lexicon judge's checks" \\
        --wait-for "failing outputs" --from-heading "Judge report" \\
        --height 1800
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 1440


def _settle(page, text: str, timeout: float = 240_000) -> None:
    page.get_by_text(text, exact=False).first.wait_for(state="visible", timeout=timeout)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
        " || !document.querySelector('[data-testid=\"stStatusWidget\"]').innerText.includes('Running')",
        timeout=timeout)
    page.wait_for_timeout(3000)  # data grids and Plotly charts draw after the script has finished


def _serve(folder: Path) -> tuple[subprocess.Popen, str]:
    """The app on a free port with a store in ``folder`` (tests/browser_support.start_app)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from browser_support import start_app

    return start_app({"EMPATHY_STORE": str(folder / "overrides.sqlite")}, folder / "streamlit.log")


def _clip(page, from_heading: str | None, to_heading: str | None) -> dict | None:
    """The page's region from one heading to just above another, in viewport coordinates (None: no clip)."""
    if from_heading is None:
        return None
    start = page.get_by_role("heading", name=from_heading).first
    start.evaluate("e => e.scrollIntoView({block: 'start'})")  # Streamlit scrolls its main section
    page.wait_for_timeout(1000)
    top = start.bounding_box()["y"] - 10
    if to_heading is not None:
        bottom = page.get_by_role("heading", name=to_heading).first.bounding_box()["y"] - 10
    else:
        bottom = page.viewport_size["height"]
    # the main column only: the sidebar holds this machine's paths (the data set, the store), not the page
    left = page.locator('[data-testid="stMain"]').first.bounding_box()["x"]
    return {"x": left, "y": max(0.0, top), "width": WIDTH - left, "height": bottom - max(0.0, top)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", help="the page's URL path, e.g. Disagreement")
    parser.add_argument("out", type=Path, help="the PNG to write")
    parser.add_argument("--wait-for", default=None, help="text that shows the page has drawn")
    parser.add_argument("--from-heading", default=None, help="clip from this heading")
    parser.add_argument("--to-heading", default=None, help="clip to just above this heading")
    parser.add_argument("--click", action="append", default=[],
                        help="click the text first (an expander, a toggle); repeat for several, in order")
    parser.add_argument("--height", type=int, default=2400, help="viewport height in pixels")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="empathy-page-shot-"))
    process, url = _serve(folder)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = browser.new_context(viewport={"width": WIDTH, "height": args.height}).new_page()
            page.goto(f"{url}/{args.page}")
            for text in args.click:
                _settle(page, text)
                page.get_by_text(text, exact=False).first.click()
            _settle(page, args.wait_for or args.from_heading or args.page)
            page.mouse.move(5, 5)
            page.screenshot(path=str(args.out), clip=_clip(page, args.from_heading, args.to_heading))
            browser.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
    print(args.out)


if __name__ == "__main__":
    main()
