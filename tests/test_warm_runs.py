"""Nothing loads what a run does not need (issue 25 item 4): a run whose texts are all in the parse cache never
imports spaCy, and the detector signature is known without loading the model.

The command-line checks run ``python -X importtime`` in a subprocess, which lists every module the process
imported; they guard the design, not a clock (the figures are in docs/benchmarks.md, ``bench/bench_warm_runs.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import empathy.distancing as dist
from empathy.distancing import DistancingCache, analyze, detector_signature, load_model, model_info
from empathy.distancing.model import detector_key, loaded_model, model_version
from empathy.paths import DEMO_DIR, PROJECT_ROOT

DEMO = DEMO_DIR
TEXTS = ["The decision was announced.", "There is hope.", "", "I lost my job today. It was hard."]


def _imported(stderr: str) -> set[str]:
    """Top-level names of the modules ``-X importtime`` reported (one ``import time: ... | name`` line each)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def _run(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EMPATHY_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "empathy", *args], capture_output=True,
                          text=True, timeout=600, env=env, cwd=PROJECT_ROOT)


def test_a_cached_analysis_never_loads_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with DistancingCache(tmp_path) as cache:
        first = [r.to_json() for r in analyze(TEXTS, cache=cache)]

        def refuse(*args: object, **kwargs: object) -> None:
            raise AssertionError("the model was loaded for texts that are all cached")

        monkeypatch.setattr(dist.model, "_load", refuse)
        monkeypatch.setattr(dist, "loaded_model", refuse)
        assert [r.to_json() for r in analyze(TEXTS, cache=cache, batch_size=1)] == first
        assert list(analyze([], cache=False)) == []  # nothing to parse: nothing loaded either
        with pytest.raises(AssertionError, match="all cached"):  # a miss does load it
            list(analyze([*TEXTS, "A new text."], cache=cache))


def test_the_signature_read_without_loading_is_the_loaded_pipeline() -> None:
    model, version, rules = detector_key()
    nlp = load_model()
    assert version == nlp.meta["version"] == model_version(model)
    assert detector_signature() == f"spacy:{model}-{version}|rules:{rules}"
    assert model_info() == {"model": model, "version": version, "spacy": sys.modules["spacy"].__version__,
                            "rules": rules}
    assert loaded_model() is nlp


def test_a_pipeline_of_another_version_than_its_package_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache keys name the package's version; results of a pipeline that says otherwise would be stored under
    the wrong key."""
    monkeypatch.setitem(load_model().meta, "version", "0.0.1")
    with pytest.raises(ValueError, match=r"is version \d+\.\d+\.\d+ but the pipeline it loads says 0\.0\.1"):
        loaded_model()
    with pytest.raises(ValueError, match="0.0.1"):
        list(analyze(["A text no cache holds."], cache=False))


def test_warm_distancing_command_imports_no_spacy(tmp_path: Path) -> None:
    lines = tmp_path / "texts.txt"
    lines.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    with DistancingCache(tmp_path / "distancing") as cache:  # the command's cache under EMPATHY_CACHE_DIR
        expected = [r.to_json() for r in analyze(TEXTS, cache=cache)]
    warm = _run(["distancing", str(lines)], tmp_path)
    assert warm.returncode == 0, warm.stderr
    assert [json.loads(line) for line in warm.stdout.splitlines()] == expected
    assert {"spacy", "thinc"} & _imported(warm.stderr) == set()


@pytest.mark.slow
def test_warm_metrics_command_imports_neither_spacy_nor_scipy(tmp_path: Path) -> None:
    """The demo data's metrics (SA, EGM, CA, LD and the inter-judge table) from a warm cache: the same JSON as the
    cold run, without spaCy (every text cached) or SciPy (the metric pipeline's statistics are numpy's)."""
    args = ["metrics", str(DEMO / "outputs.csv"), "--ratings", str(DEMO / "ratings_author.csv"), "--ratings",
            str(DEMO / "ratings_lexicon.csv"), "--format", "json"]
    cold = _run(args, tmp_path)
    assert cold.returncode == 0, cold.stderr
    assert "spacy" in _imported(cold.stderr)  # the check can fail: a cold run does parse
    warm = _run(args, tmp_path)
    assert warm.returncode == 0, warm.stderr
    assert json.loads(warm.stdout) == json.loads(cold.stdout)
    assert {"spacy", "thinc", "scipy"} & _imported(warm.stderr) == set()
