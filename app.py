"""empathy app entry point: ``streamlit run app.py`` (opens on the bundled demo data, no configuration).

This file is the frame every page shares (Streamlit's ``st.navigation``): on every run it picks the page, then
configures the browser tab, puts the session's defaults in place (a new session reopens the data set its URL
names), draws the sidebar's controls, the page's heading, the one-shot ``flash`` message and the page's static
first paint (the Home page's text and links), and only then loads the data set (kept for the page), draws the
sidebar's data part and runs the page: the main area is drawn before anything slow. A page is thin:
``data = loading.require_data()`` (or ``loading.current_data()``), then its content; no page repeats these steps.

The pages live in ``app_pages/`` (thin scripts over :mod:`empathy_app` and :mod:`empathy`); ``st.navigation``
gives them their titles and URLs (``/Data``, ``/Overview``, ``/Inspect``, ``/Relabel``, ``/Agreement``...), and a
deep link goes through this frame too. Any other ``app_pages/N_Name.py`` is added after them as ``/Name``.
"""

from pathlib import Path

import streamlit as st

from empathy_app import frame, loading, session_keys, sidebar

ROOT = Path(__file__).resolve().parent

# No page icons: the current page's icon becomes the favicon, and a Material icon's image is fetched from
# fonts.gstatic.com (fails offline); the favicon is the app's own image (frame.page_icon).
pages = [st.Page(frame.home, title="Home", default=True)]
pages += [st.Page(path, title=title, url_path=url_path) for path, title, url_path in frame.navigation(ROOT)]
page = st.navigation(pages)
heading = frame.heading(page.title)
st.set_page_config(page_title=f"{heading} · empathy", page_icon=frame.page_icon(), layout="wide")
sidebar.init_session()
# Nothing slow before the main area's first paint: the sidebar's controls need no data set, the heading, the flash
# and the page's static first paint (the Home page's text and links) are drawn before the data set is loaded and
# the sidebar's data part (name, decisions, task filter) is drawn into the place kept at its top (issue 26 item 9:
# the main area stayed blank for 13 s while the sidebar loaded).
sidebar_top = sidebar.draw_controls()
st.title(heading)
flash = st.session_state.get(session_keys.FLASH)
if flash:
    st.success(flash)
    st.session_state[session_keys.FLASH] = None
frame.first_paint(page.title)
data = loading.open_data_set()
sidebar.draw_data(data, sidebar_top)
page.run()
