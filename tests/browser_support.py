"""What every real-browser test and screenshot script needs: the app served by ``streamlit run`` on a free port,
Debian's Chromium through Playwright, and a wait until Streamlit has finished a script run.

Imported by ``tests/test_browser*.py``, ``tests/browser_jobs.py`` and ``scripts/screenshots_*.py`` (which put
``tests/`` on ``sys.path``). Every wait is on a condition with a timeout, never a fixed long sleep.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
#: Milliseconds any one condition may take: generous, for a machine shared by many processes.
WAIT_MS = 240_000

#: Streamlit's script runner is idle (its status widget, when there is one, does not say "Running").
IDLE_JS = ("() => { const s = document.querySelector('[data-testid=\"stStatusWidget\"]');"
           " return !s || !s.innerText.includes('Running'); }")
#: Idle, and no element left over from before the last rerun (Streamlit marks those data-stale until the rerun
#: redraws or drops them): a button clicked then would be the previous output's.
IDLE_AND_FRESH_JS = ("() => { const s = document.querySelector('[data-testid=\"stStatusWidget\"]');"
                     " return (!s || !s.innerText.includes('Running'))"
                     " && !document.querySelector('[data-stale=\"true\"]'); }")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_app(env: Mapping[str, str], log_path: Path, *, bind_address: bool = True,
              timeout_s: float = 180.0, options: Sequence[str] = (), root: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """``streamlit run app.py`` on a free port with ``env`` added to this process's; returns once it is healthy.

    Parameters
    ----------
    env : Mapping[str, str]
        Variables set for the app on top of ``os.environ`` (e.g. ``EMPATHY_STORE``).
    log_path : Path
        The app's stdout and stderr are appended here.
    bind_address : bool
        Pass ``--server.address 127.0.0.1``; False leaves the address to ``.streamlit/config.toml``.
    timeout_s : float
        How long the health check may take.
    options : Sequence[str]
        More ``streamlit run`` options (e.g. ``["--runner.postScriptGC", "true"]``: these win over the app's
        ``.streamlit/config.toml``, environment variables do not).
    root : Path
        The folder whose ``app.py`` runs (a benchmark's baseline: another revision extracted elsewhere, whose
        packages come first on the path).

    Returns
    -------
    tuple[subprocess.Popen, str]
        The process (stop it with :func:`stop_app`) and its URL.

    Raises
    ------
    RuntimeError
        When the app exits or is not healthy within ``timeout_s`` (it is stopped first); names the log.
    """
    port = free_port()
    address = ["--server.address", "127.0.0.1"] if bind_address else []
    if "EMPATHY_SETTINGS" not in env and "EMPATHY_SETTINGS" not in os.environ:
        # a benchmark's app remembers its data set beside its log, not in the user's settings file
        env = {**env, "EMPATHY_SETTINGS": str(log_path.parent / "app-settings.json")}
    with log_path.open("a") as log:
        process = subprocess.Popen(
            # no file watcher: an edit of the checkout while a test or benchmark runs must not reload modules
            # under the running app (classes held in caches would stop being the classes of the new modules)
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(port), *address, "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none", *options],
            cwd=root, env={**os.environ, **env, "PYTHONUNBUFFERED": "1",
                           **({"PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
                              if root != ROOT else {})},
            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_for_http(process, f"{url}/_stcore/health", name="streamlit", log_path=log_path, timeout_s=timeout_s,
                  healthy=lambda response: response.read().strip() == b"ok", stop=stop_app)
    return process, url


def wait_for_http(process: subprocess.Popen, url: str, *, name: str, log_path: Path, timeout_s: float,
                  healthy: Callable[[object], bool], stop: Callable[[subprocess.Popen], None]) -> None:
    """Poll ``url`` until ``healthy(response)`` says the server started by ``process`` is up.

    Raises
    ------
    RuntimeError
        When the process exits first, or after ``timeout_s`` (the process is stopped with ``stop`` first); both name
        ``log_path``.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}; see {log_path}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if healthy(response):
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            stop(process)
            raise RuntimeError(f"{name} did not answer at {url}; see {log_path}")
        time.sleep(0.5)  # polling interval of the health check, not a wait for a result


def stop_app(process: subprocess.Popen, *, kill: bool = False, timeout_s: float = 30.0) -> None:
    """Stop an app started by :func:`start_app` (by its own id); ``kill`` sends SIGKILL (no chance to flush)."""
    if kill:
        process.kill()
    else:
        process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout_s)


@contextmanager
def running_app(env: Mapping[str, str], log_path: Path, **options: object) -> Iterator[str]:
    """:func:`start_app` for the ``with`` block; yields the URL and stops the app on exit."""
    process, url = start_app(env, log_path, **options)  # type: ignore[arg-type]
    try:
        yield url
    finally:
        stop_app(process)


@contextmanager
def chromium() -> Iterator[object]:
    """A headless Chromium (Debian's, at /usr/bin/chromium) through Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                             args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def screenshot_session(prefix: str, *, width: int, height: int) -> Iterator[tuple[str, object, object]]:
    """For the screenshot scripts: the app with its store in a new temporary folder (named with ``prefix``) and a
    Chromium tab of ``width`` x ``height``; yields ``(url, browser, page)`` and stops both on exit."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    env = {"EMPATHY_STORE": str(folder / "overrides.sqlite")}
    with running_app(env, folder / "streamlit.log") as url, chromium() as browser:
        yield url, browser, browser.new_context(viewport={"width": width, "height": height}).new_page()


def settle(page, text: str | None = None, timeout: float = WAIT_MS, *, fresh: bool = True,
           pause_ms: float = 0) -> None:
    """Wait until ``text`` (if given) is visible and Streamlit's script runner is idle.

    ``fresh`` also waits for the elements of the previous run to be gone; ``pause_ms`` then waits that long
    more (for Plotly or the data grids, which draw after the script has finished, before a screenshot).
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        if text is not None:
            page.get_by_text(text, exact=False).first.wait_for(state="visible", timeout=timeout)
        page.wait_for_function(IDLE_AND_FRESH_JS if fresh else IDLE_JS, timeout=timeout)
    except PlaywrightTimeout as error:
        # CI keeps only the test's output: say what the page showed instead
        raise AssertionError(f"waited {timeout / 1000:.0f} s for {text!r} on {page.url}; the page shows:\n"
                             f"{page_summary(page)}") from error
    if pause_ms:
        page.wait_for_timeout(pause_ms)


#: The Streamlit websocket each followed page opened last (:func:`follow_runs`), by ``id(page)``.
_SOCKETS: dict[int, object] = {}


def follow_runs(page) -> None:
    """Keep ``page``'s Streamlit websocket, so that :func:`rerun_after` can wait for the run an action caused.

    Call before the page's first ``goto``: the socket is opened by the navigation (a reload opens a new one)."""
    def keep(socket) -> None:
        if socket.url.endswith("/_stcore/stream"):
            _SOCKETS[id(page)] = socket

    page.on("websocket", keep)


def _starts_a_full_run(payload: str | bytes) -> bool:
    """Whether a frame from the server says a whole-page script run started (not a fragment's)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    if isinstance(payload, str):
        return False
    message = ForwardMsg.FromString(payload)
    return message.WhichOneof("type") == "new_session" and not message.metadata.run.fragment_ids


def rerun_after(page, action: Callable[[], object], text: str | None = None, timeout: float = WAIT_MS, *,
                again_after: float | None = None) -> None:
    """Do ``action`` (a click or a choice that reruns the page), wait until the server has *started* a whole-page
    run after it, then :func:`settle` (``text`` if given).

    :func:`settle` alone can return before the rerun starts: the page still looks idle while the action's message
    is on its way or queued behind another run, and the next action would land on the previous run's widgets (a
    choice typed into a select whose options that run then replaces is lost).

    ``again_after`` (ms): when no run has started by then, the action is done once more, as a person does when a
    click shows nothing, for an action that is harmless twice. A clean-clone run once saw a click on an enabled,
    visible button start no run for 240 s (test_browser_login's "Record adjudication"); the cause is not known.
    """
    socket = _SOCKETS.get(id(page))
    if socket is None:
        raise RuntimeError("rerun_after needs follow_runs(page) before the page's first goto")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    tries = [again_after, timeout - again_after] if again_after is not None and again_after < timeout else [timeout]
    for number, wait in enumerate(tries, start=1):
        try:
            with socket.expect_event("framereceived", predicate=_starts_a_full_run, timeout=wait):
                action()
            break
        except PlaywrightTimeout as error:
            if number == len(tries):
                raise AssertionError(f"no run of the page started within {timeout / 1000:.0f} s of the action on "
                                     f"{page.url}; the page shows:\n{page_summary(page)}") from error
            print(f"rerun_after: no run started within {wait / 1000:.0f} s of the action on {page.url}; doing it "
                  f"again. The page shows:\n{page_summary(page, 600)}")
    settle(page, text, timeout)


#: Relabel's output on screen has its marks and no background text analysis is running any more (the queue is
#: usable before; while the analysis runs, the queue's fragment polls, and the run that finds it ended draws the marks
#: and stops the polling: the page is not rerun as a whole).
ANALYSIS_DONE_JS = """() => {
  const item = document.querySelector('[data-testid="relabel-item"]');
  const main = document.querySelector('[data-testid="stMain"]');
  return Boolean(item) && !item.innerText.includes('Marks appear when the text analysis')
    && !(main && main.innerText.includes('Text analysis in the background'));
}"""


def analysis_done(page, timeout: float = WAIT_MS) -> None:
    """Wait until Relabel's background text analysis has reached the output on screen and ended
    (:data:`ANALYSIS_DONE_JS`), then until the page is idle: a click made before could land in its last rerun."""
    page.wait_for_function(ANALYSIS_DONE_JS, timeout=timeout)
    settle(page)


def commit_name(page, name: str, timeout: float = WAIT_MS) -> None:
    """Type ``name`` into the sidebar's one annotator name box and press *Use this name*, as a person does before
    deciding; a name this machine committed before (remembered, shown with *Change name*) is changed first."""
    box = page.get_by_test_id("stForm").get_by_test_id("stTextInputField")
    change = page.get_by_role("button", name="Change name")
    box.or_(change).first.wait_for(state="visible", timeout=timeout)
    if change.is_visible():
        change.click()
    box.wait_for(state="visible", timeout=timeout)
    box.fill(name)
    page.get_by_role("button", name="Use this name").click()


def page_summary(page, limit: int = 1_500) -> str:
    """The start of the page's main text, then its error boxes and alerts, for a failure message (last: CI keeps
    the end of a long output)."""
    main = page.locator("[data-testid=stMain]")
    parts = [main.inner_text(timeout=5_000)[:limit] if main.count() else page.content()[:limit]]
    for selector in ("[data-testid=stException]", "[data-testid=stAlert]"):
        for box in page.locator(selector).all()[:5]:
            parts.append(f"[{selector}] {box.inner_text(timeout=5_000)[:400]}")
    return "\n".join(parts)


def upload(page, label: str, paths: list[Path], *, attempts: int = 3) -> None:
    """Give ``paths`` to the file uploader labelled ``label`` and wait until the page lists each of them.

    Given again (after a settle) when the uploader lists none of them within a minute, as a person would drop
    them again: in a CI run the ratings uploader listed none of the files given to it while the page was still
    redrawing after the outputs' upload (the cause was not pinned down). Never given again once one is listed
    (a multi-file uploader would then hold them twice).
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    widget = page.locator("[data-testid=stFileUploader]").filter(has_text=label)
    listed = [widget.get_by_text(path.name, exact=True).first for path in paths]
    for attempt in range(1, attempts + 1):
        settle(page)
        widget.locator("input[type='file']").set_input_files([str(path) for path in paths])
        try:
            listed[0].wait_for(state="visible", timeout=WAIT_MS if attempt == attempts else 60_000)
        except PlaywrightTimeout:
            if attempt == attempts or any(name.is_visible() for name in listed):
                raise
            print(f"upload: {label!r} listed none of its files, giving them again", file=sys.stderr)
        else:
            break
    for name in listed:
        name.wait_for(state="visible", timeout=WAIT_MS)
