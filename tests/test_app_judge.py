"""AppTest of the Judge page: config errors in place, the lexicon judge on the demo data, an LLM judge on a local
fake endpoint (key from the environment or st.secrets, never shown; cache), name clashes, saving beside the data."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts as _texts
from conftest import open_page  # noqa: E402
from fake_openai_server import FakeOpenAIServer  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.io import load_dataset, load_outputs  # noqa: E402
from empathy.judges import run_judge  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PAGE = "app_pages/7_Judge.py"
TIMEOUT = 240  # s; a ceiling for a loaded machine, not an expectation
KEY = "sk-test-APPSECRET-0123456789abcdef"
KEY_ENV = "EMPATHY_TEST_APP_JUDGE_KEY"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("EMPATHY_STORE", str(tmp_path / "overrides.sqlite"))
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("EMPATHY_JUDGES_CONFIG", raising=False)
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.chdir(tmp_path)  # no ./judges.toml of the developer's


def _judge_page(source: dict | None = None, secrets: dict | None = None) -> AppTest:
    return open_page(PAGE, source, secrets=secrets, timeout=TIMEOUT)


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _pivot(at: AppTest) -> pd.DataFrame:
    for frame in at.dataframe:
        if "model" in frame.value.columns and any(c.startswith("CA (") for c in frame.value.columns):
            return frame.value.set_index("model")
    raise AssertionError("no metrics pivot on the page")


def _counts(at: AppTest) -> pd.DataFrame:
    """The n of each Overview value (the table after the values' one, in an expander since issue 16)."""
    frames = [f.value for f in at.dataframe if "model" in f.value.columns
              and any(c.startswith("CA (") for c in f.value.columns)]
    assert len(frames) >= 2 and list(frames[1].columns) == list(frames[0].columns)
    return frames[1].set_index("model")


def _fixture(folder: Path) -> dict:
    """3 models x 4 counseling items with one judge's CA labels (as tests/test_app.py)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"item_id": item, "model": model, "task": "counseling",
             "reference": f"I feel ignored by my sister ({item}). She never calls me back.",
             "generation": f"It is understood that communication issues occur ({model}). Try talking."}
            for model in ("A", "B", "C") for item in ("i1", "i2", "i3", "i4")]
    pd.DataFrame(rows).to_csv(folder / "outputs.csv", index=False)
    ratings = [{"item_id": r["item_id"], "model": r["model"], "rater": "j1", "dimension": "ca", "value": 1,
                "rater_kind": "llm", "reason": "", "signature": "j1-sig"} for r in rows]
    pd.DataFrame(ratings).to_csv(folder / "ratings_j1.csv", index=False)
    return {"kind": "path", "outputs": str(folder / "outputs.csv"), "ratings": [str(folder / "ratings_j1.csv")]}


# ------------------------------------------------------------------------------------------ failure paths

def test_a_missing_config_file_is_an_error_in_place_and_the_lexicon_judge_stays(tmp_path):
    at = _judge_page()
    at.text_input(key="judge_config_path").input(str(tmp_path / "nope.toml")).run()
    _ok(at)
    assert any("Config not loaded" in e and "nope.toml: config file not found" in e for e in _texts(at.error))
    assert at.selectbox(key="judge_name").options == ["lexicon (offline, built in)"]
    assert not at.button(key="judge_run").disabled


@pytest.mark.parametrize("content, message", [
    ("[judges.x]\nbase_url = 'http://127.0.0.1:1/v1'\nmodel = 'm'\napi_key = 'sk-abc'\n",
     "unknown setting(s) api_key"),
    ("[judges.x]\nbase_url = 'ftp://host'\nmodel = 'm'\n", "base_url must be an http(s) URL"),
    ("[judges.x\nmodel = \n", "cannot parse config"),
    ("[judges.x]\nbase_url = 'http://127.0.0.1:1/v1'\nmodel = 'm'\napi_key_env = 'sk-abcdef 123'\n",
     "must be the NAME of an environment variable"),
])
def test_a_bad_config_names_the_file_and_the_problem(tmp_path, content, message):
    config = tmp_path / "judges.toml"
    config.write_text(content, encoding="utf-8")
    at = _judge_page()
    at.text_input(key="judge_config_path").input(str(config)).run()
    _ok(at)
    errors = _texts(at.error)
    assert any(str(config) in e and message in e for e in errors), errors
    assert all("sk-abc" not in e for e in errors)


def test_the_env_config_is_the_default_and_a_missing_one_is_shown(tmp_path, monkeypatch):
    monkeypatch.setenv("EMPATHY_JUDGES_CONFIG", str(tmp_path / "gone.toml"))
    at = _judge_page()
    assert at.text_input(key="judge_config_path").value == str(tmp_path / "gone.toml")
    assert any("gone.toml: config file not found" in e for e in _texts(at.error))


def test_a_taken_rater_name_is_refused_not_merged():
    at = _judge_page()
    name = at.text_input(key="judge_rater_lexicon_2")
    assert name.value == "lexicon-2"  # the demo data has a rater 'lexicon' already
    name.input("author").run()
    _ok(at)
    assert any("`author` is already in the data set" in e for e in _texts(at.error))
    assert at.button(key="judge_run").disabled


def test_a_rater_name_with_an_invisible_character_is_refused():
    """Issue 27: the new rater's name follows the ratings' identifier rule (no zero-width space: ``lexicon`` and
    ``lexicon`` + U+200B would be two raters that look the same)."""
    at = _judge_page()
    at.text_input(key="judge_rater_lexicon_2").input("lexicon\u200b").run()
    _ok(at)
    assert any("U+200B ZERO WIDTH SPACE" in e for e in _texts(at.error))
    assert at.button(key="judge_run").disabled


def test_an_unset_key_variable_blocks_the_run_without_showing_anything_secret(tmp_path):
    config = tmp_path / "judges.toml"
    config.write_text(f"[judges.remote]\nbase_url = 'http://127.0.0.1:9/v1'\nmodel = 'm'\n"
                      f"api_key_env = '{KEY_ENV}'\n", encoding="utf-8")
    at = _judge_page()
    at.text_input(key="judge_config_path").input(str(config)).run()
    at.selectbox(key="judge_name").select("remote").run()
    _ok(at)
    assert any(KEY_ENV in w and "not set" in w for w in _texts(at.warning))
    assert at.button(key="judge_run").disabled


# ----------------------------------------------------------------------------------- lexicon on the demo

def test_lexicon_judge_on_the_demo_data_adds_a_new_scorer_everywhere():
    outputs, _ = load_outputs(DEMO_DIR / "outputs.csv")
    expected = run_judge(outputs, "lexicon")
    at = _judge_page()
    assert at.checkbox(key="judge_paper_tasks").value  # the paper's task mapping is the default (issue 27) ...
    at.checkbox(key="judge_paper_tasks").uncheck().run()  # ... every protocol on every output, asked for here
    at.button(key="judge_run").click().run()
    _ok(at)
    shown = _metrics(at)
    # The lexicon judge counts one request per output row (all its protocols at once) and calls nothing.
    assert shown["Requests"] == str(len(outputs)) == str(expected.stats.requests)
    assert (shown["Calls"], shown["Cache hits"], shown["Retries"], shown["Failures"]) == ("0", "0", "0", "0")
    assert (shown["Prompt tokens"], shown["Completion tokens"]) == ("0", "0")
    assert any(f"{len(outputs) * 5} ratings" in c for c in _texts(at.caption))  # e_ref, e_gen, u_ref, u_gen, ca
    assert any("Added the rater `lexicon-2`" in s for s in _texts(at.success))
    assert "No missing rating." in _texts(at.success)

    at.switch_page("app_pages/2_Overview.py").run()
    at.sidebar.toggle(key="_w_pooled").set_value(True).run()  # one value per model over the demo's three tasks
    _ok(at)
    pivot = _pivot(at)
    for metric in ("SA", "EGM"):
        # the same deterministic judge under a new name: the bundled lexicon ratings' values (same items)
        assert pivot[f"{metric} (lexicon-2)"].tolist() == pytest.approx(pivot[f"{metric} (lexicon)"].tolist())
    # CA: the bundled file labels counseling only, this run every output (no task mapping chosen), so its CA is
    # the share of 1s over all of a model's outputs
    ca = expected.ratings[expected.ratings["dimension"] == "ca"].groupby("model")["value"].mean()
    assert pivot["CA (lexicon-2)"].tolist() == pytest.approx(ca.loc[pivot.index].round(3).tolist(), abs=1e-9)
    assert _counts(at)["CA (lexicon-2)"].tolist() == outputs.groupby("model").size().loc[pivot.index].tolist()
    assert any("lexicon-2" in c for c in _texts(at.sidebar.caption))

    at.switch_page("app_pages/5_Agreement.py").run()
    _ok(at)
    pairs = next(f.value for f in at.dataframe if "scorer_a" in f.value.columns)
    row = pairs[(pairs["metric"] == "SA") & (pairs["scorer_a"] == "lexicon") & (pairs["scorer_b"] == "lexicon-2")]
    assert row["spearman"].tolist() == [1.0]

    at.switch_page(PAGE).run()  # a second run is offered under the next free name
    assert at.text_input(key="judge_rater_lexicon_3").value == "lexicon-3"


def test_paper_task_mapping_rates_only_what_each_task_uses(tmp_path):
    outputs, _ = load_outputs(DEMO_DIR / "outputs.csv")
    at = _judge_page()
    at.checkbox(key="judge_paper_tasks").check().run()
    at.button(key="judge_run").click().run()
    _ok(at)
    counts = outputs["task"].value_counts()
    # news: affect + disturbing (4), translation: affect (2), counseling: affect + conflict (3)
    total = 4 * counts["news"] + 2 * counts["translation"] + 3 * counts["counseling"]
    assert any(f"{total} ratings" in c for c in _texts(at.caption)), _texts(at.caption)
    assert ";tasks=paper;" in at.session_state["judge_last_run"]["signature"]


# ------------------------------------------------------------------------- an LLM judge, a local endpoint

@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer(api_key=KEY) as running:
        yield running


def _config(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    path = tmp_path / "judges.toml"
    path.write_text(f"[judges.fake]\nbase_url = '{server.base_url}'\nmodel = 'fake-model'\n"
                    f"api_key_env = '{KEY_ENV}'\nbackoff = 0.005\nmax_retries = 1\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("via", ["environment", "secrets"])
def test_llm_judge_runs_with_stats_tokens_and_cache_and_never_shows_the_key(tmp_path, monkeypatch, server, via):
    server.reset()
    source = _fixture(tmp_path / "data")
    if via == "environment":
        monkeypatch.setenv(KEY_ENV, KEY)
    at = _judge_page(source, secrets={KEY_ENV: KEY} if via == "secrets" else None)
    at.text_input(key="judge_config_path").input(str(_config(tmp_path, server))).run()
    at.selectbox(key="judge_name").select("fake").run()
    at.multiselect(key="judge_protocols").set_value(["affect", "conflict"]).run()
    _ok(at)
    assert any(KEY_ENV in c and "not shown" in c for c in _texts(at.caption))
    at.button(key="judge_run").click().run()
    _ok(at)
    shown = _metrics(at)
    # 12 outputs x (one affect + one conflict request), all distinct
    assert (shown["Requests"], shown["Calls"], shown["Cache hits"], shown["Failures"]) == ("24", "24", "0", "0")
    assert int(shown["Prompt tokens"].replace(",", "")) > 0 and int(shown["Completion tokens"]) > 0
    assert server.calls == 24

    at.switch_page("app_pages/2_Overview.py").run()
    pivot = _pivot(at)
    # the server answers E(ref) 0.8, E(gen) 0.4 (SA = 1 - 0.4 / 0.8) and CA 0 (no "you should")
    assert pivot["SA (fake)"].tolist() == pytest.approx([0.5, 0.5, 0.5])
    assert pivot["CA (fake)"].tolist() == [0.0, 0.0, 0.0]
    assert pivot["CA (j1)"].tolist() == [1.0, 1.0, 1.0]

    at.switch_page(PAGE).run()  # the choices are kept; the same requests under another name: all cached
    assert at.selectbox(key="judge_name").value == "fake"
    assert at.multiselect(key="judge_protocols").value == ["affect", "conflict"]
    assert at.text_input(key="judge_rater_fake_2").value == "fake-2"
    at.button(key="judge_run").click().run()
    _ok(at)
    shown = _metrics(at)
    assert (shown["Calls"], shown["Cache hits"]) == ("0", "24")
    assert server.calls == 24
    everything = " ".join(str(e.value) for kind in ("markdown", "caption", "error", "warning", "success", "info",
                                                   "text_input") for e in getattr(at, kind))
    assert KEY not in everything and "APPSECRET" not in everything
    kept = repr({name: at.session_state[name] for name in at.session_state.keys()})
    kept += "".join(extra.ratings.to_csv() for added in at.session_state["extra_ratings"].values()
                      for extra in added.values())
    assert "fake-2" in kept and KEY not in kept and "APPSECRET" not in kept


def test_endpoint_failures_are_missing_ratings_with_reasons(tmp_path, monkeypatch, server):
    server.reset()
    monkeypatch.setenv(KEY_ENV, KEY)
    source = _fixture(tmp_path / "data")
    outputs = pd.read_csv(source["outputs"])
    outputs.loc[0, "generation"] = "FAIL:500*9 Try talking."
    outputs.to_csv(source["outputs"], index=False)
    at = _judge_page(source)
    at.text_input(key="judge_config_path").input(str(_config(tmp_path, server))).run()
    at.selectbox(key="judge_name").select("fake").run()
    at.multiselect(key="judge_protocols").set_value(["conflict"]).run()
    at.button(key="judge_run").click().run()
    _ok(at)
    assert _metrics(at)["Failures"] == "1"
    reasons = next(f.value for f in at.dataframe if "reason" in f.value.columns and "ratings" in f.value.columns)
    assert reasons["ratings"].tolist() == [1] and "HTTP 500" in reasons["reason"].iloc[0]
    assert any("1 missing rating(s)" in m for m in _texts(at.markdown))


def test_a_refused_key_is_an_error_in_place(tmp_path, monkeypatch, server):
    monkeypatch.setenv(KEY_ENV, "sk-wrong-0123456789abcdefgh")
    at = _judge_page(_fixture(tmp_path / "data"))
    at.text_input(key="judge_config_path").input(str(_config(tmp_path, server))).run()
    at.selectbox(key="judge_name").select("fake").run()
    at.button(key="judge_run").click().run()
    _ok(at)
    errors = _texts(at.error)
    assert any("The judge did not run" in e for e in errors), errors
    assert all("sk-wrong-0123456789abcdefgh" not in e for e in errors)
    assert not at.get("metric")


# ------------------------------------------------------------------------------------- saving the rater

def test_save_beside_the_data_writes_the_file_and_loads_it_from_there(tmp_path):
    source = _fixture(tmp_path / "data")
    at = _judge_page(source)
    at.checkbox(key="judge_paper_tasks").uncheck().run()  # all five dimensions on these counseling outputs
    at.button(key="judge_run").click().run()
    _ok(at)
    at.button(key="judge_save_lexicon").click().run()
    _ok(at)
    target = tmp_path / "data" / "ratings_lexicon.csv"
    assert any(f"Saved `{target}`" in s for s in _texts(at.success))
    assert at.session_state["source"]["ratings"] == [source["ratings"][0], str(target)]
    on_disk = load_dataset(source["outputs"], at.session_state["source"]["ratings"]).ratings
    assert sorted(on_disk["rater"].unique()) == ["j1", "lexicon"] and len(on_disk) == 12 + 12 * 5
    assert not any("Raters added this session" in s for s in _texts(at.subheader))

    at.switch_page("app_pages/2_Overview.py").run()
    assert "CA (lexicon)" in _pivot(at).columns

    at.switch_page(PAGE).run()  # the name is taken now, and the file is never overwritten
    assert at.text_input(key="judge_rater_lexicon_2").value == "lexicon-2"


def test_overrides_of_a_removed_session_rater_do_not_come_back_as_a_phantom_rater(tmp_path):
    from empathy.labels.records import Change, dataset_id
    from empathy.labels.sqlite import OverrideStore

    source = _fixture(tmp_path / "data")
    at = _judge_page(source)
    at.button(key="judge_run").click().run()
    store = OverrideStore(tmp_path / "overrides.sqlite")
    key = dataset_id(pd.read_csv(source["outputs"], dtype=str, keep_default_na=False))
    store.set_overrides(key, [Change("i1", "A", "lexicon", "ca", 1.0, "")], annotator="ann")
    at.switch_page("app_pages/2_Overview.py").run()
    assert "CA (lexicon)" in _pivot(at).columns and any("with 1 human decision**" in c for c in _texts(at.caption))
    at.switch_page(PAGE).run()
    at.button(key="judge_remove_lexicon").click().run()
    _ok(at)
    at.switch_page("app_pages/2_Overview.py").run()
    assert [c for c in _pivot(at).columns if "lexicon" in c] == []
    assert any("with 0 human decisions" in c for c in _texts(at.caption))
    at.switch_page("app_pages/1_Data.py").run()  # the ledger itself keeps it
    assert len(next(f.value for f in at.dataframe if "annotator" in f.value.columns)) == 1


def test_the_app_imports_no_private_streamlit_module():
    """Issue 10: pages and helpers use Streamlit's public API only (no ``streamlit.runtime.*`` helpers)."""
    import ast

    root = Path(__file__).resolve().parent.parent
    found = []
    sources = [root / "app.py", *sorted((root / "app_pages").glob("*.py")),
               *sorted((root / "empathy_app").glob("*.py"))]
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [(path.name, n) for n in names if n.startswith("streamlit.") and n != "streamlit.testing.v1"]
    assert found == []
