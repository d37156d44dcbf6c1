"""Every key of the app's ``st.session_state``, one named constant each: what it holds and who writes it.

Code in ``app.py``, ``app_pages/`` and ``empathy_app/`` reads and writes the session only through these names
(``tests/test_session_keys.py`` fails on a raw string key). Three kinds of key:

* **state** the app keeps for the session (the data set's source, the sidebar's choices, one-shot messages);
* **widget mirrors** ``_w_<name>``: a widget whose value is copied into a state key by its ``on_change``
  (a widget's own key is dropped when a page that does not draw it runs; the state key survives);
* **widget keys read elsewhere**: a page's widget (named with the page's prefix, :data:`PAGE_PREFIXES`) whose
  value another page or module reads or sets, e.g. the Inspect filters that Disagreement's "Open in Inspect"
  clears. A widget key only its own page uses stays a literal in that page.

The values are the keys as they always were (tests and browsers that remember a session see no change). This
module imports nothing: it is the lowest layer of the app (``tests/test_layers.py``).
"""

from __future__ import annotations

# ------------------------------------------------------------------------------------------ the frame
#: Set once per session by :func:`empathy_app.sidebar.init_session` (the defaults below are in place).
INITIALISED = "_initialised"
#: The data set of this run: a :class:`empathy_app.loading.Loaded`, or ``None`` when it could not be loaded.
#: Written by the frame in ``app.py`` (:func:`empathy_app.loading.open_data_set`) before the page runs; pages read
#: it through :func:`empathy_app.loading.current_data` / :func:`empathy_app.loading.require_data`.
DATA = "_data"
#: The one-shot Markdown message shown (then cleared) under the next run's title ("Saved ..."); its data parts
#: escaped by whoever composes it (:func:`empathy_app.markup.md`). Written by any page or view that acts.
FLASH = "flash"
#: A one-shot error message shown by the pages that call :func:`empathy_app.views.show_flash_error`.
FLASH_ERROR = "flash_error"

# ------------------------------------------------------------------------------------------ the data set
#: How the data set was chosen: ``{"kind": "demo"}``, ``{"kind": "path", "outputs": ..., "ratings": [...]}``,
#: ``{"kind": "upload", "name": ..., "saved": digest?}`` or ``{"kind": <importer>, "directory": ...}``. Written by
#: the Data page, :mod:`empathy_app.sidebar` (the URL and the settings file), :mod:`empathy_app.loading` (a saved
#: ratings file joins a path source; a source that cannot be read falls back to the demo); a test may set it
#: before the first run (then never replaced by the URL's).
SOURCE = "source"
#: The :class:`empathy.io.Dataset` of the current upload (Data page, or a saved upload reopened by loading).
UPLOADED_DATASET = "uploaded_dataset"
#: The loaded files of the source and their content key, kept while the files are unchanged (loading).
BASE = "_base"
#: The data set with this session's added ratings and the task filter applied (loading).
DERIVED = "_derived"
#: Ratings added this session (Judge page): base content key -> {rater: ExtraRatings} (loading).
EXTRA_RATINGS = "extra_ratings"

# ------------------------------------------------------------------------------------------ the sidebar
#: The task filter (``""`` = all tasks); mirrored from :data:`TASK_WIDGET`; reset by loading when the new data
#: set lacks the task.
TASK = "task"
TASK_WIDGET = "_w_task"
#: All tasks: per task (the paper's reading) unless pooled explicitly; mirrored from :data:`POOLED_WIDGET`.
POOLED_TASKS = "pooled_tasks"
POOLED_WIDGET = "_w_pooled"
#: The global judge-only / with-overrides toggle; mirrored from :data:`WITH_OVERRIDES_WIDGET`.
WITH_OVERRIDES = "with_overrides"
WITH_OVERRIDES_WIDGET = "_w_with_overrides"
#: Local mode (no login configured): the annotator name committed with the sidebar's one name box and its button
#: (:mod:`empathy_app.identity`); recorded with every decision; put in place from the settings file by
#: :func:`empathy_app.sidebar.init_session`, written by the box's button. Typing alone never commits it.
ANNOTATOR = "annotator"
#: The sidebar's name box (inside a form: sent with its button only).
ANNOTATOR_WIDGET = "_w_annotator"
#: A message of the data set's memory for the sidebar (could not remember, a link that failed); shown once.
MEMORY_NOTICE = "_memory_notice"
#: The settings file could not be written this session (said once, not retried on every rerun).
MEMORY_UNWRITABLE = "_memory_unwritable"
#: A path named by the URL that this machine never opened: the sidebar asks before opening it.
LINK_UNCONFIRMED = "_link_unconfirmed"
#: The place of the sidebar's count of human decisions in this run (an ``st.empty``), written by
#: :func:`empathy_app.sidebar.draw_data`; a fragment that saves decisions redraws the count there
#: (:func:`empathy_app.sidebar.show_decision_count`) without rerunning the page.
DECISION_COUNT_PLACE = "_decision_count_place"
#: The uploads' store left in the working directory by an earlier version was looked for (once per session;
#: loading).
STORE_ADOPTION_CHECKED = "_store_adoption_checked"
#: What that search found and did (escaped Markdown), shown when it happened and on the Data page (loading).
STORE_NOTICE = "_store_notice"

# ------------------------------------------------------------------------------------------ labels
#: The label rule when annotators differ (latest / majority / adjudicated); mirrored from
#: :data:`LABEL_RULE_WIDGET` (Relabel's select, :func:`empathy_app.decisions.label_rule_select`).
LABEL_RULE = "label_rule"
LABEL_RULE_WIDGET = "_w_label_rule"

# ------------------------------------------------------------------------------------------ Relabel
#: (dimension, item_id, model, store version when shown) of the output on screen (one output at a time; the
#: version is :meth:`empathy.labels.sqlite.OverrideStore.version`, the store's commit order); ``None`` once decided.
RELABEL_SHOWN = "relabel_shown"
#: (metric, judge, task) -> {model: (value, rank)} as last shown in the live table (Relabel page).
RELABEL_LIVE_PREVIOUS = "relabel_live_previous"
#: Blind mode (judge labels hidden); mirrored from :data:`RELABEL_BLIND_WIDGET`.
RELABEL_BLIND = "relabel_blind"
RELABEL_BLIND_WIDGET = "_w_relabel_blind"
#: Relabel's widgets read elsewhere: the reason box (read by the key queue), the order radio, and the
#: dimension and task selects (set by :func:`empathy_app.relabel_focus.open_relabel`).
RELABEL_REASON = "relabel_reason"
RELABEL_ORDER = "relabel_order"
RELABEL_DIMENSION = "relabel_dimension"
RELABEL_TASK = "relabel_task"
#: A queue kept to chosen outputs: ``{"keys": [(item_id, model), ...], "dimension": str, "label": str}``
#: (relabel_focus, from the Disagreement page).
RELABEL_FOCUS = "relabel_focus"
#: The key queue's component; its state holds ``{"events": {"client": ..., "events": [...]}}`` (keyqueue).
RELABEL_KEYQUEUE = "relabel_keyqueue"
#: Per browser client, the number of the last key-queue event applied or refused (keyqueue).
RELABEL_ACKED = "relabel_acked"
#: The store's version (commit order, never a clock) when each output was first sent to this session (keyqueue;
#: "decided meanwhile": another's decision with a later ``seq``).
RELABEL_ISSUED = "relabel_issued"
#: What the last batch of key-queue events did: a list of :class:`empathy_app.keyqueue.Outcome`.
RELABEL_OUTCOMES = "relabel_outcomes"
#: The reason text already recorded with a decision, so the next one does not repeat it (keyqueue, Relabel).
RELABEL_REASON_USED = "relabel_reason_used"
#: The live metric's component beside the queue (keyqueue).
RELABEL_LIVE_METRIC = "relabel_live_metric"
#: A random id of this session: the browser keeps one event queue per session (keyqueue).
RELABEL_SESSION = "relabel_session"
#: The audit design Relabel's "audit sample" order follows: its full digest (a select of
#: :func:`empathy_app.audit_views.panel`, set there when a new audit is drawn; read by the queue's fragment).
RELABEL_AUDIT_DESIGN = "relabel_audit_design"

# ------------------------------------------------------------------------------------------ Inspect
#: The output open on Inspect ("item · model"), a selectbox; set by Disagreement's "Open in Inspect".
INSPECT_PICK = "_w_inspect_pick"
#: Inspect's "go to output number" box, drawn when the picker lists a window of the outputs; its callback moves
#: :data:`INSPECT_PICK` and empties it.
INSPECT_GO_TO = "inspect_go_to"
#: Inspect's filters, cleared by Disagreement's "Open in Inspect".
INSPECT_TASK = "inspect_task"
INSPECT_MODEL = "inspect_model"
INSPECT_JUDGE = "inspect_judge"
INSPECT_DIMENSION = "inspect_dimension"
INSPECT_VALUE = "inspect_value"
INSPECT_DISAGREE = "inspect_disagree"

# ------------------------------------------------------------------------------------------ other pages
#: Items: the "worst first by" select (the page puts a valid default in), the open row's select, the table
#: selection and the table's order (sort, search, filters) last seen (:func:`empathy_app.views.follow_table_selection`:
#: a new order opens its top row).
ITEMS_SORT = "items_sort"
ITEMS_PICK = "items_pick"
ITEMS_TABLE_SELECTION = "items_table_selection"
ITEMS_TABLE_ORDER = "items_table_order"
#: Disagreement: the open slice's select and the ranked table's selection last seen.
DIS_SLICE = "dis_slice"
DIS_RANKED_SELECTION = "dis_ranked_selection"
#: Judge: the last run's summary for the page (rater, stats, signature, missing ratings).
JUDGE_LAST_RUN = "judge_last_run"
#: Judge: the config path box (also read by :func:`empathy_app.compute.judged_for`).
JUDGE_CONFIG_PATH = "judge_config_path"
#: Exhibits: the presentation's step and the PNG made of the exhibits (bytes; not ``exhibit_png``, the key of its
#: download button: a value set under a button's key makes Streamlit refuse to draw the button).
EXHIBIT_STEP = "exhibit_step"
EXHIBIT_PNG = "exhibit_png_bytes"
#: Overview: the content keys whose standard metrics were asked for (computed on demand only; views).
STANDARD_COMPUTED = "_standard_computed"
#: Workbench: the stability tables were asked for in this session (computed on request on large data).
WB_STABILITY_ASKED = "wb_stability_asked"


def kept(widget_key: str) -> str:
    """The key under which the Judge page keeps a widget's value across page switches (a widget's own state is
    dropped when another page runs)."""
    return f"_kept_{widget_key}"


#: The Judge page's config path as last typed (read by :func:`empathy_app.compute.judged_for`).
JUDGE_CONFIG_PATH_KEPT = kept(JUDGE_CONFIG_PATH)

#: The session's defaults, put in place once by :func:`empathy_app.sidebar.init_session` (deep-copied: no
#: mutable default is shared between sessions).
DEFAULTS: dict[str, object] = {
    SOURCE: {"kind": "demo"},
    WITH_OVERRIDES: True,
    FLASH: None,
    TASK: "",
    POOLED_TASKS: False,
    EXTRA_RATINGS: {},
}

#: Each page's widget-key prefix (widget keys are namespaced per view; a mirror is ``_w_`` + the prefix).
#: ``tests/test_session_keys.py`` checks every ``key=`` of a page against it; a new page adds its row.
PAGE_PREFIXES: dict[str, str] = {
    "app_pages/1_Data.py": "data_",
    "app_pages/2_Overview.py": "overview_",
    "app_pages/3_Inspect.py": "inspect",
    "app_pages/4_Relabel.py": "relabel",
    "app_pages/5_Agreement.py": "agreement_",
    "app_pages/6_Workbench.py": "wb_",
    "app_pages/7_Judge.py": "judge_",
    "app_pages/8_Items.py": "items",
    "app_pages/9_Disagreement.py": "dis",
    "app_pages/10_Exhibits.py": "exhibit",
    "app_pages/11_Judge_report.py": "jr_",
}
