"""Data page: choose the data set (demo, upload, path or the Kumar et al. 2025 import); where its store is and
whether it is read-only; export or import the ledger; the team's progress per annotator and, for an adjudicator,
the assignment of outputs to annotators (k per output, an overlap share)."""

import hashlib
import re
import tempfile
from pathlib import Path

import streamlit as st  # noqa: E402

from empathy.datasets import IMPORTERS  # noqa: E402
from empathy.io import DataError  # noqa: E402
from empathy.labels.locations import StoreError, mask_location  # noqa: E402
from empathy.labels.queue_state import (  # noqa: E402
    DEFAULT_K,
    DEFAULT_OVERLAP,
    annotator_progress,
    assign,
    assignments,
    clear_assignments,
)
from empathy.labels.records import output_hashes  # noqa: E402
from empathy.labels.roles import ROLE_NAMES, AccessDenied  # noqa: E402
from empathy.labels.transfer import export_csv, export_jsonl, import_ledger  # noqa: E402
from empathy_app import decisions, import_report, loading, overrides, session_keys, sidebar, views  # noqa: E402
from empathy_app.markup import code, md  # noqa: E402

data = loading.current_data()  # None when it could not be loaded: this page still offers the sources
views.show_flash_error()

SOURCES = {"demo": "Demo data", "upload": "Upload files", "path": "Path on this machine"}
# Every importer of the registry whose folder is present is a source (empathy.datasets.IMPORTERS).
import_dirs = {name: loading.import_directory(name) for name in IMPORTERS}
SOURCES.update({name: IMPORTERS[name].label for name, folder in import_dirs.items() if folder is not None})
current_kind = st.session_state[session_keys.SOURCE]["kind"]
kind = st.radio("Source", list(SOURCES), format_func=SOURCES.get,
                index=list(SOURCES).index(current_kind) if current_kind in SOURCES else 0,
                horizontal=True, key="data_source_kind")
for name in [name for name, folder in import_dirs.items() if folder is None]:
    st.caption(f"The {IMPORTERS[name].title} annotations are offered here when "
               f"{code(IMPORTERS[name].expected_location())} exists (`EMPATHY_SHARED` names another `shared` "
               f"folder; see `{IMPORTERS[name].doc}`).")

if kind == "demo":
    st.caption("The bundled demo data set (`data/outputs.csv` and every `data/ratings*.csv`): fictional texts "
               "written for demonstration; see `data/README.md`.")
    if current_kind != "demo" and st.button("Use the demo data", key="data_use_demo", type="primary"):
        sidebar.choose({"kind": "demo"})
        st.session_state[session_keys.FLASH] = "Loaded the demo data."
        st.rerun()
elif kind == "upload":
    st.caption("Uploaded files are kept in the app's cache folder (readable by you only) so that a reload or a "
               "later visit can reopen them. Outputs: one row per (item_id, model) with `reference` and "
               "`generation` (optional `task`; "
               "columns `<rater>:<dimension>` are ratings). Ratings: long form `item_id, model, rater, "
               "dimension, value`. CSV, JSONL or Parquet.")
    outputs_file = st.file_uploader("Outputs file", type=["csv", "jsonl", "json", "parquet"],
                                    key="data_upload_outputs")
    ratings_files = st.file_uploader("Ratings files (any number)", type=["csv", "jsonl", "json", "parquet"],
                                     accept_multiple_files=True, key="data_upload_ratings")
    if outputs_file is not None:
        # What the server holds now: a click while a file is still uploading would load without it.
        st.caption(f"Ready to load: {md(outputs_file.name)} with {len(ratings_files or [])} ratings file(s).")
    if st.button("Load the uploaded files", key="data_load_upload", type="primary", disabled=outputs_file is None):
        uploaded = (outputs_file.name, outputs_file.getvalue())
        uploaded_ratings = [(f.name, f.getvalue()) for f in ratings_files or []]
        try:
            dataset = loading.load_from_uploads(uploaded, uploaded_ratings)
        except DataError as error:
            st.error(f"**Not loaded.** {md(error)}")
        else:
            st.session_state[session_keys.UPLOADED_DATASET] = dataset
            # kept in the app's cache folder (0600) so a reload or a later visit can reopen it
            digest = sidebar.save_uploaded(uploaded, uploaded_ratings)
            source = {"kind": "upload", "name": outputs_file.name}
            if digest is None:
                st.session_state[session_keys.SOURCE] = source
            else:
                sidebar.choose({**source, "saved": digest})
            st.session_state[session_keys.FLASH] = (f"Loaded {md(outputs_file.name)} with "
                                                    f"{len(ratings_files or [])} ratings file(s).")
            st.rerun()
elif kind in IMPORTERS:
    importer = IMPORTERS[kind]
    try:
        overrides_go = code(mask_location(loading.store_path_for({"kind": kind}, None)))
    except StoreError as error:  # $EMPATHY_STORE names no usable location (its one line masks it)
        overrides_go = f"no usable store ({md(error)})"
    st.caption(f"{importer.description} From {code(import_dirs[kind])}, imported with `{importer.module}` (see "
               f"`{importer.doc}`). The folder is read-only: overrides go to {overrides_go}.")
    if current_kind != kind and st.button("Import and load", key=f"data_load_{kind}", type="primary"):
        try:
            loading.load_import(kind, import_dirs[kind])
        except DataError as error:
            st.error(f"**Not loaded.** {md(error)}")
        else:
            sidebar.choose({"kind": kind, "directory": str(import_dirs[kind])})
            # the title is a registry constant, not data
            st.session_state[session_keys.FLASH] = f"Loaded the {importer.title} annotations."
            st.rerun()
else:
    st.caption("A folder holding `outputs.csv|jsonl|parquet`, or an outputs file; then choose its ratings files "
               "(the `ratings*` files beside it at first). Overrides are stored next to the data.")
    typed = st.text_input("Folder or outputs file", key="data_path_text",
                          value=st.session_state[session_keys.SOURCE].get("outputs", ""))
    try:
        found_outputs, found_ratings = loading.resolve_path(typed) if typed.strip() else (None, [])
    except DataError:
        found_outputs, found_ratings = None, []  # reported when "Load from path" is pressed
    chosen_ratings: list[str] = []
    extra_ratings = ""
    if found_outputs is not None:
        source = st.session_state[session_keys.SOURCE]
        same = source.get("kind") == "path" and source.get("outputs") == str(found_outputs)
        candidates = [str(p) for p in loading.ratings_candidates(found_outputs)]
        default = [r for r in (source["ratings"] if same else map(str, found_ratings)) if r in candidates]
        chosen_ratings = st.multiselect(
            "Ratings files", candidates, default=default, format_func=lambda p: Path(p).name,
            key=f"data_path_ratings_{hashlib.sha1(str(found_outputs).encode()).hexdigest()[:8]}",
            help="Every CSV, JSONL or Parquet file beside the outputs file; the `ratings*` ones are chosen at first.")
        extra_ratings = st.text_area("Other ratings files (one path per line)", key="data_path_extra",
                                     height=68, placeholder="/elsewhere/ratings_gpt.jsonl")
        st.caption("No ratings file: only LD is computed (it needs only the texts); a judge can rate the outputs "
                   "on the **Judge** page.")
    if st.button("Load from path", key="data_load_path", type="primary"):
        try:
            outputs_path, _ = loading.resolve_path(typed)
            ratings_paths = [Path(p) for p in chosen_ratings] + [
                Path(line.strip()).expanduser() for line in extra_ratings.splitlines() if line.strip()]
            loading.load_from_paths(outputs_path, ratings_paths)
        except DataError as error:
            st.error(f"**Not loaded.** {md(error)}")
        else:
            sidebar.choose({"kind": "path", "outputs": str(outputs_path),
                           "ratings": [str(p) for p in ratings_paths]})
            st.session_state[session_keys.FLASH] = (f"Loaded {md(outputs_path)} with {len(ratings_paths)} "
                                                    "ratings file(s).")
            st.rerun()

st.divider()
if data is None:
    st.info("No data set is loaded. Fix the error above or choose another source.")
    st.stop()

st.subheader(f"Loaded: {md(data.name)}")
views.summary(data, full=True)
if data.filtered:
    st.caption(f"The other pages show the task **{md(loading.task_label(data.task))}** only "
               f"({len(data.dataset.outputs)} outputs; choose *All tasks* in the sidebar for all). This page shows "
               "the whole data set.")
if data.all_data.ratings.empty:
    st.info("This data set has no ratings yet: the other pages need judge ratings. Add ratings files, or run "
            "a judge on the **Judge** page.")
source_now = st.session_state[session_keys.SOURCE]
if source_now["kind"] in IMPORTERS:
    _, report = loading.load_import(source_now["kind"], source_now["directory"])
    import_report.show(report)
for title, table, table_key in (("Outputs table", data.all_data.outputs, "data_outputs_table"),
                                ("Ratings table", data.all_data.ratings, "data_ratings_table")):
    with st.expander(title, expanded=False):
        # a table is sent to the browser on every run, expanded or not: at 3 million ratings that was seconds
        views.table_preview(table, key=table_key)

st.subheader("Human overrides ledger")
st.caption(f"Overrides of this data set (named {code(data.dataset_id)} in the store) live in "
           f"{overrides.store_path_note(data)}; each is stored (committed) before the app says *Saved*.")
if data.store.read_only:
    st.warning("The store is **read-only** (opened for reading: the file or its folder cannot be written): every "
               "page reads it, and every write is refused.")
notice = st.session_state.get(session_keys.STORE_NOTICE)
if notice:
    st.info(notice)
who = decisions.access(data)


def _ledger_file(export, name: str) -> bytes:
    """The ledger of this data set as one export writes it (:mod:`empathy.labels.transfer`)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        export(data.store, path, data.dataset_id)
        return path.read_bytes()


# the applied overrides of the whole data set (whatever the task filter) under the session's label rule: the
# same ledger Relabel and Overview count with
ledger_now = overrides.ledger(data)
current = ledger_now.applied
# the store name is a file name or "upload:NAME": keep only characters every file system accepts
export_stem = "overrides-" + re.sub(r"[^\w.-]+", "_", data.dataset_id).strip("._")
left, right = st.columns(2)
with left:
    counts = ledger_now.decision_counts
    st.markdown(f"**{views.plural(counts['applied'], 'decision')}** applied to "
                f"{views.plural(len(current), 'judge label')}. Export the ledger:")
    st.caption(md(ledger_now.summary()))
    buttons = st.columns(2)
    # written when a button is pressed (Streamlit calls the function then), not on every run of the page
    views.download_later(buttons[0], "Download JSONL", lambda: _ledger_file(export_jsonl, "ledger.jsonl"),
                         file_name=f"{export_stem}.jsonl", mime="application/jsonl", key="data_export_jsonl")
    views.download_later(buttons[1], "Download CSV", lambda: _ledger_file(export_csv, "ledger.csv"),
                         file_name=f"{export_stem}.csv", mime="text/csv", key="data_export_csv")
with right:
    ledger = st.file_uploader("Import a ledger (JSONL or CSV)", type=["jsonl", "json", "csv"], key="data_import_ledger")
    if ledger is not None:
        st.caption(f"Ready to import: {md(ledger.name)}.")
    import_refusal = who.why_not("decide")
    if import_refusal:
        st.caption(f"Importing is not open to you: {md(import_refusal)}.")
    if st.button("Import into this data set", key="data_import_button",
                 disabled=ledger is None or import_refusal is not None):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"ledger{Path(ledger.name).suffix.lower()}"
            path.write_bytes(ledger.getvalue())
            try:
                # a record without a text hash (a version 1 ledger) is taken as decided on the text loaded now
                count = import_ledger(data.store, path, dataset_id=data.dataset_id, name=ledger.name,
                                      hashes=output_hashes(data.all_data.outputs))
            except (DataError, AccessDenied) as error:
                st.error(f"**Not imported.** {md(error)}")
            else:
                st.session_state[session_keys.FLASH] = f"Imported {count} override(s) from {md(ledger.name)}."
                st.rerun()
if len(current):
    st.dataframe(current, hide_index=True, key="data_overrides_table")
audit = data.store.audit(data.dataset_id)
if len(audit):
    with st.expander(f"Audit trail ({len(audit)} change(s), newest first)"):
        views.table_preview(audit.iloc[::-1], key="data_audit_table")


def _assignment_form(progress, design) -> None:
    """An adjudicator's form: give each output to annotators (k on an overlap share, one on the rest)."""
    roles = data.store.roles
    known = set(progress["annotator"].astype(str))  # whoever was assigned, decided or skipped here
    if roles is not None:
        known |= {roles.names.get(key, key) for key, role in roles.members.items() if role in ROLE_NAMES[1:]}
    with st.form("data_assign_form", border=True):
        chosen = st.multiselect("Annotators", sorted(known), default=sorted(known), key="data_assign_people",
                                help="Those the roles list as annotators or adjudicators, and those who decided, "
                                     "skipped or were assigned here; add others below.")
        typed = st.text_input("More annotators (comma-separated)", key="data_assign_more")
        columns = st.columns(3)
        k = columns[0].number_input("Annotators per overlapping output (k)", min_value=1, value=DEFAULT_K, step=1,
                                    key="data_assign_k")
        overlap = columns[1].number_input("Overlap share", min_value=0.0, max_value=1.0, value=DEFAULT_OVERLAP,
                                          step=0.05, key="data_assign_overlap",
                                          help="The share of outputs given to k annotators (human-human agreement "
                                               "has data by design); every other output goes to one.")
        seed = columns[2].number_input("Seed", min_value=0, value=0, step=1, key="data_assign_seed")
        replace = st.checkbox("Replace the design in place (decisions and skips stay)", key="data_assign_replace",
                              disabled=design.empty)
        submitted = st.form_submit_button("Assign outputs", key="data_assign_button", type="primary")
    if not submitted:
        return
    people = [*chosen, *(name.strip() for name in typed.split(",") if name.strip())]
    try:
        plan = assign(data.store, data.dataset_id, data.all_data.outputs, people, k=int(k), overlap=float(overlap),
                      seed=int(seed), by=who.identity, replace=replace)
    except (AccessDenied, StoreError, TypeError, ValueError) as error:
        st.error(f"**Not assigned.** {md(error)}")
        return
    loads = plan.loads()
    st.session_state[session_keys.FLASH] = (
        f"Assigned {plan.n_outputs} outputs to {len(loads)} annotators (design {code(plan.digest)}): "
        f"{plan.n_overlap} to {plan.k} annotators each, {loads.min()}-{loads.max()} outputs per annotator.")
    st.rerun()


st.subheader("Team progress and assignments")
try:
    design_now = assignments(data.store, data.dataset_id)
    progress_now = annotator_progress(data.store, data.dataset_id, outputs=overrides.output_keys(data),
                                      decisions=overrides.ledger(data).decisions)
    decisions.team_progress(progress_now, key="data_team_progress")
except StoreError as error:
    st.error(f"The override store cannot be used: {md(error)}")
    st.stop()
if len(design_now):
    first = design_now.iloc[0]
    st.caption(f"Assignment design {code(first['design'])}: {design_now['annotator'].nunique()} annotators, "
               f"k = {int(first['k'])} on an overlap share of {float(first['overlap']):g}, seed {int(first['seed'])}, "
               f"by {md(first['assigned_by'] or '(unnamed)')}. Each annotator's Relabel queue holds their outputs.")
assign_refusal = who.why_not("assign")
if assign_refusal:
    st.caption(f"Assigning outputs is not open to you: {md(assign_refusal)}.")
else:
    with st.expander("Assign outputs to annotators", expanded=design_now.empty):
        _assignment_form(progress_now, design_now)
        if len(design_now) and st.button("Remove the assignment design", key="data_assign_clear",
                                         help="Every queue shows every output again; decisions and skips stay."):
            try:
                removed = clear_assignments(data.store, data.dataset_id, by=who.identity)
            except (AccessDenied, StoreError) as error:
                st.error(f"**Not removed.** {md(error)}")
            else:
                st.session_state[session_keys.FLASH] = f"Removed the assignment design ({removed} rows)."
                st.rerun()
