"""The app's memory of the chosen data set across reloads (URL ``?data=...``) and sessions (settings file).

Logic and validation live in :mod:`empathy.settings`; this module wires them to Streamlit: :func:`choose`
is how the Data page switches data sets (session, URL and settings file at once), :func:`restore` runs once
per new session (a reload is a new session) and :func:`sync_url` keeps the URL naming the data set on every
page, so a reload or a shared link reopens it with its overrides.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from empathy.io import DataError
from empathy.settings import Settings, default_settings_path, load_upload, resolve_key, save_upload, source_key
from empathy_app import state
from empathy_app.markup import code, md

#: The URL query parameter naming the data set.
PARAM = "data"


def settings_path() -> Path:
    """The settings file (``$EMPATHY_SETTINGS``, else ``app-settings.json`` in the user cache folder)."""
    return default_settings_path(state.user_cache_dir())


def uploads_dir() -> Path:
    """Where uploaded files are kept so they can be reopened (beside the settings file)."""
    return settings_path().parent / "uploads"


def settings() -> Settings:
    """The settings file as it is now (read on each call: another tab may have written it)."""
    return Settings.load(settings_path())


def _remember(source: dict) -> None:
    if st.session_state.get("_memory_unwritable"):
        return  # said once this session; not retried on every rerun
    try:
        settings().remember(source)
    except (OSError, ValueError) as error:
        # Remembering is a convenience: the data set is loaded whatever happens here.
        st.session_state["_memory_unwritable"] = True
        st.session_state["_memory_notice"] = f"The data set is loaded but could not be remembered: {md(error)}"


def choose(source: dict) -> None:
    """Make ``source`` the session's data set, name it in the URL and remember it in the settings file."""
    st.session_state["source"] = source
    st.session_state.pop("_link_unconfirmed", None)
    _remember(source)
    sync_url()


def save_uploaded(outputs: tuple[str, bytes], ratings: list[tuple[str, bytes]]) -> str | None:
    """Keep uploaded files so they can be reopened; their digest, or ``None`` (with a message) on failure."""
    try:
        return save_upload(uploads_dir(), outputs, ratings)
    except OSError as error:
        st.session_state["_memory_notice"] = f"The upload is loaded but could not be kept for later: {md(error)}"
        return None


def load_saved_upload(digest: str) -> None:
    """Load a saved upload into the session (``uploaded_dataset``); raises :class:`DataError` when it is gone."""
    try:
        saved = load_upload(uploads_dir(), digest)
    except (OSError, ValueError) as error:
        raise DataError(f"upload:{digest}", f"the saved upload cannot be read ({error})") from None
    st.session_state["uploaded_dataset"] = state.load_from_uploads(saved["outputs"], saved["ratings"])


def _open(source: dict) -> None:
    if source["kind"] == "upload":
        load_saved_upload(source["saved"])
    st.session_state["source"] = source


def restore() -> None:
    """Once per new session: open the data set the URL names (validated), else leave the demo.

    A path the settings file does not list is not opened: the sidebar asks first (:func:`confirm_link`).
    """
    key = st.query_params.get(PARAM)
    if not key:
        return
    resolved = resolve_key(key, settings(), uploads_dir(), kumar_directory=state.kumar_directory())
    if resolved.error:
        st.session_state["_memory_notice"] = f"Opened the demo data: {md(resolved.error)}."
        return
    if resolved.unconfirmed:
        st.session_state["_link_unconfirmed"] = resolved.unconfirmed
        return
    try:
        _open(resolved.source)
    except DataError as error:
        st.session_state["_memory_notice"] = f"Opened the demo data: the linked data set cannot be loaded: {md(error)}"


def sync_url() -> None:
    """Name the session's data set in the URL (``?data=``); the demo and an unsaved upload clear it."""
    source = st.session_state.get("source", {"kind": "demo"})
    try:
        key = None if source.get("kind") == "demo" else source_key(source)
    except (KeyError, ValueError):
        key = None
    if key is None and st.session_state.get("_link_unconfirmed"):
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


def sidebar() -> None:
    """The link to confirm, or the offer to reopen the last data set (in the sidebar, on every page)."""
    notice = st.session_state.pop("_memory_notice", None)
    if notice:
        st.warning(notice)
    unconfirmed = st.session_state.get("_link_unconfirmed")
    if unconfirmed:
        st.warning(f"This link names {code(unconfirmed)}, which was never opened on this machine. Open it only "
                   "if you trust the link.")
        if st.button("Open it", key="memory_open_link"):
            try:
                outputs, ratings = state.resolve_path(unconfirmed)
                state.load_from_paths(outputs, ratings)
            except DataError as error:
                st.session_state.pop("_link_unconfirmed", None)
                st.session_state["_memory_notice"] = f"**Not loaded.** {md(error)}"
            else:
                choose({"kind": "path", "outputs": str(outputs), "ratings": [str(p) for p in ratings]})
                st.session_state["flash"] = f"Loaded {md(outputs)} with {len(ratings)} ratings file(s)."
            st.rerun()
        if st.button("Keep the demo", key="memory_keep_demo"):
            st.session_state.pop("_link_unconfirmed", None)
            sync_url()
            st.rerun()
        return
    if st.session_state.get("source", {}).get("kind") != "demo":
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
            st.session_state["_memory_notice"] = f"**Not reopened.** {md(error)}"
        else:
            choose(last)
            st.session_state["flash"] = f"Reopened {describe(last)}."
        st.rerun()
