"""Judge page: run the offline lexicon judge or a configured LLM judge over the loaded data; add it as a rater."""

from pathlib import Path

import streamlit as st  # noqa: E402

from empathy.identifiers import identifier_problem  # noqa: E402
from empathy.judges import (  # noqa: E402
    LEXICON_JUDGE,
    PROTOCOL_DIMENSIONS,
    PROTOCOLS,
    JudgeConfigError,
    available_judges,
    default_cache_path,
    load_config,
    redact,
    run_judge,
)
from empathy.judges.config import api_key, default_config_path  # noqa: E402
from empathy.progress import Tracker  # noqa: E402
from empathy_app import loading, session_keys, views  # noqa: E402
from empathy_app.markup import code, md, people_csv  # noqa: E402
from empathy_app.progress import ProgressBar  # noqa: E402

data = loading.require_data(ratings=False)
views.show_flash_error()
st.caption("Rate the loaded outputs with a judge and add its ratings as a new rater: Overview, Inspect, Relabel "
           "and Agreement include it at once. The offline `lexicon` judge is a transparent baseline (see "
           "`docs/judges.md`); LLM judges come from a judges config file (TOML or JSON).")

# ------------------------------------------------------------------------------------------------ judges
try:
    default_config = default_config_path()
except OSError:
    default_config = None


def _kept(key: str, default: object, valid: list | None = None) -> None:
    """Give the widget ``key`` the value kept from an earlier visit (widget state is dropped on page switch)."""
    kept = st.session_state.setdefault(session_keys.kept(key), default)
    if valid is not None and (kept not in valid if not isinstance(kept, list) else any(k not in valid for k in kept)):
        kept = st.session_state[session_keys.kept(key)] = default
    st.session_state[key] = kept


def _keep(key: str) -> None:
    st.session_state[session_keys.kept(key)] = st.session_state[key]


_kept(session_keys.JUDGE_CONFIG_PATH, str(default_config) if default_config else "")
config_text = st.text_input(
    "Judges config file (TOML or JSON)", key=session_keys.JUDGE_CONFIG_PATH, on_change=_keep,
    args=(session_keys.JUDGE_CONFIG_PATH,),
    placeholder="judges.toml (empty: only the offline lexicon judge)",
    help="Defaults to $EMPATHY_JUDGES_CONFIG, else ./judges.toml. API keys are never in this file: each judge "
         "names an environment variable (api_key_env), read from the environment or Streamlit secrets.")
judges = {LEXICON_JUDGE.name: LEXICON_JUDGE}
if config_text.strip():
    try:
        judges = available_judges(load_config(Path(config_text.strip()).expanduser()))
    except JudgeConfigError as error:
        st.error(f"**Config not loaded** (only the offline judge is available). {md(redact(error))}")


def _describe(name: str) -> str:
    judge = judges[name]
    if judge.kind == "lexicon":
        return f"{name} (offline, built in)"
    return f"{name} ({judge.model} at {judge.endpoint})"


left, middle, right = st.columns([3, 2, 2])
_kept("judge_name", LEXICON_JUDGE.name, list(judges))
judge_name = left.selectbox("Judge", list(judges), format_func=_describe, key="judge_name", on_change=_keep,
                            args=("judge_name",))
judge = judges[judge_name]
is_llm = judge.kind == "llm"
concurrency = int(middle.number_input("Concurrency (requests in flight)", min_value=1, max_value=512,
                                      value=int(judge.concurrency), step=1, key=f"judge_concurrency_{judge_name}",
                                      disabled=not is_llm, help="LLM judges only; the config's value by default."))
_kept("judge_cache", True)
use_cache = right.checkbox("Use the answer cache", key="judge_cache", disabled=not is_llm, on_change=_keep,
                           args=("judge_cache",),
                           help=f"SQLite cache of valid answers ({code(default_cache_path())}): a re-run makes no "
                                "call for them and retries only what was missing.")

if not is_llm:  # the figure comes from the judge's own description (bench/kumar2025_lexicon_judge.py)
    st.warning(f"The `lexicon` judge is an {judge.description}.")
key_ok = True
if is_llm:
    if judge.api_key_env:
        try:
            api_key(judge, st.secrets)
        except JudgeConfigError:
            key_ok = False
            st.warning(f"The API key variable {code(judge.api_key_env)} is not set. Set it in the environment of the "
                       "app, or add it to `.streamlit/secrets.toml`; it is never typed or shown here.")
        else:
            st.caption(f"API key: from {code(judge.api_key_env)} (environment or Streamlit secrets; not shown).")
    else:
        st.caption("No api_key_env: a keyless endpoint (e.g. a local server).")

protocol_help = {name: f"{name} ({', '.join(dims)})" for name, dims in PROTOCOL_DIMENSIONS.items()}
_kept("judge_protocols", list(PROTOCOLS), list(PROTOCOLS))
chosen = st.multiselect("Protocols", list(PROTOCOLS), key="judge_protocols", format_func=protocol_help.get,
                        on_change=_keep, args=("judge_protocols",),
                        help="affect -> e_ref, e_gen (SA); disturbing -> u_ref, u_gen (EGM, one request per "
                             "sentence for LLM judges); conflict -> ca (CA).")
_kept("judge_paper_tasks", True)
paper_tasks = st.checkbox(
    "The paper's task mapping", key="judge_paper_tasks", on_change=_keep, args=("judge_paper_tasks",),
    help="On by default: news gets affect + disturbing, translation affect, counseling affect + conflict (Section "
         "4), each among the protocols above; outputs of other tasks get the protocols above. Off: every chosen "
         "protocol on every output, CA and EGM included where the paper does not score them. The signature says "
         "which (tasks=paper or tasks=all).")

taken = sorted(set(data.all_data.raters))
suggested = loading.free_rater_name(taken, judge.name)
rater = st.text_input("Name of the new rater", value=suggested, key=f"judge_rater_{judge_name}_{len(taken)}",
                      help="The judge's ratings are added under this name; a name already in the data set is "
                           "refused (two runs are never merged under one name).").strip()

outputs = data.dataset.outputs
scope = (f"the **{len(outputs)}** outputs of the task **{md(loading.task_label(data.task))}** (sidebar)"
         if data.filtered else f"all **{len(outputs)}** outputs")
problems = []
if not rater:
    problems.append("Enter a name for the new rater.")
elif identifier_problem(rater):  # the rule every ratings file follows (empathy.identifiers)
    problems.append(f"The rater name {code(rater)}: {md(identifier_problem(rater))}.")
elif rater in taken:
    problems.append(f"The rater name {code(rater)} is already in the data set: choose another name (for example "
                    f"{code(loading.free_rater_name(taken, rater))}). Ratings of two runs are never merged under one "
                    "name.")
if not chosen and not paper_tasks:
    problems.append("Choose at least one protocol.")
for problem in problems:
    st.error(problem)
st.caption(f"Runs over {scope}.")
textless = int(((outputs["reference"].str.strip() == "") & (outputs["generation"].str.strip() == "")).sum())
if textless:
    st.info(f"{textless} of these outputs have no text (their conversations are not public): a judge has "
            "nothing to read there, so its ratings of them mean nothing. Choose a task with texts in the sidebar "
            "to leave them out.")

# -------------------------------------------------------------------------------------------------- run
if st.button("Run the judge", key="judge_run", type="primary", disabled=bool(problems) or not key_ok):
    bar = ProgressBar("Judging")
    unit = "requests" if is_llm else "outputs"  # what run_judge counts
    bar.waiting()  # shown at once; the judge reports its total with its first call
    trackers: list[Tracker] = []

    def _progress(done: int, total: int) -> None:
        # run_judge reports (done, total); the tracker adds the elapsed time and the ETA and draws at most
        # four times a second however many requests the run makes (from its worker threads too).
        if not trackers or trackers[0].total != total:
            trackers[:] = [bar.tracker(total, unit)]
        trackers[0].set_done(min(done, total))

    task_protocols = "paper" if paper_tasks else "all"
    try:
        run = run_judge(outputs, judge.replace(concurrency=concurrency) if is_llm else judge,
                        protocols=chosen or list(PROTOCOLS), progress=_progress,
                        cache=bool(use_cache) if is_llm else None, secrets=st.secrets,
                        task_protocols=task_protocols)
    except Exception as error:  # noqa: BLE001 - any failure is shown in place, redacted, never as a traceback
        bar.clear()
        st.error(f"**The judge did not run.** {md(redact(error))}")
    else:
        ratings = run.ratings.assign(rater=rater)
        missing = run.missing
        st.session_state[session_keys.JUDGE_LAST_RUN] = {
            "base_key": data.base_key, "rater": rater, "judge": judge.name, "stats": run.stats.as_dict(),
            "ratings": len(ratings), "signature": run.signature,
            "missing": missing[["item_id", "model", "dimension", "reason"]].reset_index(drop=True),
        }
        if ratings["value"].notna().any():
            digest = loading.ratings_key(ratings)
            try:
                loading.add_extra_ratings(data, loading.ExtraRatings(rater=rater, ratings=ratings, key=digest,
                                                                 judge=judge.name, signature=run.signature))
            except ValueError as error:
                st.session_state[session_keys.FLASH_ERROR] = f"Not added: {md(error)}"
            else:
                st.session_state[session_keys.FLASH] = (f"Added the rater {code(rater)}: {len(ratings)} ratings, "
                                                        f"{len(missing)} missing. Every page includes it now.")
        else:
            st.session_state[session_keys.FLASH_ERROR] = ("The judge returned no rating at all: nothing was added "
                                                          "(see below).")
        st.rerun()

# ----------------------------------------------------------------------------------------- last run
last_run = st.session_state.get(session_keys.JUDGE_LAST_RUN)
if last_run and last_run["base_key"] == data.base_key:
    st.subheader(f"Last run: {md(last_run['rater'])} (judge {md(last_run['judge'])})")
    stats = last_run["stats"]
    cells = st.columns(8)
    for cell, (label, field) in zip(cells, [("Requests", "requests"), ("Calls", "calls"),
                                            ("Cache hits", "cache_hits"), ("Retries", "retries"),
                                            ("Failures", "failures"), ("Prompt tokens", "prompt_tokens"),
                                            ("Completion tokens", "completion_tokens"), ("Seconds", "seconds")],
                                    strict=True):
        value = stats[field]
        cell.metric(label, f"{value:.1f}" if field == "seconds" else f"{int(value):,}")
    st.caption(f"{last_run['ratings']} ratings · signature {code(last_run['signature'])}")
    missing = last_run["missing"]
    if missing.empty:
        st.success("No missing rating.")
    else:
        st.markdown(f"**{len(missing)} missing rating(s)** (left out of the metrics, never counted as 0):")
        reasons = missing.groupby("reason").size().rename("ratings").sort_values(ascending=False).reset_index()
        st.dataframe(reasons, hide_index=True, key="judge_missing_reasons")
        with st.expander("Every missing rating"):
            st.dataframe(missing, hide_index=True, key="judge_missing")

# ------------------------------------------------------------------------------------ added raters
added = loading.extra_ratings(data.base_key)
if added:
    st.subheader("Raters added this session")
    source_kind = st.session_state[session_keys.SOURCE]["kind"]
    folder = data.data_dir if source_kind in ("demo", "path") else None
    for name, extra in added.items():
        with st.container(border=True):
            values = extra.ratings["value"]
            st.markdown(f"{views.code(name)} · judge {views.code(extra.judge)} · {len(values)} ratings, "
                        f"{int(values.isna().sum())} missing · dimensions "
                        f"{', '.join(map(views.code, sorted(extra.ratings['dimension'].unique())))}")
            file_name = f"ratings_{loading.safe_file_part(name)}.csv"
            buttons = st.columns([2, 3, 1])
            # For people (spreadsheets): formula-like cells are neutralised. "Save ... beside the data" writes
            # the exact machine file.
            buttons[0].download_button("Download CSV", people_csv(extra.ratings),
                                       file_name=file_name, mime="text/csv", key=f"judge_download_{name}")
            if folder is not None:
                where = ("the bundled demo folder: it then loads with the demo data for every user of this "
                         "installation" if source_kind == "demo" else code(folder))
                if buttons[1].button(f"Save as {md(file_name)} beside the data", key=f"judge_save_{name}",
                                     help=f"Writes {md(file_name)} into {where}. An existing file is never "
                                          "overwritten."):
                    try:
                        target = loading.save_extra_ratings(data, name, folder / file_name)
                    except (OSError, ValueError) as error:
                        st.error(f"**Not saved.** {md(error)}")
                    else:
                        st.session_state[session_keys.FLASH] = f"Saved {code(target)}: it now loads with the data set."
                        st.rerun()
            else:
                buttons[1].caption("Uploaded data: download the file and upload it with the data next time.")
            if buttons[2].button("Remove", key=f"judge_remove_{name}"):
                loading.remove_extra_ratings(data, name)
                st.session_state[session_keys.FLASH] = f"Removed the rater {code(name)} from this session."
                st.rerun()
    st.caption("Added raters live in this browser session until saved; the overrides ledger is unaffected.")

if not added and not last_run:
    st.info("No judge has run in this session yet.")
