"""``empathy judge-check``: the cost printed before any call, the --max-calls refusal (exit 2, one line, no call),
the JSON object against a scripted endpoint with a planted fault, and ``judge-report --checks`` folding it into
the verdict line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from planted_judge_server import PlantedJudgeServer
from test_judge_report_planted import OUTPUTS

from empathy.cli import main


def _config(tmp_path, server) -> str:
    config = tmp_path / "judges.toml"
    config.write_text(f'[judges.scripted]\nbase_url = "{server.base_url}"\nmodel = "planted"\nbackoff = 0.01\n'
                      'max_retries = 1\nsegmentation = "regex"\n')
    return str(config)


def test_the_cap_refuses_before_any_call_and_the_cost_is_printed(tmp_path, capsys):
    outputs = tmp_path / "outputs.csv"
    OUTPUTS.to_csv(outputs, index=False)
    with PlantedJudgeServer() as server:
        code = main(["judge-check", str(outputs), "--judge", "scripted", "--config", _config(tmp_path, server),
                     "--max-calls", "10"])
        assert code == 2 and server.calls == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("judge-check scripted (planted @ http://127.0.0.1:")
    assert "requests (repeatability" in err[0] and "cap --max-calls 10" in err[0]
    assert len(err) == 2 and "--max-calls: the checks need" in err[1]


def test_judge_check_catches_a_position_fault_and_feeds_the_verdict(tmp_path, capsys):
    outputs = tmp_path / "outputs.csv"
    OUTPUTS.to_csv(outputs, index=False)
    with PlantedJudgeServer() as server:
        server.fault = "ignore-second"
        assert main(["judge-check", str(outputs), "--judge", "scripted", "--config", _config(tmp_path, server),
                     "--checks", "order,probes", "--format", "json", "--max-calls", "5000"]) == 0
        captured = capsys.readouterr()
        planned = int(captured.err.split(": ")[1].split(" requests")[0])
        assert server.calls == planned  # the plan counted every call the checks made
    checks = json.loads(captured.out)
    order = {row["dimension"]: row for row in checks["order"]}
    assert order["e_gen"]["p_value"] < 0.05 and order["e_gen"]["abs_low"] > 0
    assert "order:generation-first-minus-reference-first" in checks["signature"]
    path = tmp_path / "checks.json"
    path.write_text(json.dumps(checks))
    rng = np.random.default_rng(0)
    rows = []
    for rater, kind in (("scripted", "llm"), ("h1", "expert"), ("h2", "expert"), ("h3", "expert")):
        rows.append(pd.DataFrame({"item_id": OUTPUTS["item_id"], "model": "m1", "rater": rater, "dimension": "e_gen",
                                  "value": rng.uniform(0, 1, len(OUTPUTS)).round(2), "rater_kind": kind}))
    ratings = tmp_path / "ratings.csv"
    pd.concat(rows).to_csv(ratings, index=False)
    assert main(["judge-report", str(ratings), "--outputs", str(outputs), "--dimension", "e_gen", "--judge",
                 "scripted", "--checks", str(path), "--format", "json"]) == 0
    verdict = json.loads(capsys.readouterr().out)[0]
    assert "order effect" in verdict["line"] and "probes" in verdict["line"]
    assert verdict["not_measured"] == ["repeatability"] and "|checks:" in verdict["signature"]


def test_a_bad_checks_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "checks.json"
    bad.write_text("{not json")
    ratings = tmp_path / "r.csv"
    pd.DataFrame({"item_id": ["1"], "model": ["m"], "rater": ["a"], "dimension": ["e_gen"], "value": [1.0]}
                 ).to_csv(ratings, index=False)
    assert main(["judge-report", str(ratings), "--dimension", "e_gen", "--judge", "a", "--checks", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a judge-check JSON file" in err[0]
