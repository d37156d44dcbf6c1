"""Exhibits page: pinned outputs with notes in a chosen order, a full-width presentation mode, an offline HTML
(and PNG) export, and how fragile each judge metric's ranking is."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import streamlit as st  # noqa: E402

from empathy.exhibits import CURATED_FILENAME, chromium_path, export_html, export_png, read_curated  # noqa: E402
from empathy.io import DataError  # noqa: E402
from empathy.labels.exhibit_list import exhibit_list, move_exhibit, pin_exhibit, unpin_exhibit  # noqa: E402
from empathy.labels.locations import StoreError  # noqa: E402
from empathy.paths import demo_dir  # noqa: E402
from empathy_app import compute, identity, loading, session_keys, views  # noqa: E402
from empathy_app import exhibit_views as ev  # noqa: E402
from empathy_app.markup import code, md  # noqa: E402

data = loading.require_data(ratings=False)
views.show_flash_error()
views.mode_caption(data)
store, name = data.store, data.dataset_id
who = identity.access(store)
annotator = who.identity
refusal = who.why_not_curate()  # pins, notes and order are writes too
refusal_help = md(refusal) if refusal else None
if refusal:
    st.caption(f"The exhibit list is read-only for you: {md(refusal)}.")
try:
    pinned = exhibit_list(store, name)
except StoreError as error:
    st.error(f"The store cannot be used: {md(error)}")
    st.stop()

curated_path = demo_dir() / CURATED_FILENAME
if st.session_state.get(session_keys.SOURCE, {}).get("kind") == "demo" and curated_path.exists():
    try:
        curated = read_curated(curated_path, data.all_data.outputs)
    except DataError as error:
        st.error(md(error))
        st.stop()
    have = set(zip(pinned["item_id"], pinned["model"], strict=True))
    missing = [r for r in curated.to_dict("records") if (r["item_id"], r["model"]) not in have]
    if missing and st.button("Pin the demo's curated exhibits (one per mechanism)", key="exhibits_curated",
                             disabled=refusal is not None,
                             help="SA, EGM, CA and LD, each on an output where it is plain to see "
                                  "(data/exhibits.csv)."):
        try:
            for record in missing:
                pin_exhibit(store, name, record["item_id"], record["model"], record["note"], annotator=annotator)
        except StoreError as error:
            st.error(md(error))
            st.stop()
        st.rerun()

# the tabs track which one is open (a rerun on switching): Presentation hides the sidebar while it is open
listing, present, fragile = st.tabs(["Exhibits", "Presentation", "Ranking fragility"], key="exhibit_tabs",
                                    on_change="rerun")

with listing:
    if pinned.empty:
        st.info("No exhibit yet. Pin an output from the **Inspect** page (\"Pin as exhibit\").")
    for record in pinned.to_dict("records"):
        item_id, model, position = record["item_id"], record["model"], int(record["position"])
        tag = f"{position}_{item_id}_{model}"
        with st.container(border=True):
            st.markdown(f"**{position}.** item {code(item_id)} · model {code(model)}")
            note = st.text_area("Note", record["note"], key=f"exhibit_note_{tag}", label_visibility="collapsed")
            buttons = st.columns(4)
            locked = refusal is not None
            if buttons[0].button("Save note", key=f"exhibit_save_{tag}", disabled=note == record["note"] or locked,
                                 help=refusal_help):
                pin_exhibit(store, name, item_id, model, note, annotator=annotator)
                st.rerun()
            if buttons[1].button("Move up", key=f"exhibit_up_{tag}", disabled=position == 1 or locked,
                                 help=refusal_help):
                move_exhibit(store, name, item_id, model, -1)
                st.rerun()
            if buttons[2].button("Move down", key=f"exhibit_down_{tag}", disabled=position == len(pinned) or locked,
                                 help=refusal_help):
                move_exhibit(store, name, item_id, model, 1)
                st.rerun()
            if buttons[3].button("Unpin", key=f"exhibit_unpin_{tag}", disabled=locked, help=refusal_help):
                unpin_exhibit(store, name, item_id, model)
                st.rerun()

shown = ev.exhibit_views(data, pinned) if len(pinned) else []
if len(shown) < len(pinned):
    listing.caption(f"{len(pinned) - len(shown)} exhibit(s) are outside the current task filter or no longer in "
                    "the data set; they are not presented or exported.")

with present:
    if present.open:
        views.hide_sidebar()
        st.caption("Presentation: the sidebar is hidden while this tab is open (choose another tab to bring it "
                   "back). Each exhibit draws all four mechanisms in the text, with its legend.")
    if not shown:
        st.info("Nothing to present: pin outputs first.")
    else:
        step = min(int(st.session_state.get(session_keys.EXHIBIT_STEP, 0)), len(shown) - 1)
        nav = st.columns([1, 4, 1])
        if nav[0].button("◀ Previous", key="exhibit_prev", disabled=step == 0, width="stretch"):
            st.session_state[session_keys.EXHIBIT_STEP] = step - 1
            st.rerun()
        nav[1].markdown(f"<div style='text-align:center'>Exhibit {step + 1} of {len(shown)}</div>",
                        unsafe_allow_html=True)
        if nav[2].button("Next ▶", key="exhibit_next", disabled=step == len(shown) - 1, width="stretch"):
            st.session_state[session_keys.EXHIBIT_STEP] = step + 1
            st.rerun()
        ev.show_exhibit(shown[step], position=step + 1)
        # the data set by its name: for one loaded by path data.name is the path of this machine
        page = export_html(shown, dataset=data.name, signature=str(compute.report(data).signature))
        downloads = st.columns(2)
        downloads[0].download_button("Download all as HTML (opens offline)", page.encode("utf-8"),
                                     file_name="exhibits.html", mime="text/html", key="exhibit_html")
        if chromium_path() is not None and downloads[1].button("Make a PNG", key="exhibit_png_make"):
            import tempfile

            with tempfile.TemporaryDirectory() as folder:
                try:
                    target = export_png(page, Path(folder) / "exhibits.png", height=min(1400 * len(shown), 16000))
                    st.session_state[session_keys.EXHIBIT_PNG] = target.read_bytes()
                except OSError as error:
                    st.error(md(error))
        if st.session_state.get(session_keys.EXHIBIT_PNG):
            downloads[1].download_button("Download the PNG", st.session_state[session_keys.EXHIBIT_PNG],
                                         file_name="exhibits.png", mime="image/png", key="exhibit_png")

with fragile:
    st.caption("How few labels (CA) or how small a change of one item (SA, EGM) reorders two adjacent models, "
               "and the items each model's value rests on most.")
    # computed while its tab is open only (opening it reruns the page): every ranking's flips and leave-one-out
    # influence were seconds of CPU per decision at 200,000 outputs, for a tab nobody was looking at
    if fragile.open:
        ev.fragility_section(data, "exhibits_fragility")
