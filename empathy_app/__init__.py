"""Streamlit UI of the empathy app (imports streamlit; business logic stays in ``empathy``).

The frame is ``app.py``: once per run it picks the page (``st.navigation``), configures the browser tab, puts the
session's defaults in place, draws the sidebar's controls, the heading, the one-shot message and the page's static
first paint, then loads the data set, draws the sidebar's data part and runs the page (``app_pages/N_Name.py``,
thin: ``data = loading.require_data()``, then its content).

The modules, by layer (lowest first; ``tests/test_layers.py`` enforces it, with no import cycle):

==========================  ==========================================================================================
``session_keys``            every key of ``st.session_state`` as a named constant (what it holds, who writes it), the
                            session's defaults and each page's widget-key prefix; imports nothing
``markup``, ``progress``    escaping data strings for Markdown, HTML, Plotly and CSV; the progress bar
``identity``                who decides (the signed-in identity with a login, else the sidebar's committed name),
                            the roles (secrets ``[roles]`` or ``$EMPATHY_ROLES``) and :class:`identity.Access`
``loading``                 the session's data set: files, uploads, saved uploads, imports, this session's added
                            ratings, the task filter, the store it opens; :class:`loading.Loaded`; the frame's
                            ``open_data_set`` and the pages' ``current_data`` / ``require_data``
``overrides``               the data set's human overrides: the ledger under the session's label rule, the overrides
                            that apply, the key naming them in caches
``compute``                 cached computations: text features, the recompute engine, the metrics report, effective
                            ratings, Krippendorff's alpha, standard metrics, the marks of the four mechanisms on a
                            pair and the LLM judges' own marks from their answer cache
``views``                   reusable views (the pages' table, headings, the Home page, summary, charts, value
                            widgets, key help); ``decisions``, ``keyqueue``, ``relabel_focus`` (Inspect and Relabel's
                            decisions); ``exhibit_views``, ``workbench``, ``disagreement`` (their pages' views);
                            ``intervals`` (bootstrap intervals and the audits' corrected values, cached, for
                            Overview, Agreement and Relabel); ``audit_views`` (Relabel's audit order)
``sidebar``                 the session's start (defaults; a new session reopens the data set its URL names), the
                            sidebar every page shares, and the data set remembered in the URL and the settings file
==========================  ==========================================================================================

Code reads and writes the session only through :mod:`empathy_app.session_keys` (``tests/test_session_keys.py``).
"""
