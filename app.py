"""empathy app entry point: ``streamlit run app.py`` (opens on the bundled demo data, no configuration).

The pages live in ``app_pages/`` (thin scripts over :mod:`empathy_app` and :mod:`empathy`); ``st.navigation``
gives them their titles and URLs (``/Data``, ``/Overview``, ``/Inspect``, ``/Relabel``, ``/Agreement``).
Any other ``app_pages/N_Name.py`` is added after them as ``/Name``.
"""

from pathlib import Path

import streamlit as st

from empathy_app import views

ROOT = Path(__file__).resolve().parent

# No page icons: the current page's icon becomes the favicon, and a Material icon's image is fetched from
# fonts.gstatic.com (fails offline); the favicon is the app's own image (empathy_app.state.page_setup).
pages = [st.Page(views.home, title="Home", default=True)]
pages += [st.Page(path, title=title, url_path=url_path) for path, title, url_path in views.navigation(ROOT)]
st.navigation(pages).run()
