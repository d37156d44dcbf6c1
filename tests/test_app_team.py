"""AppTest of a team on one server (issue 24, the app): who decides, with which rights, in what order, and where
the ledger lives.

Reloads (a reload is a new session): the committed name is remembered, skips are kept (in the store), an upload's
decisions are found from another working directory and a store an earlier version left there is moved with a
message. Refusals: a viewer's key and an annotator's adjudication are refused with the roles' message and nothing
is written; malformed roles stop the data set with one line. With a login (``[auth]`` in the secrets) the annotator
is the signed-in identity, and signed out nothing is decided. The queue: blind mode orders it at random, seeded per
annotator, never by disagreement; it follows the assignments an adjudicator makes on the Data page; "decided
meanwhile" follows the store's commit order, not the writers' clocks.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts as _texts  # noqa: E402
from relabel_keys import on_screen, press, window  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402
from test_app import _path_source, _write_fixture  # noqa: E402

from empathy.labels.queue_state import assignments, skipped_outputs  # noqa: E402
from empathy.labels.sqlite import OverrideStore  # noqa: E402
from empathy.settings import Settings, save_upload  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 240
RELABEL = "app_pages/4_Relabel.py"
#: The roles of these tests, as the secrets' [roles] section.
ROLES = {"default": "none", "viewers_see_hidden": False,
         "roles": {"ann": "annotator", "bob": "annotator", "lead": "adjudicator", "carol": "viewer"}}
AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "a-test-cookie-secret-0123",
        "client_id": "id", "client_secret": "secret",
        "server_metadata_url": "http://localhost:9/.well-known/openid-configuration"}


def _app(source: dict | None, *, annotator: str | None = None, secrets: dict | None = None,
         user: dict | None = None, page: str = RELABEL) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    if source is not None:
        at.session_state["source"] = source
    if annotator is not None:
        at.session_state["annotator"] = annotator
    for name, value in (secrets or {}).items():
        at.secrets[name] = value
    if user is not None:
        at.user = user
    at.run()
    at.switch_page(page).run()
    _ok(at)
    return at


@pytest.fixture()
def fixture_source(tmp_path) -> dict:
    return _path_source(_write_fixture(tmp_path / "fixture"))


# ------------------------------------------------------------------------------------------ reloads

def test_the_committed_name_is_remembered_across_a_reload(fixture_source, _store):
    at = _app(fixture_source)
    assert any("No annotator name" in i for i in _texts(at.info))
    at.text_input(key="_w_annotator").input("  ann  ")
    at.button(key="identity_commit").click().run()
    _ok(at)
    assert window(at)["annotator"] == "ann"
    import os

    assert Settings.load(Path(os.environ["EMPATHY_SETTINGS"])).annotator == "ann"
    reloaded = _app(fixture_source)  # a new session, as a reload is
    assert window(reloaded)["annotator"] == "ann"
    assert any("Deciding as **ann**" in m for m in _texts(reloaded.markdown))
    # a name with a control character is refused, the remembered one stays
    reloaded.button(key="identity_change_name").click().run()
    reloaded.text_input(key="_w_annotator").input("a\x07b")
    reloaded.button(key="identity_commit").click().run()
    assert any("cannot hold control characters" in e for e in _texts(reloaded.error))


def test_skips_are_kept_in_the_store_across_a_reload(fixture_source, _store):
    at = _app(fixture_source, annotator="ann")
    skipped = on_screen(at)
    press(at, action="skip")
    _ok(at)
    assert on_screen(at) != skipped
    stored = skipped_outputs(OverrideStore(_store), window_dataset(at))
    assert stored[["item_id", "model", "dimension", "annotator"]].values.tolist() == [[*skipped, "ca", "ann"]]
    reloaded = _app(fixture_source, annotator="ann")
    items = [(e["item"], e["model"]) for e in window(reloaded)["items"]]
    assert items[0] != skipped and items[-1] == skipped  # kept, and last
    assert "1 skipped (last)" in reloaded.get("progress")[0].proto.text
    # another annotator's queue is theirs: the skip is ann's only
    other = _app(fixture_source, annotator="bob")
    assert on_screen(other) == skipped
    # brought back: first again
    reloaded.button(key="relabel_unskip").click().run()
    assert on_screen(reloaded) == skipped
    assert skipped_outputs(OverrideStore(_store), window_dataset(at)).empty


def _progress(at: AppTest):
    """The team progress table on the page (per annotator: assigned, decided, skipped, remaining)."""
    table = next(d.value for d in at.dataframe if "remaining" in d.value.columns)
    return table.set_index("annotator")


def window_dataset(at: AppTest) -> str:
    """The store's name of the loaded data set (as the pages write it)."""
    return at.session_state["_data"].dataset_id


def _upload(settings_dir: Path, folder: Path) -> dict:
    """The fixture's files saved as an upload (as the Data page keeps them), as a source."""
    outputs = ("outputs.csv", (folder / "outputs.csv").read_bytes())
    ratings = [(p.name, p.read_bytes()) for p in sorted(folder.glob("ratings*.csv"))]
    digest = save_upload(settings_dir / "uploads", outputs, ratings)
    return {"kind": "upload", "name": "outputs.csv", "saved": digest}


def test_an_uploads_decisions_are_found_from_another_working_directory(tmp_path, monkeypatch):
    import os

    monkeypatch.delenv("EMPATHY_STORE", raising=False)
    settings_dir = Path(os.environ["EMPATHY_SETTINGS"]).parent
    source = _upload(settings_dir, _write_fixture(tmp_path / "files"))
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
    monkeypatch.chdir(tmp_path / "first")
    at = _app(source, annotator="ann")
    press(at, 1.0)
    _ok(at)
    assert (settings_dir / "uploads" / "overrides.sqlite").is_file()  # with the uploads
    assert not (tmp_path / "first" / ".empathy-cache").exists()  # never the working directory
    monkeypatch.chdir(tmp_path / "second")
    again = _app(source, annotator="ann")
    assert "1 of 12 decided by you" in again.get("progress")[0].proto.text
    data_page = _app(source, annotator="ann", page="app_pages/1_Data.py")
    assert any(str(settings_dir / "uploads" / "overrides.sqlite") in c for c in _texts(data_page.caption))


def test_an_uploads_store_left_in_the_working_directory_is_moved_with_a_message(tmp_path, monkeypatch):
    import os

    from empathy.labels.records import Change

    monkeypatch.delenv("EMPATHY_STORE", raising=False)
    settings_dir = Path(os.environ["EMPATHY_SETTINGS"]).parent
    source = _upload(settings_dir, _write_fixture(tmp_path / "files"))
    old = tmp_path / "work" / ".empathy-cache" / "overrides.sqlite"
    old.parent.mkdir(parents=True)
    OverrideStore(old).set_overrides("upload:outputs.csv", [Change("i1", "A", "j1", "ca", 0.0)], annotator="ann")
    monkeypatch.chdir(tmp_path / "work")
    at = _app(source, annotator="ann", page="app_pages/1_Data.py")
    assert any("Moved the uploads' override store" in i and "1 decisions" in i for i in _texts(at.info)), (
        _texts(at.info), _texts(at.error), _texts(at.warning))
    assert not old.exists() and old.with_name("overrides.sqlite.moved").exists()
    moved = OverrideStore(settings_dir / "uploads" / "overrides.sqlite").decisions("upload:outputs.csv")
    assert moved[["item_id", "model", "annotator"]].values.tolist() == [["i1", "A", "ann"]]
    assert any("Human decisions: **1**" in c for c in _texts(at.sidebar.caption))


# ------------------------------------------------------------------------------------------ refusals

def test_a_viewers_key_is_refused_with_the_roles_message(fixture_source, _store):
    at = _app(fixture_source, annotator="carol", secrets={"roles": ROLES})
    reason = "carol is a viewer (secrets [roles]): only an annotator or above may write decisions; nothing was written"
    assert any(reason in i for i in _texts(at.info))
    assert at.toggle(key="_w_relabel_blind").value and at.toggle(key="_w_relabel_blind").disabled
    press(at, 1.0)
    _ok(at)
    assert any(e == f"Refused key #1: {reason}" for e in _texts(at.error))
    press(at, action="skip")
    assert OverrideStore(_store).decisions().empty and OverrideStore(_store).audit().empty
    assert skipped_outputs(OverrideStore(_store), window_dataset(at)).empty
    inspect = _app(fixture_source, annotator="carol", secrets={"roles": ROLES}, page="app_pages/3_Inspect.py")
    save = next(b for b in inspect.button if b.label == "Save override")
    assert save.disabled and reason in html.unescape(save.help)


def test_an_annotator_cannot_adjudicate_and_an_adjudicator_can(fixture_source, _store):
    for name, value in (("ann", 1.0), ("bob", 0.0)):
        press(_app(fixture_source, annotator=name, secrets={"roles": ROLES}), value)
    at = _app(fixture_source, annotator="ann", secrets={"roles": ROLES})
    at.session_state["relabel_agreement_box"] = True
    at.run()
    button = at.button(key="relabel_adjudicate_save")
    assert button.disabled
    assert any("ann is an annotator (secrets [roles]): only an adjudicator or above may adjudicate" in c
               for c in _texts(at.caption))
    lead = _app(fixture_source, annotator="lead", secrets={"roles": ROLES})
    lead.session_state["relabel_agreement_box"] = True
    lead.run()
    assert not lead.button(key="relabel_adjudicate_save").disabled
    lead.button(key="relabel_adjudicate_save").click().run()
    _ok(lead)
    decided = OverrideStore(_store).decisions()
    assert set(decided.loc[decided["role"] == "adjudicator", "annotator"]) == {"lead"}


def test_an_unlisted_name_and_malformed_roles(fixture_source, _store):
    stranger = _app(fixture_source, annotator="mallory", secrets={"roles": ROLES})
    assert any("mallory has no access: not listed in secrets [roles], whose default is 'none'" in i
               for i in _texts(stranger.info))
    bad = {"roles": {"ann": "boss"}}
    at = _app(fixture_source, annotator="ann", secrets={"roles": bad})
    assert any("The roles cannot be read" in e and "unknown role 'boss'" in e for e in _texts(at.error))
    assert not at.get("bidi_component")  # no queue: nothing can be decided under unreadable roles
    assert OverrideStore(_store).decisions().empty


# ------------------------------------------------------------------------------------------ with a login

def test_with_a_login_the_annotator_is_the_signed_in_identity(fixture_source, _store):
    signed_in = {"is_logged_in": True, "email": "ann@lab.example", "email_verified": True, "sub": "s-1",
                 "iss": "https://login.lab.example"}
    at = _app(fixture_source, secrets={"auth": AUTH}, user=signed_in)
    assert window(at)["annotator"] == "ann@lab.example"
    assert not at.get("text_input") or all(t.key != "_w_annotator" for t in at.text_input)  # shown, not typed
    assert any("Signed in as **ann@lab.example**" in m for m in _texts(at.sidebar.markdown))
    press(at, 1.0)
    assert set(OverrideStore(_store).decisions()["annotator"]) == {"ann@lab.example"}
    # no e-mail claim: the subject, qualified by its issuer
    subject_only = _app(fixture_source, secrets={"auth": AUTH},
                        user={"is_logged_in": True, "sub": "s-2", "iss": "https://login.lab.example"})
    assert window(subject_only)["annotator"] == "https://login.lab.example#s-2"
    # signed out: the sign-in button, and nothing is decided, whatever name the session holds
    signed_out = _app(fixture_source, annotator="ann", secrets={"auth": AUTH}, user={"is_logged_in": False})
    assert any(b.label == "Sign in" for b in signed_out.sidebar.button)
    assert any("Signed out: sign in (sidebar) to decide" in i for i in _texts(signed_out.info))
    assert not signed_out.get("bidi_component")


# ------------------------------------------------------------------------------------------ the queue

def test_blind_mode_orders_at_random_seeded_per_annotator_never_by_disagreement(fixture_source, _store):
    from empathy.review import blind_queue, blind_seed, relabel_queue

    at = _app(fixture_source, annotator="ann")
    by_disagreement = [(e["item"], e["model"]) for e in window(at)["items"]]
    at.toggle(key="_w_relabel_blind").set_value(True).run()
    _ok(at)
    blind = [(e["item"], e["model"]) for e in window(at)["items"]]
    text = at.get("progress")[0].proto.text
    assert "disagree" not in text and "random order" in text
    data = at.session_state["_data"]
    queue = relabel_queue(data.dataset.ratings, "ca", data.dataset.outputs)
    expected = blind_queue(queue, seed=blind_seed(data.dataset_id, "ca", "ann"))
    assert blind == list(zip(expected["item_id"], expected["model"], strict=True))
    assert blind != by_disagreement and sorted(blind) == sorted(by_disagreement)
    # the order stays open in blind mode (the audit sample is one of them); its help says blind orders the others
    assert "Blind mode orders the other two at random" in at.radio(key="relabel_order").help
    other = _app(fixture_source, annotator="bob")
    other.toggle(key="_w_relabel_blind").set_value(True).run()
    assert [(e["item"], e["model"]) for e in window(other)["items"]] != blind  # each annotator's own order


def test_an_adjudicator_assigns_on_the_data_page_and_the_queue_follows(fixture_source, _store):
    page = "app_pages/1_Data.py"
    annotator = _app(fixture_source, annotator="ann", secrets={"roles": ROLES}, page=page)
    assert any("Assigning outputs is not open to you: ann is an annotator" in c for c in _texts(annotator.caption))
    at = _app(fixture_source, annotator="lead", secrets={"roles": ROLES}, page=page)
    at.multiselect(key="data_assign_people").set_value(["ann", "bob"])
    at.number_input(key="data_assign_k").set_value(2)
    at.number_input(key="data_assign_overlap").set_value(0.5)
    at.button(key="data_assign_button").click().run()
    _ok(at)
    assert any("Assigned 12 outputs to 2 annotators" in s and "6 to 2 annotators each" in s for s in _texts(at.success))
    dataset = window_dataset(at)
    design = assignments(OverrideStore(_store), dataset)
    assert design.groupby("annotator").size().to_dict() == {"ann": 9, "bob": 9}  # 6 shared + 3 of the other 6 each
    progress = _progress(at)
    assert progress.loc[["ann", "bob"], ["assigned", "decided", "remaining"]].values.tolist() == [[9, 0, 9], [9, 0, 9]]
    relabel = _app(fixture_source, annotator="ann", secrets={"roles": ROLES})
    mine = design[design["annotator"] == "ann"]
    assert {(e["item"], e["model"]) for e in window(relabel)["items"]} == set(zip(mine["item_id"], mine["model"],
                                                                                  strict=True))
    assert "0 of 9 decided by you" in relabel.get("progress")[0].proto.text
    press(relabel, 1.0)
    relabel.session_state["relabel_progress_box"] = True  # Relabel's table is drawn while its expander is open
    relabel.run()
    team = _progress(relabel)
    assert team.loc["ann", ["assigned", "decided", "remaining"]].tolist() == [9, 1, 8]


def test_decided_meanwhile_follows_the_stores_commit_order_not_clocks(fixture_source, _store, monkeypatch):
    from empathy.labels import sqlite as sqlite_store
    from empathy.labels.records import Change

    at = _app(fixture_source, annotator="ann")
    first = on_screen(at)
    dataset = window_dataset(at)
    # bob decides the output ann has on screen, from a machine whose clock is a year behind
    with monkeypatch.context() as clock:
        clock.setattr(sqlite_store, "utc_now", lambda: "2025-01-01T00:00:00.000000+00:00")
        OverrideStore(_store).set_overrides(dataset, [Change(*first, "j1", "ca", 0.0)], annotator="bob")
    press(at, 1.0)
    _ok(at)
    assert any("bob decided this output meanwhile" in w for w in _texts(at.warning)), (
        _texts(at.warning), _texts(at.success), _texts(at.error))
    # carl decides another output before dora is shown it, from a clock 70 years ahead: not "meanwhile"
    second = on_screen(at)
    with monkeypatch.context() as clock:
        clock.setattr(sqlite_store, "utc_now", lambda: "2099-01-01T00:00:00.000000+00:00")
        OverrideStore(_store).set_overrides(dataset, [Change(*second, "j1", "ca", 1.0)], annotator="carl")
    dora = _app(fixture_source, annotator="dora")
    entry = next(e for e in window(dora)["items"] if (e["item"], e["model"]) == second)
    assert entry["issued"] == OverrideStore(_store).version()  # the store's version when shown, not a time
    press(dora, 0.0, item=second)
    _ok(dora)
    assert any("Saved" in s for s in _texts(dora.success))
    assert not any("meanwhile" in w for w in _texts(dora.warning))


def test_the_data_page_shows_the_store_and_that_it_is_read_only(fixture_source, _store):
    import os

    OverrideStore(_store)
    os.chmod(_store, 0o444)
    os.chmod(_store.parent, 0o555)
    try:
        at = _app(fixture_source, annotator="ann", page="app_pages/1_Data.py")
        assert any(str(_store) in c and "(from EMPATHY_STORE)" in c for c in _texts(at.caption))
        assert any("read-only" in w for w in _texts(at.warning))
        relabel = _app(fixture_source, annotator="ann")
        assert any("is read-only" in e for e in _texts(relabel.error))
        press(relabel, 1.0)
        assert any(e.startswith("Refused key #1: The store") for e in _texts(relabel.error))
    finally:
        os.chmod(_store.parent, 0o755)
        os.chmod(_store, 0o644)
    assert OverrideStore(_store).decisions().empty
