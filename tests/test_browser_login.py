"""Real-browser test of the app's sign-in (issue 24): a real OpenID Connect provider, Streamlit's own ``st.login``.

The provider is ``oidc-provider-mock`` (a Flask app implementing OpenID Connect discovery, authorization code flow,
ID tokens signed with its own key, end session), started by this test on a free port of 127.0.0.1's ``localhost``
with three users: alice (annotator), bob (adjudicator) and carol (viewer), each an OpenID subject whose ``email``
claim, verified by the provider (``email_verified``), is their identity. The app is ``streamlit run app.py`` with a ``secrets.toml`` written to a temporary folder
(``--secrets.files``): ``[auth]`` names the provider's discovery document, a client id and secret (the mock takes any
client) and the redirect URI on the app's port; ``[roles]`` gives the three roles.

In Chromium (one browser context per person, so one sign-in cookie each): signed out, the sidebar offers the sign-in
button and Relabel decides nothing; alice and bob sign in on the provider's page and decide the same output with a key
(the store's rows carry ``alice@lab.example`` and ``bob@lab.example``); alice, an annotator, finds Record adjudication
disabled with the reason, bob adjudicates; carol, a viewer, sees the queue (blind) and her key is refused with the
roles' message, nothing written; alice signs out (through the provider's end-session page) and Relabel stops taking
decisions. Skips only when Debian's Chromium is absent.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from browser_support import CHROMIUM, WAIT_MS, analysis_done, follow_runs, rerun_after, settle, start_app, stop_app

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian chromium at /usr/bin/chromium")]

#: OpenID subject -> (e-mail claim, role in the secrets' [roles]).
PEOPLE = {"alice": ("alice@lab.example", "annotator"), "bob": ("bob@lab.example", "adjudicator"),
          "carol": ("carol@lab.example", "viewer")}
SCREENSHOTS = Path(os.environ["EMPATHY_SCREENSHOTS"]).resolve() if os.environ.get("EMPATHY_SCREENSHOTS") else None


def secrets_toml(provider: str) -> str:
    """The app's secrets: Streamlit's [auth] for the provider at ``provider`` and the team's [roles]."""
    members = "\n".join(f'"{email}" = "{role}"' for email, role in PEOPLE.values())
    return f"""[auth]
redirect_uri = "http://127.0.0.1:{{port}}/oauth2callback"
cookie_secret = "{secrets.token_hex(24)}"
client_id = "empathy-test-client"
client_secret = "{secrets.token_hex(16)}"
server_metadata_url = "{provider}/.well-known/openid-configuration"

[roles]
default = "none"
viewers_see_hidden = false

[roles.roles]
{members}
"""


@pytest.fixture(scope="module")
def provider():
    """A real OpenID Connect provider on a free port (a thread of this process), with the three users."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")  # plain http on this machine only
        from oidc_provider_mock import User, run_server_in_thread

        users = [User(sub=sub, claims={"email": email, "email_verified": True}) for sub, (email, _) in PEOPLE.items()]
        with run_server_in_thread(port=0, user_claims=users) as server:
            yield f"http://localhost:{server.server_port}"


@pytest.fixture(scope="module")
def team_app(provider, tmp_path_factory):
    """The app with a login: its secrets in a temporary folder, its store a SQLite file there."""
    folder = tmp_path_factory.mktemp("login")
    secrets_file = folder / "secrets.toml"
    secrets_file.write_text(secrets_toml(provider), encoding="utf-8")
    store = folder / "overrides.sqlite"
    process, url = start_app({"EMPATHY_STORE": str(store), "AUTHLIB_INSECURE_TRANSPORT": "1",
                              "EMPATHY_SETTINGS": str(folder / "app-settings.json")},
                             folder / "streamlit.log", options=["--secrets.files", str(secrets_file)])
    try:
        yield {"url": url, "store": store, "folder": folder}
    finally:
        stop_app(process)


def _shot(tab, name: str, folder: Path) -> None:
    target = (SCREENSHOTS or folder) / f"login-{name}.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(target), full_page=True)


def _rows(store: Path, sql: str) -> pd.DataFrame:
    if not store.exists():
        return pd.DataFrame()
    with sqlite3.connect(store) as connection:
        return pd.read_sql_query(sql, connection)


def _shows(tab, text: str) -> None:
    """Wait until the page's text holds ``text`` (the app puts invisible word joiners into long data tokens such
    as e-mail addresses: they are left out) and Streamlit is idle."""
    # no body while a sign-in redirect is under way: not yet, rather than an error
    tab.wait_for_function("(text) => !!document.body && document.body.innerText.replace(/\u2060/g, '')"
                          ".includes(text)", arg=text, timeout=WAIT_MS)
    settle(tab)


def _sign_in(browser, url: str, subject: str):
    """A new browser context signed in as ``subject`` through the provider's page; returns its tab."""
    context = browser.new_context(viewport={"width": 1440, "height": 1400})
    tab = context.new_page()
    follow_runs(tab)
    tab.goto(url)
    settle(tab, "Signed out")
    tab.get_by_role("button", name="Sign in", exact=True).click()
    # the provider's authorization page: the predefined users are one button each
    tab.get_by_role("button", name=subject, exact=True).click(timeout=WAIT_MS)
    _shows(tab, f"Signed in as {PEOPLE[subject][0]}")
    return tab


def _relabel(tab, url: str) -> None:
    """Open Relabel (a new session: the sign-in cookie carries the identity) and wait for the key queue."""
    tab.goto(f"{url}/Relabel")
    tab.locator('[data-testid="relabel-item"]').wait_for(state="visible", timeout=WAIT_MS)
    analysis_done(tab)


def _press(tab, key: str) -> None:
    """One key for the output on screen; waits until the server has acknowledged it (saved or refused)."""
    tab.evaluate("() => document.activeElement && document.activeElement.blur()")
    tab.keyboard.press(key)
    tab.wait_for_function(
        "() => { const s = document.querySelector('[data-testid=\"relabel-queue-status\"]');"
        " return s && s.getAttribute('data-pending') === '0'; }", timeout=WAIT_MS)
    settle(tab)


def _on_screen(tab) -> tuple[str, str]:
    shown = tab.locator('[data-testid="relabel-item"]')
    return shown.get_attribute("data-item"), shown.get_attribute("data-model")


def test_two_signed_in_annotators_a_viewer_and_signing_out(team_app, browser):
    url, store, folder = team_app["url"], team_app["store"], team_app["folder"]

    # signed out: the sign-in button, and Relabel decides nothing
    context = browser.new_context(viewport={"width": 1440, "height": 1400})
    anonymous = context.new_page()
    anonymous.goto(f"{url}/Relabel")
    settle(anonymous, "Signed out: sign in (sidebar) to decide")
    assert anonymous.get_by_role("button", name="Sign in", exact=True).is_visible()
    assert anonymous.locator('[data-testid="relabel-item"]').count() == 0
    _shot(anonymous, "signed-out", folder)
    context.close()

    # alice (annotator) and bob (adjudicator) sign in and decide the same output differently
    alice = _sign_in(browser, url, "alice")
    _relabel(alice, url)
    _shows(alice, "Deciding as alice@lab.example (annotator)")
    first = _on_screen(alice)
    _press(alice, "1")
    _shot(alice, "alice-decided", folder)
    bob = _sign_in(browser, url, "bob")
    _relabel(bob, url)
    assert _on_screen(bob) == first  # the same order for both (not blind): judge disagreement first
    _press(bob, "0")
    decided = _rows(store, "SELECT item_id, model, annotator, role, value FROM overrides")
    assert set(decided["annotator"]) == {"alice@lab.example", "bob@lab.example"}
    per_person = decided.groupby("annotator")["value"].agg(["min", "max"])
    assert per_person.loc["alice@lab.example"].tolist() == [1.0, 1.0]
    assert per_person.loc["bob@lab.example"].tolist() == [0.0, 0.0]
    assert set(zip(decided["item_id"], decided["model"], strict=True)) == {first}

    # an annotator cannot adjudicate: the button is disabled and says why
    _relabel(alice, url)
    alice.get_by_text("Several annotators: agreement and adjudication").click()
    _shows(alice, "Recording an adjudication is not open to you: alice@lab.example is an annotator (secrets "
                  "[roles]): only an adjudicator or above may adjudicate")
    assert alice.get_by_role("button", name="Record adjudication").is_disabled()
    # the adjudicator can
    _relabel(bob, url)
    bob.get_by_text("Several annotators: agreement and adjudication").click()
    record = bob.get_by_role("button", name="Record adjudication")
    record.wait_for(state="visible", timeout=WAIT_MS)
    assert record.is_enabled()
    # pressed again when no run starts within a minute (rerun_after); two adjudications by bob are still bob's
    rerun_after(bob, record.click, "Adjudicated", again_after=60_000)
    adjudicated = _rows(store, "SELECT annotator FROM overrides WHERE role = 'adjudicator'")
    assert set(adjudicated["annotator"]) == {"bob@lab.example"}

    # a viewer's key is refused with the roles' message; nothing is written
    before = len(_rows(store, "SELECT * FROM audit"))
    carol = _sign_in(browser, url, "carol")
    _relabel(carol, url)
    assert carol.get_by_role("switch", name="Blind: hide judge labels").is_checked()  # viewers never see them here
    _press(carol, "1")
    _shows(carol, "Refused key #1: carol@lab.example is a viewer (secrets [roles]): only an annotator or above may "
                  "write decisions; nothing was written")
    _shot(carol, "viewer-refused", folder)
    assert len(_rows(store, "SELECT * FROM audit")) == before
    assert "carol@lab.example" not in set(_rows(store, "SELECT annotator FROM overrides")["annotator"])

    # signing out stops writes: the provider's end-session page, then the app signed out
    alice.get_by_role("button", name="Sign out").click()
    alice.get_by_role("button", name="End session").click(timeout=WAIT_MS)
    settle(alice, "Signed out")
    alice.goto(f"{url}/Relabel")
    settle(alice, "Signed out: sign in (sidebar) to decide")
    assert alice.locator('[data-testid="relabel-item"]').count() == 0
    alice.goto(f"{url}/Inspect")
    save = alice.get_by_role("button", name="Save override")
    save.wait_for(state="visible", timeout=WAIT_MS)
    assert save.is_disabled()
    assert len(_rows(store, "SELECT * FROM audit")) == before
