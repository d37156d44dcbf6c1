"""The ``judge`` and ``standard`` sub-commands: outputs, exit codes and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from fake_openai_server import FakeOpenAIServer

from empathy.cli import main
from empathy.io import load_ratings

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-cli-SECRETKEY-42424242"


@pytest.fixture()
def outputs_csv(tmp_path) -> Path:
    path = tmp_path / "outputs.csv"
    pd.DataFrame({
        "item_id": ["1", "1", "2"], "model": ["m1", "m2", "m1"], "task": ["news", "news", "counseling"],
        "reference": ["He was killed. Blood.", "He was killed. Blood.", "I feel torn about my mother."],
        "generation": ["A man died.", "An incident occurred.", "You should set boundaries."],
    }).to_csv(path, index=False)
    return path


@pytest.fixture(autouse=True)
def _no_default_config(monkeypatch, tmp_path):
    monkeypatch.delenv("EMPATHY_JUDGES_CONFIG", raising=False)
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))


def test_judge_lexicon_writes_ratings_with_progress(outputs_csv, tmp_path, capsys):
    out = tmp_path / "ratings.csv"
    assert main(["judge", str(outputs_csv), "--out", str(out), "--all-tasks"]) == 0
    ratings = load_ratings(out)
    assert len(ratings) == 3 * 5 and set(ratings.rater) == {"lexicon"}
    err = capsys.readouterr().err
    assert "judge lexicon [" in err and "3/3" in err and "15 ratings (0 missing)" in err


def test_judge_rates_each_task_only_on_what_the_paper_scores_unless_all_tasks_is_asked(outputs_csv, tmp_path,
                                                                                       capsys):
    """The default is the paper's task mapping (Section 4): news SA + EGM, counseling SA + CA; ``--all-tasks``
    rates every protocol on every row. The signature names which."""
    paper, everything = tmp_path / "paper.csv", tmp_path / "all.csv"
    assert main(["judge", str(outputs_csv), "--out", str(paper), "--quiet"]) == 0
    rated = load_ratings(paper)
    dims = rated.groupby(["item_id", "model"])["dimension"].apply(set).to_dict()
    news = {"e_ref", "e_gen", "u_ref", "u_gen"}
    assert dims == {("1", "m1"): news, ("1", "m2"): news, ("2", "m1"): {"e_ref", "e_gen", "ca"}}
    assert set(rated.signature) == {rated.signature.iloc[0]} and ";tasks=paper;" in rated.signature.iloc[0]
    # --protocols narrows the mapping: news rows have no conflict protocol, so only the counseling row gets ca
    assert main(["judge", str(outputs_csv), "--out", str(paper), "--quiet", "--protocols", "conflict"]) == 0
    assert load_ratings(paper)[["item_id", "dimension"]].values.tolist() == [["2", "ca"]]
    assert main(["judge", str(outputs_csv), "--out", str(everything), "--quiet", "--all-tasks"]) == 0
    rated = load_ratings(everything)
    assert len(rated) == 15 and ";tasks=all;" in rated.signature.iloc[0]
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main(["judge", str(outputs_csv), "--out", str(everything), "--paper-tasks", "--all-tasks"])
    assert stopped.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
    # rows of a task the paper does not score get every protocol asked for, and stderr says so
    other = tmp_path / "other.csv"
    pd.read_csv(outputs_csv).assign(task=["news", "poetry", ""]).to_csv(other, index=False)
    assert main(["judge", str(other), "--out", str(everything), "--quiet"]) == 0
    assert "note: 2 outputs of tasks the paper does not score ('poetry', no task) get every protocol" in (
        capsys.readouterr().err)
    assert len(load_ratings(everything)) == 4 + 5 + 5


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_judge_writes_other_formats(outputs_csv, tmp_path, suffix):
    out = tmp_path / f"ratings{suffix}"
    assert main(["judge", str(outputs_csv), "--out", str(out), "--protocols", "conflict", "--quiet",
                 "--all-tasks"]) == 0
    assert load_ratings(out)["value"].tolist() == [0.0, 0.0, 1.0]


def test_judge_against_an_endpoint_from_the_config(outputs_csv, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EMPATHY_TEST_CLI_KEY", KEY)
    with FakeOpenAIServer(api_key=KEY) as server:
        config = tmp_path / "judges.toml"
        config.write_text(f'[judges.fake]\nbase_url = "{server.base_url}"\nmodel = "fm"\n'
                          'api_key_env = "EMPATHY_TEST_CLI_KEY"\nbackoff = 0.01\n')
        out = tmp_path / "r.csv"
        cache = tmp_path / "c.sqlite"
        args = ["judge", str(outputs_csv), "--judge", "fake", "--config", str(config), "--out", str(out),
                "--cache", str(cache)]
        assert main(args) == 0
        first_calls = server.calls
        ratings = load_ratings(out)
        assert set(ratings.rater_kind) == {"llm"} and ratings["value"].notna().all()
        assert main(args) == 0
        assert server.calls == first_calls  # the re-run is served from the cache
    err = capsys.readouterr().err
    assert f"{first_calls} calls" in err and "0 calls" in err and "tokens" in err
    for blob in (err, out.read_text(), cache.read_bytes().decode("latin-1")):
        assert KEY not in blob


def test_judge_refused_by_endpoint_exits_1_without_key(outputs_csv, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EMPATHY_TEST_CLI_KEY", "sk-wrong-SECRET-0000")
    with FakeOpenAIServer(api_key=KEY) as server:
        config = tmp_path / "judges.json"
        config.write_text(json.dumps({"judges": {"fake": {"base_url": server.base_url, "model": "fm",
                                                          "api_key_env": "EMPATHY_TEST_CLI_KEY"}}}))
        code = main(["judge", str(outputs_csv), "--judge", "fake", "--config", str(config), "--out",
                     str(tmp_path / "r.csv"), "--no-cache", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "HTTP 401" in err and "SECRET" not in err and "Traceback" not in err


@pytest.mark.parametrize(("content", "expected"), [
    ("item_id,model,reference\n1,m,r\n", "column 'generation'"),
    ("item_id,model,reference,generation\n1,m,r,g\n,m,r,g\n", "row 3, column 'item_id'"),
    ("item_id,model,reference,generation\n1,m,r,g\n1,m,r,g\n", "duplicate (item_id, model)"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, content, expected):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    for command in (["judge", str(path), "--out", str(tmp_path / "r.csv")], ["standard", str(path)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(path) in err and expected in err and "Traceback" not in err


@pytest.mark.parametrize(("extra", "expected"), [
    (["--judge", "nope"], "unknown judge 'nope'"),
    (["--protocols", "vibes"], "unknown protocol"),
    (["--config", "/nonexistent/judges.toml", "--judge", "x"], "config file not found"),
])
def test_bad_options_exit_2(outputs_csv, tmp_path, capsys, extra, expected):
    assert main(["judge", str(outputs_csv), "--out", str(tmp_path / "r.csv"), "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def test_bad_ratings_suffix_exits_2(outputs_csv, tmp_path, capsys):
    assert main(["judge", str(outputs_csv), "--out", str(tmp_path / "r.txt")]) == 2
    assert "unsupported ratings file type" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_standard_formats(outputs_csv, capsys, fmt):
    assert main(["standard", str(outputs_csv), "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        payload = json.loads(out)
        assert {row["model"] for row in payload["per_model"]} == {"m1", "m2"}
        assert payload["sem_sim_method"] == "tfidf-cosine"
    elif fmt == "csv":
        frame = pd.read_csv(pd.io.common.StringIO(out))
        assert list(frame.columns) == ["task", "model", "n", "rouge_l", "chrf", "cider_d", "sem_sim", "signature"]
    else:
        assert "rouge_l" in out and "signature: rouge_l=" in out


def test_standard_per_item_json(outputs_csv, capsys):
    assert main(["standard", str(outputs_csv), "--format", "json", "--per-item"]) == 0
    assert len(json.loads(capsys.readouterr().out)["per_item"]) == 3


def test_wired_into_python_m_empathy(outputs_csv, tmp_path):
    out = tmp_path / "r.csv"
    done = subprocess.run([sys.executable, "-m", "empathy", "judge", str(outputs_csv), "--out", str(out),
                           "--protocols", "affect"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    if done.returncode == 2 and "invalid choice: 'judge'" in done.stderr:
        pytest.skip("the lead's CLI does not register the judges sub-commands in this checkout")
    assert done.returncode == 0, done.stderr
    assert set(load_ratings(out).dimension) == {"e_ref", "e_gen"}


def test_judge_csv_for_people_neutralises_formulas_and_metrics_reads_it_back(tmp_path):
    """``judge --out x.csv`` prefixes formula-like ids with ' (spreadsheets); reading the file undoes it."""
    outputs = tmp_path / "outputs.csv"
    pd.DataFrame({"item_id": ['=HYPERLINK("http://evil")', "2"], "model": ["+cmd|' /C calc'!A0", "@m"],
                  "reference": ["He was killed.", "I feel torn."], "generation": ["A man died.", "Set boundaries."],
                  }).to_csv(outputs, index=False)
    out = tmp_path / "r.csv"
    assert main(["judge", str(outputs), "--out", str(out), "--protocols", "conflict", "--quiet", "--no-cache"]) == 0
    raw = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert set(raw["item_id"]) == {"'=HYPERLINK(\"http://evil\")", "2"}
    assert set(raw["model"]) == {"'+cmd|' /C calc'!A0", "'@m"}
    assert set(load_ratings(out)["model"]) == {"+cmd|' /C calc'!A0", "@m"}
    jsonl = tmp_path / "r.jsonl"
    assert main(["judge", str(outputs), "--out", str(jsonl), "--protocols", "conflict", "--quiet", "--no-cache"]) == 0
    assert {json.loads(line)["model"] for line in jsonl.read_text().splitlines()} == {"+cmd|' /C calc'!A0", "@m"}


def test_write_ratings_lives_in_io():
    from empathy.io import write_ratings

    assert write_ratings.__module__ == "empathy.io"


def test_judge_list_says_what_each_judge_is(capsys):
    """``--list`` carries each judge's description: the lexicon's says it does not track experts."""
    assert main(["judge", "--list"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    lexicon = next(row for row in rows if row[0] == "lexicon")
    assert lexicon[1:3] == ["lexicon", "offline"]
    assert "does not track experts" in lexicon[3] and "0.03-0.30" in lexicon[3]


def _decide(store_path: Path, outputs_csv: Path, outputs: pd.DataFrame, rows: list[tuple[str, str, str, float]],
            name: str | None = None) -> None:
    """Store one human decision per (item, model, rater, value) on ``ca``, bound to the texts of ``outputs``."""
    from empathy.labels.records import dataset_name
    from empathy.labels.rules import make_changes
    from empathy.labels.sqlite import OverrideStore

    ratings = pd.DataFrame(columns=["item_id", "model", "rater", "dimension", "value", "signature"])
    label = name or dataset_name(outputs_csv, store_path=store_path)
    store = OverrideStore(store_path)
    for item, model, rater, value in rows:
        store.set_overrides(label, make_changes(outputs, ratings, item, model, [rater], "ca", value), annotator="h")


def test_judge_rerun_is_classified_against_the_stored_decisions(outputs_csv, tmp_path, capsys, monkeypatch):
    """The lexicon's CA labels of the three outputs are 0, 0, 1 (above). Four human decisions on ``lexicon``:
    (1, m1) = 0 agrees with the re-run, (2, m1) = 0 does not, (1, m2) was decided on an older text, and (3, m1)
    is an output no longer in the file; a decision on another rater is not about this run."""
    monkeypatch.delenv("EMPATHY_STORE", raising=False)
    outputs = pd.read_csv(outputs_csv, dtype=str, keep_default_na=False)
    gone = pd.concat([outputs, outputs.iloc[[2]].assign(item_id="3")], ignore_index=True)
    store = tmp_path / "decisions.sqlite"
    _decide(store, outputs_csv, gone, [("1", "m1", "lexicon", 0.0), ("2", "m1", "lexicon", 0.0),
                                       ("3", "m1", "lexicon", 1.0), ("2", "m1", "gpt", 0.0)])
    _decide(store, outputs_csv, outputs.assign(generation="an older text"), [("1", "m2", "lexicon", 1.0)])
    args = ["judge", str(outputs_csv), "--out", str(tmp_path / "r.csv"), "--protocols", "conflict", "--quiet",
            "--all-tasks"]
    capsys.readouterr()
    assert main([*args, "--overrides", str(store)]) == 0
    err = capsys.readouterr().err
    assert ("re-run vs overrides: 1 confirmed (judge now agrees with the human), 1 still disputed, 1 stale (text "
            "changed), 1 orphaned (output gone)") in err
    # the decision on gpt is compared when this run re-rates gpt: (2, m1) = 0 against the new 1
    assert main([*args, "--overrides", str(store), "--rerun-of", "gpt"]) == 0
    assert "1 confirmed (judge now agrees with the human), 2 still disputed" in capsys.readouterr().err
    # without --overrides: the store beside the outputs, when there is one; none, no line
    assert main(args) == 0
    assert "re-run vs overrides" not in capsys.readouterr().err
    store.rename(tmp_path / ".empathy-overrides.sqlite")
    assert main(args) == 0
    assert "1 confirmed (judge now agrees with the human), 1 still disputed" in capsys.readouterr().err
    # a store that is not there is an error naming it, exit 2
    assert main([*args, "--overrides", str(tmp_path / "nope.sqlite")]) == 2
    assert "nope.sqlite: override store not found" in capsys.readouterr().err


def test_judge_against_a_dead_endpoint_exits_1_with_one_line(tmp_path, capsys):
    """A mistyped endpoint (nothing listening) on 120 outputs: one line, exit 1, no ratings file, no retry per
    output (the contracts page's promise; issue 26 item 7)."""
    from test_judges_llm import closed_port

    path = tmp_path / "many.csv"
    pd.DataFrame({"item_id": [str(i) for i in range(120)], "model": "m", "task": "counseling",
                  "reference": "I feel torn.", "generation": [f"You should talk {i}." for i in range(120)]}
                 ).to_csv(path, index=False)
    config = tmp_path / "judges.toml"
    config.write_text(f'[judges.dead]\nbase_url = "http://127.0.0.1:{closed_port()}/v1"\nmodel = "m"\n')
    out = tmp_path / "r.csv"
    code = main(["judge", str(path), "--judge", "dead", "--config", str(config), "--out", str(out), "--quiet",
                 "--no-cache"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "connection refused" in err and "cannot reach" in err
    assert "Traceback" not in err and not out.exists()
