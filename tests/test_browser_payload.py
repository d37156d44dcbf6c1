"""Real-browser test: a data set made of injection payloads, loaded by path and shown on every page, renders inert.

Model, rater, item and task names, texts, reasons and the ``conversation`` column hold Streamlit Markdown
(``:blue[M]**m**``), a remote Markdown image and link pointing at a small HTTP server this test runs (and
counts requests on), an inline-styled ``<span style="font-size:60px">``, an ``<img ... onerror=...>``,
KaTeX (``$x^2$``) and a spreadsheet formula. The app is started with its own ``streamlit run`` server
(defaults from ``.streamlit/config.toml``, so bound to 127.0.0.1), the data set is loaded through the Data
page's path box and every page of the app's navigation (``empathy_app.frame.navigation``, which ``app.py``
serves, so a new page is included without editing this test) is visited by clicking the sidebar (one
session). After each page: no request reached the payload host, the browser requested nothing outside
127.0.0.1 (the favicon is the app's own), no element is drawn at 60px, no ``<img>``/link points at the payload
host, no KaTeX or bold payload formed, no dialog opened, no exception. A decision on Relabel puts the payload
names into the "Saved (change #N)" message; Overview's standard-metric scatter labels points with them; an
output pinned on Inspect is presented on the Exhibits page; Items sorts by the judge whose name holds the
image and the formula; Disagreement maps the judges' splits over the payload task names.

No fixed sleeps: every wait is for a condition, with generous timeouts (the machine may be loaded).
Screenshots go to ``$EMPATHY_SCREENSHOTS`` when set, else a temporary folder.
"""

from __future__ import annotations

import http.server
import os
import re
import threading
import urllib.parse
import urllib.request
from pathlib import Path

import pandas as pd
import pytest
from browser_support import CHROMIUM, IDLE_JS, ROOT, commit_name, follow_runs, rerun_after, settle, start_app, stop_app

TIMEOUT = 240_000  # ms; the first visit of Overview parses every text with spaCy

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium at /usr/bin/chromium")]


# ------------------------------------------------------------------------------------------ payload host

class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        type(self).hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:  # quiet
        pass


@pytest.fixture(scope="module")
def payload_host():
    handler = type("Handler", (_Counter,), {"hits": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield {"port": server.server_address[1], "hits": handler.hits}
    server.shutdown()
    server.server_close()


def payloads(port: int) -> dict[str, str]:
    host = f"http://127.0.0.1:{port}"
    return {
        "directive": ":blue[M]**m**",
        "image": f"![r]({host}/x.png)",
        "link": f"[click]({host}/link)",
        "span": '<span style="font-size:60px;color:red">BIG</span>',
        "img": f"<img src={host}/y.png onerror=alert(1)>",
        "katex": "$x^2$",
        "formula": f'=HYPERLINK("{host}/f","go")',
    }


def write_payload_data(folder: Path, port: int) -> Path:
    """3 models x 4 items, two judges rating the paper's five dimensions, every name and text a payload."""
    p = payloads(port)
    models = [f"{p['directive']} {p['image']}", p["span"], f"{p['img']} {p['katex']}"]
    items = [f"i1 {p['katex']}", f"i2 {p['image']}", f"i3 {p['span']}", p["formula"]]
    tasks = [p["directive"], "counseling"]
    raters = [f"judge {p['span']}", f"{p['formula']} {p['directive']} {p['image']}"]
    every = " ".join(p.values())
    conversation = "\n".join([f"Seeker: I lost my job {p['image']}", f"Supporter: {p['directive']} {p['link']}",
                              f"Seeker: {p['span']} {p['katex']}", f"Supporter: {p['img']}"])
    rows = []
    for m, model in enumerate(models):
        for k, item in enumerate(items):
            rows.append({"item_id": item, "model": model, "task": tasks[k % 2],
                         "reference": f"My brother was badly hurt in the crash. {every} I feel terrible.",
                         "generation": f"It is understood that an incident occurred ({m}). {every} Support exists.",
                         "conversation": conversation})
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / "outputs.csv", index=False)
    ratings = []
    for j, rater in enumerate(raters):
        for m, model in enumerate(models):
            for k, item in enumerate(items):
                values = {"e_ref": (k + 1) / 5, "e_gen": ((m + j + k) % 4) / 5, "u_ref": k + 1, "u_gen": (m + j) % 3,
                          "ca": (m + k + j) % 2}
                for dimension, value in values.items():
                    ratings.append({"item_id": item, "model": model, "rater": rater, "dimension": dimension,
                                    "value": value, "rater_kind": "llm", "reason": every, "signature": p["formula"]})
    pd.DataFrame(ratings).to_csv(folder / "ratings_payload.csv", index=False)
    return folder


# ---------------------------------------------------------------------------------------------- the app

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("payload-server")
    log_path = folder / "streamlit.log"
    # No --server.address: the default of .streamlit/config.toml (127.0.0.1) is what is tested.
    process, url = start_app({"EMPATHY_STORE": str(folder / "overrides.sqlite"),
                              "EMPATHY_CACHE_DIR": str(folder / "cache")}, log_path, bind_address=False)
    try:
        yield {"url": url, "folder": folder, "port": urllib.parse.urlsplit(url).port, "log": log_path}
    finally:
        stop_app(process)


def _screenshots() -> Path:
    if os.environ.get("EMPATHY_SCREENSHOTS"):
        folder = Path(os.environ["EMPATHY_SCREENSHOTS"]).resolve()
    else:
        import tempfile

        folder = Path(tempfile.gettempdir()) / "empathy-payload-screens"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _settle(page, text: str) -> None:
    """Wait until ``text`` is visible and the script run has finished."""
    settle(page, text, TIMEOUT, fresh=False)


def _plots_drawn(page) -> None:
    """Wait until every Plotly chart on the page has drawn its SVG (its labels are then in the DOM)."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('.stPlotlyChart, [data-testid=\"stPlotlyChart\"]')]"
        ".every(c => c.querySelector('svg.main-svg'))", timeout=TIMEOUT)


# What a rendered payload would look like in the DOM (none of it may exist).
_STYLED = """(port) => {
  const found = [];
  for (const e of document.querySelectorAll('body *')) {
    if (getComputedStyle(e).fontSize === '60px') found.push('60px: ' + e.outerHTML.slice(0, 120));
  }
  for (const e of document.querySelectorAll('img, image, a, link, source, iframe, object, embed')) {
    const target = e.getAttribute('src') || e.getAttribute('href') || e.getAttribute('xlink:href') || '';
    if (target.includes(':' + port) || target === 'x') {
      const where = e.closest('[data-testid^="st"]');
      found.push('element: ' + e.outerHTML.slice(0, 120) + ' in ' + (where ? where.outerHTML.slice(0, 400) : '?'));
    }
  }
  for (const e of document.querySelectorAll('.katex, .katex-html, math')) {
    found.push('katex: ' + e.outerHTML.slice(0, 80));
  }
  for (const e of document.querySelectorAll('strong, b')) {
    if (e.textContent.trim() === 'm') found.push('bold payload: ' + e.outerHTML.slice(0, 80));
  }
  // the payload's 60px, not a layout width that merely ends in it (a chart's 960px)
  for (const e of document.querySelectorAll('[style*="60px"]')) {
    if (/(^|[^0-9.])60px/.test(e.getAttribute('style'))) found.push('styled: ' + e.outerHTML.slice(0, 120));
  }
  return found;
}"""


def _check_inert(page, payload_host, name: str, requests: list[str]) -> None:
    port = payload_host["port"]
    styled = page.evaluate(_STYLED, port)
    for finding in styled:
        print(name, finding)  # shown in full when the test fails
    assert styled == [], (name, styled)
    assert payload_host["hits"] == [], (name, payload_host["hits"])
    outside = [u for u in requests if urllib.parse.urlsplit(u).hostname not in ("127.0.0.1", "localhost")
               and not u.startswith(("data:", "blob:", "about:"))]
    assert outside == [], (name, outside)
    assert [u for u in requests if f":{port}" in u] == [], name
    assert page.dialogs == [], name  # type: ignore[attr-defined]
    assert not page.locator("[data-testid='stException']").count(), name
    assert not page.get_by_text("Traceback").count(), name


def _assert_download_is_formula_safe(page, button: str, column: str) -> None:
    """The CSV behind ``button`` has the payload formula in ``column`` only as ``'=...`` (spreadsheet-safe)."""
    with page.expect_download(timeout=TIMEOUT) as info:
        page.get_by_role("button", name=button).first.click()
    table = pd.read_csv(info.value.path(), dtype=str, keep_default_na=False)
    cells = table[column].tolist()
    assert any(c.startswith("'=HYPERLINK(") for c in cells), cells
    assert not any(str(c).startswith(("=", "+", "@")) for row in table.itertuples(index=False) for c in row)


def _go(page, path: str, marker: str | None) -> None:
    """Click the sidebar link to ``/path`` (same session, so the loaded data set stays) and wait for ``marker``
    (or, for a page this test has no marker for, for its URL and the end of its script run)."""
    page.locator(f'[data-testid="stSidebarNav"] a[href$="/{path}"]').first.click()
    if marker is None:
        page.wait_for_url(re.compile(rf"/{re.escape(path)}(\?.*)?$"), timeout=TIMEOUT)
        settle(page, None, TIMEOUT)
    else:
        _settle(page, marker)


def _pick(page, label: str, option: str) -> None:
    """Choose the first option containing ``option`` in the select box labelled ``label``, and wait for the rerun
    it causes to end (a download clicked during it would ask for the previous run's file)."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    if option in box.get_by_role("combobox").input_value():
        return  # chosen already: no rerun follows

    def choose() -> None:
        box.click()
        page.get_by_role("option").filter(has_text=option).first.click()

    rerun_after(page, choose, timeout=TIMEOUT, again_after=60_000)


# ------------------------------------------------------------------------------------ what each page does

def _overview(page) -> None:
    _assert_download_is_formula_safe(page, "Download the results table (CSV)", "scorer")
    page.get_by_role("button", name="Compute the standard metrics").click()
    # The scatter (its title "<empathy metric> vs rouge_l per model") is drawn once the metrics are computed.
    page.wait_for_function("() => [...document.querySelectorAll('svg.main-svg text')]"
                           ".some(t => t.textContent.includes(' per model'))", timeout=TIMEOUT)
    page.wait_for_function(IDLE_JS, timeout=TIMEOUT)
    _plots_drawn(page)
    # Plotly drew the model names as text: the span's markup is visible as characters in the SVG.
    labels = page.locator("svg.main-svg text").all_text_contents()
    assert any('<span style="font-size:60px;color:red">BIG</span>' in t for t in labels), labels[:40]


def _inspect(page) -> None:
    conversation = page.get_by_text("The whole conversation", exact=False).first
    conversation.click()
    page.get_by_text("Supporter:", exact=False).first.wait_for(state="visible", timeout=TIMEOUT)
    assert page.get_by_text("[click](http", exact=False).count() >= 1  # the link stays text


def _pin(page) -> None:
    """Pin the output on screen (after the inertness check: the Exhibits page presents it)."""
    page.get_by_role("button", name="Pin as exhibit").click()
    page.get_by_role("button", name="Pin", exact=True).click()
    _settle(page, "Pinned as exhibit 1")


def _relabel(page) -> None:
    commit_name(page, "payload-test")
    _settle(page, "raters say")
    page.get_by_role("button", name=re.compile(r"^ca = 1")).click()
    _settle(page, "Saved (change #")
    saved = page.get_by_text("Saved (change #", exact=False).first.inner_text()
    assert "ca = 1" in saved and ("$x^2$" in saved or "BIG</span>" in saved or ":blue[M]" in saved), saved
    # the live CA table, drawn by the page's own script, shows every model name as characters
    live = page.locator('[data-testid="relabel-live"]')
    live.wait_for(state="visible", timeout=TIMEOUT)
    assert '<span style="font-size:60px;color:red">BIG</span>' in live.inner_text(), live.inner_text()


def _judge(page) -> None:
    page.get_by_role("button", name="Run the judge").click()
    _settle(page, "Added the rater")
    _settle(page, "Raters added this session")
    _assert_download_is_formula_safe(page, "Download CSV", "item_id")


def _items(page) -> None:
    # Sort by the term of the judge whose name holds the remote image and the HYPERLINK formula: the caption
    # names the sort column ("worst SA · judge ... first"), where the name was once rendered as Markdown.
    _pick(page, "Worst first by", "HYPERLINK")
    caption = page.get_by_text("worst SA · judge", exact=False).first
    caption.wait_for(state="visible", timeout=TIMEOUT)
    assert "](http" in caption.inner_text() and "=HYPERLINK(" in caption.inner_text(), caption.inner_text()
    _assert_download_is_formula_safe(page, "Download these rows (CSV)", "item_id")


def _disagreement(page) -> None:
    # The judges split on every dimension here: the map labels its slices with the payload task names.
    _pick(page, "Disagreement", "judges split")
    _plots_drawn(page)


def _exhibits(page) -> None:
    page.get_by_role("tab", name="Presentation").click()
    _settle(page, "Exhibit 1 of 1")
    # the ranking fragility is drawn while its tab is open only: open it, so that its tables and pickers (judge and
    # model names) are checked too; the other tabs' contents stay in the page
    page.get_by_role("tab", name="Ranking fragility").click()
    _settle(page, "Most influential items")


# url path -> (text that shows the page has drawn, what to do there before the check, after the check)
PAGE_STEPS = {
    "": ("Pages", None, None),
    "Data": ("Human overrides ledger", None, None),
    "Overview": ("Reproducibility signature", _overview, None),
    "Inspect": ("Distancing densities", _inspect, _pin),
    "Relabel": ("No annotator name", _relabel, None),
    "Agreement": ("Human vs each judge", _plots_drawn, None),
    "Workbench": ("Sample-size stability", _plots_drawn, None),
    "Judge": ("Name of the new rater", _judge, None),
    "Items": ("One output", _items, None),
    "Disagreement": ("The mechanism x disagreement map", _disagreement, None),
    "Exhibits": ("Ranking fragility", _exhibits, None),
}


def test_the_test_visits_every_page_of_the_navigation():
    """The pages are the app's own navigation (``frame.navigation``, which ``app.py`` serves), Home first."""
    from empathy_app.frame import PAGES, navigation

    urls = [url for _, _, url in navigation(ROOT)]
    assert urls[:len(PAGES)] == [title.replace(" ", "_") for _, title, *_ in PAGES]  # a URL holds no space
    assert len(urls) == len(list((ROOT / "app_pages").glob("[0-9]*_*.py")))
    assert "Items" in urls and "Disagreement" in urls


def test_payload_data_set_renders_inert_on_every_page(server, browser, payload_host):
    from empathy_app.frame import navigation

    data = write_payload_data(server["folder"] / "payload-data", payload_host["port"])
    context = browser.new_context(viewport={"width": 1440, "height": 1400})
    page = context.new_page()
    follow_runs(page)
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))  # type: ignore[attr-defined]
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    shots = _screenshots()
    visited = []
    try:
        page.goto(f"{server['url']}/Data")
        _settle(page, "Human overrides ledger")
        page.get_by_text("Path on this machine", exact=True).click()
        box = page.get_by_label("Folder or outputs file")
        box.wait_for(state="visible", timeout=TIMEOUT)
        box.fill(str(data))
        box.press("Enter")
        page.get_by_role("button", name="Load from path").click()
        _settle(page, "ratings file(s)")  # the "Loaded ... with 1 ratings file(s)." message
        _settle(page, "Human overrides ledger")
        # The names are shown, literally: the directive and the HTML are text.
        page.get_by_text(":blue[M]**m**", exact=False).first.wait_for(state="visible", timeout=TIMEOUT)
        page.get_by_text('<span style="font-size:60px;color:red">BIG</span>', exact=False).first.wait_for(
            state="visible", timeout=TIMEOUT)
        _check_inert(page, payload_host, "Data (loading)", requests)

        # Every page of the navigation, in its order (Home first), discovered from the app, not listed here: a
        # page without steps in PAGE_STEPS is still visited and checked.
        for number, (_, title, url) in enumerate([(None, "Home", ""), *navigation(ROOT)], start=1):
            marker, act, after = PAGE_STEPS.get(url, (None, None, None))
            _go(page, url, marker)
            if act is not None:
                act(page)
            _check_inert(page, payload_host, title, requests)
            page.screenshot(path=str(shots / f"payload_{number:02d}_{url or 'home'}.png"), full_page=True)
            if after is not None:
                after(page)
            visited.append(url)
    finally:
        context.close()
    assert visited == ["", *(url for _, _, url in navigation(ROOT))]
    assert payload_host["hits"] == []
