"""The app's frame: the pages' table (:data:`PAGES`) and navigation, headings and favicon (read by ``app.py``),
the Home page and each page's first paint, and the keyboard-key help.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from empathy_app import loading
from empathy_app.views import summary

# The icons are for the Home page's links (drawn with the Material font Streamlit serves itself). They are not
# given to st.Page: Streamlit's browser code turns the current page's icon into the favicon and fetches a
# Material icon's image from fonts.gstatic.com for that, which fails offline (emoji need an emoji font).
PAGES: tuple[tuple[str, str, str, str], ...] = (
    ("app_pages/1_Data.py", "Data", "Demo data, an upload or a path; validation; the overrides ledger.",
     ":material/database:"),
    ("app_pages/2_Overview.py", "Overview", "SA, EGM, CA and LD per model under each judge; rankings; signature.",
     ":material/leaderboard:"),
    ("app_pages/3_Inspect.py", "Inspect", "One output next to its reference, distancing highlighted; override labels.",
     ":material/search:"),
    ("app_pages/4_Relabel.py", "Relabel", "A queue of judge disagreements, one keystroke per decision.",
     ":material/edit_note:"),
    ("app_pages/5_Agreement.py", "Agreement", "Inter-judge Spearman (Table 6), human vs judges, ranking moves.",
     ":material/handshake:"),
    ("app_pages/6_Workbench.py", "Workbench", "Rater pairs with intervals, expert/LLM panels, Table 7-style stability.",
     ":material/science:"),
    ("app_pages/7_Judge.py", "Judge", "Run a judge (offline lexicon or a configured LLM) and add it as a rater.",
     ":material/gavel:"),
    ("app_pages/8_Items.py", "Items", "Every output's Eq. 1-4 terms, worst first; search, filters, side by side.",
     ":material/table_rows:"),
    ("app_pages/9_Disagreement.py", "Disagreement", "Where judges and humans disagree, by mechanism; calibration "
     "per model.", ":material/troubleshoot:"),

    ("app_pages/10_Exhibits.py", "Exhibits", "Pinned outputs with notes, a presentation mode, offline HTML; ranking "
     "fragility.", ":material/slideshow:"),
    ("app_pages/11_Judge_report.py", "Judge report", "May a judge replace the annotators? The Alt-Test per "
     "dimension, the judge's checks and one verdict line.", ":material/verified:"),
)
#: The heading (and browser tab title) of a page whose navigation title says less; other pages' heading is
#: their navigation title.
HEADINGS: dict[str, str] = {"Home": "Empathic failure in LLM outputs", "Workbench": "Agreement workbench"}
#: The favicon: an image served by the app itself (a ``:material/...:`` icon would make the browser fetch it
#: from fonts.gstatic.com, which fails offline; see :data:`PAGES`).
ICON = Path(__file__).resolve().parent / "icon.png"


def heading(title: str) -> str:
    """The heading drawn above a page (by the frame in ``app.py``) for its navigation title."""
    return HEADINGS.get(title, title)


def page_icon() -> str | Path:
    """The favicon: :data:`ICON`, or an emoji an installed copy without the image can still draw locally."""
    return ICON if ICON.is_file() else "🫶"


#: What the landing page says first (static).
HOME_INTRO = ("Measure the four mechanisms of empathic failure of *the empathy mechanisms paper* (Section 2.2): "
              "**Sentiment Attenuation** (SA), **Empathic Granularity Mismatch** (EGM), **Conflict Avoidance** (CA) "
              "and **Linguistic Distancing** (LD); compare the judges that produce them; correct their labels by "
              "hand. Every number on every page follows your overrides on the next rerun.")


def home_intro() -> None:
    """The landing page's first paint: what the app does and the links to the pages. Static, so the frame draws
    it before the data set is loaded (:func:`first_paint`): the main area is never blank while that runs."""
    st.markdown(HOME_INTRO)
    st.subheader("Pages")
    for path, label, text, icon in PAGES:
        st.page_link(path, label=f"**{label}** - {text}", icon=icon)


def home() -> None:
    """The landing page once the data set is loaded (its text and links are :func:`home_intro`): the data set's
    summary."""
    data = loading.current_data()
    st.subheader("The data set")
    if data is None:
        st.info("Choose a data set on the **Data** page.")
        st.stop()
    summary(data)


#: A page's first paint, by navigation title: static content the frame draws before anything slow (loading the
#: data set, the sidebar's counts), then the page runs as usual.
FIRST_PAINT = {"Home": home_intro}


def first_paint(title: str) -> None:
    """Draw the first paint of the page titled ``title`` (:data:`FIRST_PAINT`), if it has one."""
    paint = FIRST_PAINT.get(title)
    if paint is not None:
        paint()


def navigation(root: Path) -> list[tuple[str, str, str]]:
    """The app's pages after Home, as ``(script, title, url path)``: :data:`PAGES`, then every other
    ``app_pages/N_Name.py`` under ``root`` (sorted by file name) as ``/Name``.

    ``app.py`` builds ``st.navigation`` from this list and ``tests/test_browser_payload.py`` visits each entry,
    so a page added to ``app_pages/`` is served and checked without editing either.
    """
    pages = [(path, title, title.replace(" ", "_")) for path, title, *_ in PAGES]
    known = {path for path, *_ in PAGES}
    for extra in sorted((root / "app_pages").glob("[0-9]*_*.py")):
        if f"app_pages/{extra.name}" not in known:
            name = extra.stem.split("_", 1)[1]
            pages.append((f"app_pages/{extra.name}", name.replace("_", " "), name))
    return pages


#: The keys of each page that has them (the buttons' ``shortcut=`` on Inspect and Relabel), for the ``?`` help.
KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "inspect": (("← / →", "previous / next output of the filtered list"),),
    "relabel": (("0 / 1", "label a binary dimension (ca: 0 engages, 1 avoids the conflict) and go to the next"),
                ("0-9", "choose that level on a whole-number scale (e.g. 1-5) and go to the next"),
                ("Enter", "save the typed value of a continuous dimension (e_ref, u_gen, ...)"),
                ("S", "skip this output (it stays in the queue)"),
                ("U", "undo your last decision")),
}


@st.dialog("Keyboard keys", width="medium")
def _keys_dialog(page: str) -> None:
    rows = KEYS[page]
    st.markdown("| key | what it does |\n| --- | --- |\n" + "\n".join(f"| **{key}** | {text} |" for key, text in rows))
    st.caption("Keys act when the focus is not in a text field: after typing (the annotator name, a search, a "
               "reason) press **Tab** or click on the page first. **?** opens this help.")


def keys_help(page: str) -> None:
    """A small "Keys (?)" button that opens the page's key list in a dialog; typing ``?`` opens it too.

    ``page``: a key of :data:`KEYS`. The ``?`` key is listened for by :data:`empathy_app.sidebar.KEYS_SCRIPT` (in
    the sidebar of every page, so that it is mounted with the page, not only when this button first appears).
    """
    if page not in KEYS:
        raise ValueError(f"no key list for page {page!r}; pages with keys: {sorted(KEYS)}")
    if st.button("⌨ Keys (?)", key="keys_help", help="The keyboard keys of this page (press ? to open)"):
        _keys_dialog(page)
