"""The tool importers and the relabeled-set export, on files written by the tools' own writers (offline).

* Inspect AI: an :class:`inspect_ai.log.EvalLog` written with :func:`inspect_ai.log.write_eval_log` (``.eval`` and
  ``.json``); ``inspect_ai.eval`` with ``mockllm/model`` is not used because it fetches a tokenizer at run time.
* lm-evaluation-harness: the files its own :class:`lm_eval.loggers.EvaluationTracker` writes for ``--log_samples``
  (``results_<time>.json`` with :func:`lm_eval.loggers.utils.add_env_info`, ``samples_<task>_<time>.jsonl``),
  from sample records shaped as ``lm_eval.evaluator`` builds them.
* Hugging Face ``datasets``: ``save_to_disk`` of a ``DatasetDict`` and ``Dataset.to_parquet``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

inspect_log = pytest.importorskip("inspect_ai.log")
datasets = pytest.importorskip("datasets")

ROOT = Path(__file__).resolve().parents[1]
TEXTS = [("a", "I feel alone since the move.", "It sounds lonely.", "That sounds really hard."),
         ("b", "My dog died last night.", "I am so sorry.", "I am so sorry.")]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_DATASETS_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "empathy", *args], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def write_inspect_log(path: Path, *, model: str = "mockllm/model") -> Path:
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    spec = inspect_log.EvalSpec(created="2026-12-07T12:00:00+00:00", task="counsel", model=model,
                                dataset=inspect_log.EvalDataset(name="counsel", samples=len(TEXTS)),
                                config=inspect_log.EvalConfig(), packages={"inspect_ai": "0.3.test"})
    scores = [{"includes": Score(value="C"), "judge": Score(value={"ca": 1, "e_gen": 0.5})},
              {"includes": Score(value="I"), "judge": Score(value={"ca": 0, "e_gen": 1.0})}]
    samples = [inspect_log.EvalSample(id=item, epoch=1, input=prompt, target=target, scores=score,
                                      output=ModelOutput.from_content(model, answer))
               for (item, prompt, target, answer), score in zip(TEXTS, scores, strict=True)]
    inspect_log.write_eval_log(inspect_log.EvalLog(status="success", eval=spec, samples=samples), str(path))
    return path


def write_lm_eval_run(out: Path) -> Path:
    """What ``lm_eval --model dummy --tasks counsel --output_path OUT --log_samples`` leaves in ``OUT``."""
    loggers = pytest.importorskip("lm_eval.loggers")
    from lm_eval.loggers.utils import add_env_info
    from lm_eval.utils import hash_string

    tracker = loggers.EvaluationTracker(output_path=str(out))
    tracker.general_config_tracker.log_experiment_args(
        model_source="dummy", model_args="pretrained=tiny-counsel", system_instruction=None, chat_template=None,
        fewshot_as_multiturn=False)
    samples = []
    for doc_id, (_, prompt, target, answer) in enumerate(TEXTS):
        text = f"Q: {prompt}\nA:"
        samples.append({"doc_id": doc_id, "doc": {"question": prompt, "answer": target}, "target": target,
                        "arguments": [(text, {"until": ["\n"]})], "resps": [[answer]], "filtered_resps": [answer],
                        "filter": "none", "metrics": ["exact_match"], "doc_hash": hash_string(prompt),
                        "prompt_hash": hash_string(text), "target_hash": hash_string(target),
                        "exact_match": float(answer == target)})
    results = {"results": {"counsel": {"exact_match,none": 0.5}}}
    add_env_info(results)
    tracker.save_results_aggregated(results=results, samples={"counsel": samples})
    tracker.save_results_samples(task_name="counsel", samples=samples)
    return out


def read_import(out: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    outputs = pd.read_csv(out / "outputs.csv", dtype=str, keep_default_na=False)
    ratings = pd.read_csv(out / "ratings.csv", dtype={"item_id": str})
    return outputs, ratings, json.loads((out / "import_report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_inspect_log_imports_samples_as_outputs_and_scores_as_ratings(tmp_path, suffix):
    log = write_inspect_log(tmp_path / f"run{suffix}")
    result = run_cli("import", "inspect", str(log), "--out", str(tmp_path / "out"), "--columns", "input=reference")
    assert result.returncode == 0, result.stderr
    outputs, ratings, report = read_import(tmp_path / "out")
    assert outputs["item_id"].tolist() == ["a", "b"]
    assert outputs["model"].tolist() == ["mockllm/model"] * 2
    assert outputs["reference"].tolist() == [t[1] for t in TEXTS]  # the prompt, as --columns asked
    assert outputs["generation"].tolist() == [t[3] for t in TEXTS]
    assert outputs["target"].tolist() == [t[2] for t in TEXTS]  # the target kept as metadata
    got = {(r.item_id, r.rater, r.dimension): r.value for r in ratings.itertuples()}
    assert got == {("a", "includes", "includes"): 1.0, ("b", "includes", "includes"): 0.0,
                   ("a", "judge", "ca"): 1.0, ("b", "judge", "ca"): 0.0,
                   ("a", "judge", "e_gen"): 0.5, ("b", "judge", "e_gen"): 1.0}
    assert set(ratings["signature"]) == {"inspect-ai-0.3.test;columns=output=generation,id=item_id,input=reference"}
    assert report["outputs"] == 2 and report["ratings"] == 6 and report["tasks"] == ["counsel"]


def test_inspect_folder_of_two_models_and_metrics_read_the_import(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    write_inspect_log(logs / "one.eval", model="mockllm/one")
    write_inspect_log(logs / "two.json", model="mockllm/two")
    out = tmp_path / "out"
    assert run_cli("import", "inspect", str(logs), "--out", str(out), "--json").returncode == 0
    outputs, ratings, report = read_import(out)
    assert sorted(report["models"]) == ["mockllm/one", "mockllm/two"] and len(outputs) == 4
    metrics = run_cli("metrics", str(out / "outputs.csv"), "--ratings", str(out / "ratings.csv"), "--no-ld",
                      "--format", "json")
    assert metrics.returncode == 0, metrics.stderr
    rows = json.loads(metrics.stdout)
    assert "judge" in json.dumps(rows)


def test_lm_eval_samples_written_by_its_tracker_import(tmp_path):
    run = write_lm_eval_run(tmp_path / "lm")
    out = tmp_path / "out"
    result = run_cli("import", "lm-eval", str(run), "--out", str(out), "--columns", "prompt=reference")
    assert result.returncode == 0, result.stderr
    outputs, ratings, report = read_import(out)
    assert outputs["item_id"].tolist() == ["counsel:0", "counsel:1"]
    assert outputs["model"].tolist() == ["tiny-counsel"] * 2  # model_name of the results file
    assert outputs["reference"].tolist() == [f"Q: {t[1]}\nA:" for t in TEXTS]
    assert outputs["generation"].tolist() == [t[3] for t in TEXTS]
    assert outputs["doc.question"].tolist() == [t[1] for t in TEXTS]
    assert ratings["value"].tolist() == [0.0, 1.0] and set(ratings["dimension"]) == {"exact_match"}
    import lm_eval

    assert report["version"] == lm_eval.__version__
    assert report["signature"] == f"lm-eval-{lm_eval.__version__};columns=output=generation,id=item_id,prompt=reference"


def test_lm_eval_line_without_its_answer_names_file_line_and_field(tmp_path):
    run = write_lm_eval_run(tmp_path / "lm")
    samples = next(run.rglob("samples_*.jsonl"))
    lines = samples.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[1])
    del broken["filtered_resps"]
    samples.write_text(lines[0] + "\n" + json.dumps(broken) + "\n", encoding="utf-8")
    line = one_error_line(run_cli("import", "lm-eval", str(samples), "--out", str(tmp_path / "out")))
    assert str(samples) in line and "2" in line and "filtered_resps" in line
    assert not (tmp_path / "out").exists()


def test_hf_saved_dataset_and_parquet_import_with_columns(tmp_path):
    frame = {"id": [t[0] for t in TEXTS], "prompt": [t[1] for t in TEXTS], "response": [t[3] for t in TEXTS],
             "judge:ca": [1, 0]}
    parts = datasets.DatasetDict({"test": datasets.Dataset.from_dict(frame)})
    parts.save_to_disk(str(tmp_path / "saved"))
    parts["test"].to_parquet(str(tmp_path / "rows.parquet"))
    columns = "prompt=reference,response=generation,id=item_id"
    for source in ("saved", "rows.parquet"):
        out = tmp_path / f"out-{source}"
        result = run_cli("import", "hf", str(tmp_path / source), "--out", str(out), "--columns", columns,
                         "--model", "m1")
        assert result.returncode == 0, result.stderr
        outputs, ratings, _ = read_import(out)
        assert outputs[["item_id", "model", "reference", "generation"]].values.tolist() == [
            [t[0], "m1", t[1], t[3]] for t in TEXTS]
        assert ratings["value"].tolist() == [1.0, 0.0] and set(ratings["rater"]) == {"judge"}


def test_columns_naming_a_field_the_table_lacks_names_file_and_column(tmp_path):
    datasets.Dataset.from_dict({"prompt": ["p"], "response": ["r"]}).to_parquet(str(tmp_path / "rows.parquet"))
    line = one_error_line(run_cli("import", "hf", str(tmp_path / "rows.parquet"), "--out", str(tmp_path / "o"),
                                  "--columns", "answer=generation,prompt=reference", "--model", "m"))
    assert "rows.parquet" in line and "'answer'" in line
    reversed_pair = one_error_line(run_cli("import", "hf", str(tmp_path / "rows.parquet"), "--out",
                                           str(tmp_path / "o"), "--columns", "generation=response", "--model", "m"))
    assert "did you mean response=generation" in reversed_pair
    bad = one_error_line(run_cli("import", "hf", str(tmp_path / "rows.parquet"), "--out", str(tmp_path / "o"),
                                 "--columns", "response"))
    assert "--columns" in bad and "SOURCE=TARGET" in bad


def test_not_an_inspect_log_is_one_line(tmp_path):
    fake = tmp_path / "run.eval"
    fake.write_bytes(b"not a zip")
    line = one_error_line(run_cli("import", "inspect", str(fake), "--out", str(tmp_path / "o")))
    assert str(fake) in line and "not a readable Inspect log" in line


def test_metrics_reads_a_table_through_columns_and_signs_the_mapping(tmp_path):
    table = pd.DataFrame({"item_id": ["a", "b"], "model": ["m", "m"], "prompt": [t[1] for t in TEXTS],
                          "response": [t[3] for t in TEXTS], "score": [1, 0]})
    table.to_csv(tmp_path / "mine.csv", index=False)
    result = run_cli("metrics", str(tmp_path / "mine.csv"), "--columns", "prompt=reference,response=generation",
                     "--columns", "score=judge:ca", "--no-ld", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [(m["metric"], m["value"]) for m in report["metrics"] if m["metric"] == "CA"] == [("CA", 0.5)]
    # sorted by target, so the same reading signs the same whatever order --columns gave it in
    assert "columns:response=generation,score=judge:ca,prompt=reference" in json.dumps(report)
    line = one_error_line(run_cli("metrics", str(tmp_path / "mine.csv"), "--columns", "answer=generation"))
    assert "mine.csv" in line and "row 1" in line and "'answer'" in line


def test_export_hf_round_trips_rows_and_decisions(tmp_path):
    from empathy.importers.hf_export import load_relabeled
    from empathy.io import load_dataset
    from empathy.labels.rules import make_changes
    from empathy.labels.sqlite import OverrideStore

    data = tmp_path / "data"
    log = write_inspect_log(tmp_path / "run.eval")
    assert run_cli("import", "inspect", str(log), "--out", str(data)).returncode == 0
    dataset = load_dataset(data / "outputs.csv", [data / "ratings.csv"])
    store = data / ".empathy-overrides.sqlite"
    OverrideStore(store).set_overrides("outputs.csv", make_changes(dataset.outputs, dataset.ratings, "a",
                                                                   "mockllm/model", ["judge"], "ca", 0.0,
                                                                   reason="not empathic"), annotator="ann")
    out = tmp_path / "export"
    result = run_cli("export", "hf", str(data / "outputs.csv"), "--ratings", str(data / "ratings.csv"),
                     "--store", str(store), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "1 relabeled" in result.stdout
    parts = load_relabeled(out)
    assert parts["outputs"]["generation"].tolist() == [t[3] for t in TEXTS]
    ratings = parts["ratings"].set_index(["item_id", "rater", "dimension"])
    assert len(ratings) == len(dataset.ratings) == 6
    assert ratings.loc[("a", "judge", "ca"), "value"] == 0.0 and ratings.loc[("a", "judge", "ca"), "judge_value"] == 1.0
    assert bool(ratings.loc[("a", "judge", "ca"), "overridden"])
    assert ratings["overridden"].sum() == 1
    assert parts["decisions"]["status"].tolist() == ["applied"]
    assert parts["decisions"]["item_id"].tolist() == ["a"]
    loaded = datasets.load_from_disk(str(out))
    assert "ledger" in json.loads(loaded["ratings"].info.description)
    card = (out / "README.md").read_text(encoding="utf-8")
    facts = json.loads((out / "relabel.json").read_text(encoding="utf-8"))
    assert facts["signature"] in card and "1 applied" in card and facts["overridden_ratings"] == 1
    bare = tmp_path / "bare"  # no store: every split saved and read back, the empty decisions split too
    assert run_cli("export", "hf", str(data / "outputs.csv"), "--ratings", str(data / "ratings.csv"), "--out",
                   str(bare)).returncode == 0
    plain = load_relabeled(bare)
    assert len(plain["decisions"]) == 0 and len(plain["ratings"]) == 6 and not plain["ratings"]["overridden"].any()
    again = one_error_line(run_cli("export", "hf", str(data / "outputs.csv"), "--out", str(out)))
    assert str(out) in again and "not empty" in again
