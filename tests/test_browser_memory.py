"""In Chromium: an uploaded data set survives a reload (named in the URL, its files kept), a new tab is offered
it, and a link to a path never opened on this machine is asked about before anything is read."""

from __future__ import annotations

import browser_support
import pytest

from empathy.paths import DEMO_DIR

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not browser_support.CHROMIUM.exists(),
                                 reason="needs Debian chromium at /usr/bin/chromium")]


def _sidebar(page) -> str:
    return page.locator("[data-testid=stSidebar]").inner_text()


def test_an_upload_survives_a_reload_and_is_offered_in_a_new_tab(demo_app, browser):
    context = browser.new_context(viewport={"width": 1440, "height": 1200})
    page = context.new_page()
    page.set_default_timeout(browser_support.WAIT_MS)
    page.goto(f"{demo_app['url']}/Data")
    browser_support.settle(page, "Human overrides ledger")
    page.get_by_text("Upload files", exact=True).click()
    browser_support.settle(page, "Outputs file")
    # one uploader after the other, as a person would: files given to the second while the first one's rerun
    # was still drawing were dropped in a CI run (the page then said "with 0 ratings file(s)")
    browser_support.upload(page, "Outputs file", [DEMO_DIR / "outputs.csv"])
    browser_support.settle(page, "Ready to load: outputs.csv with 0 ratings file(s).")
    browser_support.upload(page, "Ratings files", sorted(DEMO_DIR.glob("ratings*.csv")))
    # the server's own word that both uploads arrived: a click before would race the ratings' rerun
    browser_support.settle(page, "Ready to load: outputs.csv with 2 ratings file(s).")
    page.get_by_role("button", name="Load the uploaded files").click()
    browser_support.settle(page, "Loaded outputs.csv with 2 ratings file(s)")
    assert "data=upload%3A" in page.url
    saved = list((demo_app["folder"] / "settings" / "uploads").glob("*/manifest.json"))
    assert len(saved) == 1
    page.reload()
    browser_support.settle(page, "Human overrides ledger")
    assert "Data: outputs.csv" in _sidebar(page) and "upload:outputs.csv" in _sidebar(page)
    context.close()

    fresh = browser.new_context(viewport={"width": 1440, "height": 1200})
    tab = fresh.new_page()
    tab.set_default_timeout(browser_support.WAIT_MS)
    tab.goto(demo_app["url"])
    browser_support.settle(tab, "Reopen the last data set")
    assert "Data: demo data" in _sidebar(tab)  # a new tab without a link starts on the demo
    tab.get_by_role("button", name="Reopen the last data set").click()
    browser_support.settle(tab, "Reopened the upload")
    assert "data=upload%3A" in tab.url and "upload:outputs.csv" in _sidebar(tab)
    fresh.close()


def test_a_link_to_an_unknown_path_is_asked_about(demo_app, browser, tmp_path):
    secret = tmp_path / "outputs.csv"
    secret.write_text((DEMO_DIR / "outputs.csv").read_text(encoding="utf-8"), encoding="utf-8")
    context = browser.new_context(viewport={"width": 1440, "height": 1200})
    page = context.new_page()
    page.set_default_timeout(browser_support.WAIT_MS)
    page.goto(f"{demo_app['url']}/Overview?data={secret}")
    browser_support.settle(page, "never opened on this machine")
    assert "Data: demo data" in _sidebar(page)  # nothing of the link was read yet
    page.get_by_role("button", name="Open it").click()
    browser_support.settle(page, "Loaded")
    assert str(secret) in _sidebar(page).replace("\n", "")
    context.close()
