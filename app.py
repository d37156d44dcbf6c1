"""empathy app: landing page. Run with ``streamlit run app.py``; it opens on the bundled demo data."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # so that ``empathy_app`` imports from any cwd

import streamlit as st  # noqa: E402

from empathy_app import state, views  # noqa: E402

data = state.page_setup("Empathic failure in LLM outputs")
st.markdown(
    "Measure the four mechanisms of empathic failure of *the empathy mechanisms paper* (Section 2.2): "
    "**Sentiment Attenuation** (SA), **Empathic Granularity Mismatch** (EGM), **Conflict Avoidance** (CA) "
    "and **Linguistic Distancing** (LD), compare the judges that produce them, and correct their labels by hand. "
    "Every number on every page follows your overrides on the next rerun.")
if data is None:
    st.info("Choose a data set on the **Data** page.")
    st.stop()
views.summary(data)
st.subheader("Pages")
for path, label, text in views.PAGES:
    st.page_link(path, label=label)
    st.caption(text)
