"""The sidebar every page shares, and the app's memory of the chosen data set across reloads and sessions.

The frame in ``app.py`` calls :func:`init_session` (the session's defaults; a new session reopens the data set
its URL names, :func:`restore`, and the annotator name the settings file remembers), then :func:`draw_controls`
before anything is loaded (the with-overrides toggle, the key-help script) and, once the data set is loaded,
:func:`draw_data`: who is deciding (:func:`identity_box`: the sign-in button or the signed-in identity and its role
with a login, the one name box without), the data set's name and human decisions, the task filter, the link to
confirm or the offer to reopen the last data set, and the URL kept naming the data set (``?data=...``,
:func:`sync_url`), so a reload or a shared link reopens it with its overrides.
:func:`choose` is how the Data page switches data sets (session, URL and settings file at once). Logic and
validation of the memory live in :mod:`empathy.settings`.
"""

from __future__ import annotations

import copy
import os

import streamlit as st

from empathy.io import DataError
from empathy.labels.locations import StoreError
from empathy.launch import DATA_ENV
from empathy.settings import Settings, clean_annotator, resolve_key, save_upload, source_key
from empathy_app import identity, loading, overrides, session_keys
from empathy_app.loading import ALL_TASKS, Loaded
from empathy_app.markup import code, codes, md

#: The URL query parameter naming the data set.
PARAM = "data"


def init_session() -> None:
    """Put the session's defaults (:data:`empathy_app.session_keys.DEFAULTS`) in place once per session; a new
    session whose source no caller set first reopens the data set its URL names (a reload is a new session)."""
    if st.session_state.get(session_keys.INITIALISED):
        return
    chosen = session_keys.SOURCE in st.session_state  # set before the first run (tests, a caller): never replaced
    for key, value in session_keys.DEFAULTS.items():
        st.session_state.setdefault(key, copy.deepcopy(value))  # no mutable default shared between sessions
    if session_keys.ANNOTATOR not in st.session_state:
        # a reload: the name committed before on this machine; a browser elsewhere (an app served without a login)
        # names itself, never inheriting the name of the person at the server
        # None for a connection from this machine (and no address at all under AppTest): only a remote one is text
        local = not isinstance(st.context.ip_address, str)
        st.session_state[session_keys.ANNOTATOR] = settings().annotator if local else ""
    st.session_state[session_keys.INITIALISED] = True
    if not chosen:
        restore()


# ------------------------------------------------------------------------------------------ memory

def settings() -> Settings:
    """The settings file as it is now (read on each call: another tab may have written it)."""
    return Settings.load(loading.settings_path())


def _remember(source: dict) -> None:
    if st.session_state.get(session_keys.MEMORY_UNWRITABLE):
        return  # said once this session; not retried on every rerun
    try:
        settings().remember(source)
    except (OSError, ValueError) as error:
        # Remembering is a convenience: the data set is loaded whatever happens here.
        st.session_state[session_keys.MEMORY_UNWRITABLE] = True
        st.session_state[session_keys.MEMORY_NOTICE] = (f"The data set is loaded but could not be remembered: "
                                                        f"{md(error)}")


def choose(source: dict) -> None:
    """Make ``source`` the session's data set, name it in the URL and remember it in the settings file."""
    st.session_state[session_keys.SOURCE] = source
    st.session_state.pop(session_keys.LINK_UNCONFIRMED, None)
    _remember(source)
    sync_url()


def save_uploaded(outputs: tuple[str, bytes], ratings: list[tuple[str, bytes]]) -> str | None:
    """Keep uploaded files so they can be reopened; their digest, or ``None`` (with a message) on failure."""
    try:
        return save_upload(loading.uploads_dir(), outputs, ratings)
    except OSError as error:
        st.session_state[session_keys.MEMORY_NOTICE] = (f"The upload is loaded but could not be kept for later: "
                                                        f"{md(error)}")
        return None


def _open(source: dict) -> None:
    if source["kind"] == "upload":
        loading.load_saved_upload(source["saved"])
    st.session_state[session_keys.SOURCE] = source


def restore() -> None:
    """Once per new session: open the data set the URL names (validated), else leave the demo.

    A path the settings file does not list is not opened: the sidebar asks first (:func:`draw`).
    """
    key = st.query_params.get(PARAM)
    if not key:
        _open_start_data()
        return
    resolved = resolve_key(key, settings(), loading.uploads_dir(), kumar_directory=loading.kumar_directory())
    if resolved.error:
        st.session_state[session_keys.MEMORY_NOTICE] = f"Opened the demo data: {md(resolved.error)}."
        return
    if resolved.unconfirmed:
        st.session_state[session_keys.LINK_UNCONFIRMED] = resolved.unconfirmed
        return
    try:
        _open(resolved.source)
    except DataError as error:
        st.session_state[session_keys.MEMORY_NOTICE] = (f"Opened the demo data: the linked data set cannot be "
                                                        f"loaded: {md(error)}")


def _open_start_data() -> None:
    # `empathy app DATA`: the data set the person at this machine named when starting the app (so trusted, and
    # remembered like one chosen on the Data page); the URL, when it names one, wins
    start = os.environ.get(DATA_ENV, "").strip()
    if not start:
        return
    try:
        outputs, ratings = loading.resolve_path(start)  # only the names: the frame loads it after the first paint
    except DataError as error:
        st.session_state[session_keys.MEMORY_NOTICE] = f"Opened the demo data: {md(error)}"
        return
    choose({"kind": "path", "outputs": str(outputs), "ratings": [str(p) for p in ratings]})


def sync_url() -> None:
    """Name the session's data set in the URL (``?data=``); the demo and an unsaved upload clear it."""
    source = st.session_state.get(session_keys.SOURCE, {"kind": "demo"})
    try:
        key = None if source.get("kind") == "demo" else source_key(source)
    except (KeyError, ValueError):
        key = None
    if key is None and st.session_state.get(session_keys.LINK_UNCONFIRMED):
        return  # keep the link's value until the user answers
    if key is None:
        if PARAM in st.query_params:
            del st.query_params[PARAM]
        return
    if st.query_params.get(PARAM) != key:
        st.query_params[PARAM] = key
    if settings().find(key) != source:
        _remember(source)  # e.g. a ratings file saved beside the data (Judge page) joined the source


def describe(source: dict) -> str:
    """A source for people (Markdown)."""
    kind = source.get("kind")
    if kind == "path":
        return code(source["outputs"])
    if kind == "upload":
        return f"the upload {code(source.get('name', ''))}"
    if kind == "kumar2025":
        return "the Kumar et al. (2025) import"
    return "the demo data"


def _confirm_link(unconfirmed: str) -> None:
    """Ask before opening a path the URL names that this machine never opened."""
    st.warning(f"This link names {code(unconfirmed)}, which was never opened on this machine. Open it only "
               "if you trust the link.")
    if st.button("Open it", key="memory_open_link"):
        try:
            outputs, ratings = loading.resolve_path(unconfirmed)
            loading.load_from_paths(outputs, ratings)
        except DataError as error:
            st.session_state.pop(session_keys.LINK_UNCONFIRMED, None)
            st.session_state[session_keys.MEMORY_NOTICE] = f"**Not loaded.** {md(error)}"
        else:
            choose({"kind": "path", "outputs": str(outputs), "ratings": [str(p) for p in ratings]})
            st.session_state[session_keys.FLASH] = f"Loaded {md(outputs)} with {len(ratings)} ratings file(s)."
        st.rerun()
    if st.button("Keep the demo", key="memory_keep_demo"):
        st.session_state.pop(session_keys.LINK_UNCONFIRMED, None)
        sync_url()
        st.rerun()


def _remembered() -> None:
    """The link to confirm, or the offer to reopen the last data set."""
    notice = st.session_state.pop(session_keys.MEMORY_NOTICE, None)
    if notice:
        st.warning(notice)
    unconfirmed = st.session_state.get(session_keys.LINK_UNCONFIRMED)
    if unconfirmed:
        _confirm_link(unconfirmed)
        return
    if st.session_state.get(session_keys.SOURCE, {}).get("kind") != "demo":
        return
    last = settings().last()
    if last is None or last.get("kind") == "demo":
        return
    if st.button(f"Reopen the last data set: {describe(last)}", key="memory_reopen",
                 help="The data set opened last on this machine (kept in the app's settings file), with its "
                      "overrides."):
        try:
            _open(last)
        except DataError as error:
            st.session_state[session_keys.MEMORY_NOTICE] = f"**Not reopened.** {md(error)}"
        else:
            choose(last)
            st.session_state[session_keys.FLASH] = f"Reopened {describe(last)}."
        st.rerun()


# ------------------------------------------------------------------------------------------ who decides

def _commit_name() -> None:
    """The name box's button: commit the typed name for this session and remember it for the next."""
    typed = str(st.session_state.get(session_keys.ANNOTATOR_WIDGET, "") or "")
    try:
        name = clean_annotator(typed)
    except ValueError as error:
        st.session_state[session_keys.FLASH_ERROR] = f"Name not used: {md(error)}"
        return
    if not name:
        st.session_state[session_keys.FLASH_ERROR] = "Type a name first, then press **Use this name**."
        return
    st.session_state[session_keys.ANNOTATOR] = name
    _remember_name(name)


def _release_name() -> None:
    st.session_state[session_keys.ANNOTATOR] = ""
    _remember_name("")


def _remember_name(name: str) -> None:
    try:
        settings().remember_annotator(name)
    except (OSError, ValueError) as error:
        st.session_state[session_keys.MEMORY_NOTICE] = f"The name is used but could not be remembered: {md(error)}"


def _signed_in_box(who: identity.Access) -> None:
    state = identity.sign_in()
    if who.identity:
        st.markdown(f"Signed in as **{md(who.identity)}**" + (f" · {md(who.role)}" if who.role else ""))
        if state.note:
            st.caption(md(state.note) + ".")
        st.button("Sign out", key="identity_sign_out", on_click=identity.sign_out,
                  help="Ends the sign-in in every tab of this browser; signed out, nothing is written.")
        return
    st.markdown("**Signed out**: you can read; sign in to decide.")
    if state.note:
        st.caption(md(state.note) + ".")
    for provider in identity.login_providers():
        label = "Sign in" if provider is None else f"Sign in with {provider}"
        st.button(label, key=f"identity_sign_in_{provider or 'default'}", type="primary", on_click=st.login,
                  args=(provider,) if provider is not None else ())


def _name_box(who: identity.Access) -> None:
    if who.identity:
        st.markdown(f"Deciding as **{md(who.identity)}**" + (f" · {md(who.role)}" if who.role else ""))
        st.button("Change name", key="identity_change_name", on_click=_release_name)
        return
    with st.form("identity_name_form", border=False):
        st.text_input("Annotator name", key=session_keys.ANNOTATOR_WIDGET,
                      value=str(st.session_state.get(session_keys.ANNOTATOR, "")),
                      placeholder="your name (recorded with each decision)",
                      help="Recorded with every decision and remembered on this machine. It takes effect only "
                           "when you press the button; decision keys do nothing while you type here.")
        st.form_submit_button("Use this name", key="identity_commit", on_click=_commit_name, type="primary")


def identity_box(data: Loaded | None) -> None:
    """Who is deciding: with a login, the signed-in identity and role and a sign-out button, or the sign-in
    button; without, the one name box (committed with its button, remembered in the settings file)."""
    who = identity.access(data.store if data is not None else None)
    if who.login:
        _signed_in_box(who)
    else:
        _name_box(who)


# ------------------------------------------------------------------------------------------ the sidebar

def _sync(widget_key: str, state_key: str) -> None:
    st.session_state[state_key] = st.session_state[widget_key]


#: Static script (no data in it): "?" typed outside a text field clicks the page's "Keys (?)" button
#: (:func:`empathy_app.frame.keys_help`), if the page has one. In the sidebar of every page so that it runs when
#: the app loads: an ``st.html`` script first drawn by a later rerun did not always run.
KEYS_SCRIPT = """<script>
(() => {
  // One listener per browser tab: "?" (outside a text field) clicks the page's keys-help button.
  if (window.__empathyKeysHelp) { return; }
  window.__empathyKeysHelp = true;
  document.addEventListener("keydown", (event) => {
    if (event.key !== "?" || event.ctrlKey || event.metaKey || event.altKey) { return; }
    const target = event.target;
    if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) { return; }
    const button = document.querySelector("[class*='st-key-keys_help'] button");
    if (button) { event.preventDefault(); button.click(); }
  });
})();
</script>"""


#: What the sidebar's pooling toggle says it does.
POOL_HELP = ("Off (the default, as in the paper's Tables 3-5): every number is computed within each task, and "
             "tables have a task column. On: one value per model over all tasks; LD is then standardised across "
             "genres, and the signature says tasks:pooled.")


def _decision_count_line(data: Loaded) -> str:
    # the ledger every page counts with: human decisions (one "(all judges)" decision is one), whatever their
    # status (the Data page lists how many apply under the label rule and how many are stale, orphaned or
    # unresolved); counted once per ledger, then patched with the rows each key changes (Ledger.decision_total)
    return f"Human decisions: **{overrides.ledger(data).decision_total}** · store {code(data.store.short_label)}"


def show_decision_count(data: Loaded) -> None:
    """Redraw the sidebar's count of human decisions in its place (:func:`draw_data`) from a fragment's run.

    For a fragment that saves decisions (Relabel's key queue): a key reruns the fragment alone, not the sidebar,
    so the fragment draws the count after its keys are saved, on every run of its own and on the page's run
    too. Streamlit (>= 1.50) lets a fragment write into a container created outside it, ``st.sidebar``'s included,
    when the fragment wrote there on the app's last full run: its element then replaces the sidebar's own in that
    ``st.empty`` and is redrawn in place on each fragment run. So it writes on every call, a store that cannot be
    read included (the page says why).
    """
    place = st.session_state.get(session_keys.DECISION_COUNT_PLACE)
    if place is None:
        return
    try:
        line = _decision_count_line(data)
    except StoreError:
        line = "Human decisions: the override store cannot be read"
    place.caption(line)


def _data_set(data: Loaded) -> None:
    """The data set's name, its overrides and added raters, and the task filter."""
    st.caption(f"Data: **{md(data.name)}** · id {code(data.dataset_id)}")
    place = st.empty()  # a fragment that saves decisions redraws the count here (show_decision_count)
    place.caption(_decision_count_line(data))
    st.session_state[session_keys.DECISION_COUNT_PLACE] = place
    added = loading.extra_ratings(data.base_key)
    if added:
        st.caption("Added this session (not in the files): " + codes(added))
    choices = loading.tasks_of(data.all_data)
    if len(choices) > 1:
        st.session_state[session_keys.TASK_WIDGET] = data.task
        st.selectbox("Task", [ALL_TASKS, *choices], key=session_keys.TASK_WIDGET, format_func=loading.task_label,
                     on_change=_sync, args=(session_keys.TASK_WIDGET, session_keys.TASK),
                     help="Every page computes on this task's outputs and their ratings only (the "
                          "paper reports per task, Tables 3-5).")
        if data.task == ALL_TASKS:
            st.session_state[session_keys.POOLED_WIDGET] = st.session_state[session_keys.POOLED_TASKS]
            st.toggle("Pool the tasks", key=session_keys.POOLED_WIDGET, on_change=_sync,
                      args=(session_keys.POOLED_WIDGET, session_keys.POOLED_TASKS), help=POOL_HELP)
    elif choices:
        st.caption(f"Task: **{md(loading.task_label(choices[0]))}** (the only one)")


def draw_controls() -> st.delta_generator.DeltaGenerator:
    """The part of the sidebar that needs no data set (the with-overrides toggle, the key-help script), drawn before
    anything is loaded; returns the empty place at the sidebar's top that :func:`draw_data` fills once the data set
    is loaded (the frame in ``app.py`` draws the page's first paint in between)."""
    with st.sidebar:
        top = st.container()
        st.session_state[session_keys.WITH_OVERRIDES_WIDGET] = st.session_state[session_keys.WITH_OVERRIDES]
        st.toggle("Include human overrides", key=session_keys.WITH_OVERRIDES_WIDGET,
                  on_change=_sync, args=(session_keys.WITH_OVERRIDES_WIDGET, session_keys.WITH_OVERRIDES),
                  help="Off: every number is the judges' alone. On: human overrides replace judge labels.")
        st.html(KEYS_SCRIPT, unsafe_allow_javascript=True)
    return top


def draw_data(data: Loaded | None, top: st.delta_generator.DeltaGenerator) -> None:
    """The sidebar's part that reads the loaded data set: at ``top`` (from :func:`draw_controls`) who is deciding
    (:func:`identity_box`: the roles come with the store) and the data set's name, decisions and task filter
    (:func:`_data_set`); under the controls the data set's memory; the URL is kept naming the data set."""
    st.session_state.pop(session_keys.DECISION_COUNT_PLACE, None)  # a place of an earlier run is not this run's
    with top:
        identity_box(data)
        if data is not None:
            _data_set(data)
    with st.sidebar:
        _remembered()
        sync_url()
