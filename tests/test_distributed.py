"""Distributed parsing on a real Dask ``LocalCluster`` (:mod:`empathy.cluster`): equal to the single-process path.

One cluster of two worker processes serves the whole module (started once: about 5 s and a model load per
worker). Every comparison is against :func:`empathy.distancing.analyze` with the cache off, and every cluster
run gets its own parse cache folder (or none), so no result can be copied from one path to the other through a
shared cache.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

from empathy.cli import main  # noqa: E402
from empathy.cluster import (  # noqa: E402
    PartitionFailed,
    PartitionStore,
    cluster_analyser,
    parse_to_partitions,
    partition_digest,
    read_features,
    read_results,
)
from empathy.distancing import analyze, detector_signature  # noqa: E402
from empathy.evaluate import compute_metrics, text_features  # noqa: E402
from empathy.paths import DEMO_DIR  # noqa: E402
from empathy.scheduler import SchedulerSpec, parse_scheduler  # noqa: E402

DEMO = DEMO_DIR / "outputs.csv"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Two single-threaded worker processes, as ``--scheduler local:2`` starts them.

    The workers' default parse cache (their ``$EMPATHY_CACHE_DIR`` when they start) is a folder of this module
    that no single-process run writes to.
    """
    previous = os.environ.get("EMPATHY_CACHE_DIR")
    os.environ["EMPATHY_CACHE_DIR"] = str(tmp_path_factory.mktemp("worker-cache"))
    try:
        local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                         silence_logs=40)
    finally:
        if previous is None:
            os.environ.pop("EMPATHY_CACHE_DIR")
        else:
            os.environ["EMPATHY_CACHE_DIR"] = previous
    with local:
        yield local


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster) as connected:
        yield connected


@pytest.fixture(scope="module")
def demo():
    return pd.read_csv(DEMO, dtype=str, keep_default_na=False)


def _single(texts: list[str]) -> list:
    return list(analyze(texts, cache=False))


# --- the --scheduler value ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("local:1", SchedulerSpec("local", workers=1)),
    ("local:32", SchedulerSpec("local", workers=32)),
    (" local:2 ", SchedulerSpec("local", workers=2)),
    ("tcp://10.0.0.5:8786", SchedulerSpec("tcp", address="tcp://10.0.0.5:8786")),
    ("tcp://scheduler.lab.example:8786", SchedulerSpec("tcp", address="tcp://scheduler.lab.example:8786")),
    ("tcp://[::1]:8786", SchedulerSpec("tcp", address="tcp://[::1]:8786")),
])
def test_scheduler_values(text, expected):
    assert parse_scheduler(text) == expected


@pytest.mark.parametrize(("text", "fragment"), [
    ("local:0", "from 1 to 256"),
    ("local:257", "from 1 to 256"),
    ("local:two", "whole number"),
    ("local:", "whole number"),
    ("local:\u0664", "whole number"),   # an Arabic-Indic digit is not an ASCII count
    ("tcp://host", "tcp://HOST:PORT"),
    ("tcp://host:0", "out of range"),
    ("tcp://host:70000", "out of range"),
    ("host:8786", "tcp://HOST:PORT"),
    ("tcp://a b:8786", "tcp://HOST:PORT"),
    ("", "tcp://HOST:PORT"),
])
def test_bad_scheduler_values(text, fragment):
    with pytest.raises(ValueError, match="tcp://HOST:PORT|local:N") as caught:
        parse_scheduler(text)
    assert fragment in str(caught.value)


@pytest.mark.parametrize("command", [["distancing", "{tmp}/t.txt", "--output-dir", "{tmp}/o"],
                                     ["metrics", str(DEMO)]])
@pytest.mark.parametrize("value", ["local:0", "tcp:/x:1", "yarn://cluster"])
def test_bad_scheduler_exits_2_with_one_line(tmp_path, capsys, command, value):
    (tmp_path / "t.txt").write_text("A text.\n", encoding="utf-8")
    with pytest.raises(SystemExit) as caught:
        main([part.format(tmp=tmp_path) for part in command] + ["--scheduler", value])
    out, err = capsys.readouterr()
    assert caught.value.code == 2 and out == ""
    assert err.count("\n") == 1 and "--scheduler" in err and value in err, err


def test_unreachable_scheduler_is_one_line_exit_2(tmp_path):
    """Nothing listens on the port: one line naming the address, exit 2, within the connect timeout."""
    (tmp_path / "t.txt").write_text("A text.\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "empathy", "distancing", str(tmp_path / "t.txt"), "--scheduler",
                           "tcp://127.0.0.1:9", "--output-dir", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "tcp://127.0.0.1:9: cannot connect" in done.stderr, done.stderr


# --- equality with the single-process path -------------------------------------------------------------------
def test_demo_texts_equal_single_process(client, demo, tmp_path):
    texts = list(pd.unique(pd.concat([demo["reference"], demo["generation"]])))
    stats = parse_to_partitions(texts, tmp_path / "out", client, partition_size=16, cache_dir=tmp_path / "cache")
    assert (stats.partitions, stats.computed, stats.skipped, stats.texts) == (-(-len(texts) // 16),
                                                                              stats.partitions, 0, len(texts))
    assert list(read_results(tmp_path / "out")) == _single(texts)
    # the spaCy model was loaded once in each worker process that parsed, however many partitions it parsed
    assert set(stats.model_loads.values()) == {1} and 1 <= len(stats.model_loads) <= 2
    table = pd.read_parquet(tmp_path / "out")   # the partitions alone, in input order
    assert table["index"].tolist() == list(range(len(texts)))
    sentences, densities = read_features(tmp_path / "out")
    expected_sentences, expected_densities = _features(texts)
    np.testing.assert_array_equal(sentences, expected_sentences)
    np.testing.assert_array_equal(densities, expected_densities)


def _features(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    results = _single(texts)
    return (np.array([r.sentences for r in results], dtype=float), np.array([r.densities() for r in results]))


def test_demo_metrics_cli_equal_single_process(cluster, tmp_path, capsys, monkeypatch):
    """``metrics --scheduler tcp://...`` (the module's cluster) prints the single-process JSON exactly."""
    ratings = str(DEMO_DIR / "ratings_author.csv")
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "single-cache"))
    assert main(["metrics", str(DEMO), "--ratings", ratings, "--format", "json"]) == 0
    single = capsys.readouterr().out
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "unused"))
    assert main(["metrics", str(DEMO), "--ratings", ratings, "--format", "json", "--scheduler",
                 cluster.scheduler_address, "--partition-size", "40", "--features-dir", str(tmp_path / "f")]) == 0
    assert capsys.readouterr().out == single
    assert json.loads(single)["metrics"]  # a real table, LD rows included
    assert any(row["metric"] == "LD" for row in json.loads(single)["metrics"])
    assert len(list((tmp_path / "f").glob("part-*.parquet"))) == 4  # 146 distinct texts in partitions of 40


def test_distancing_cli_equal_single_process(cluster, demo, tmp_path, capsys):
    lines = tmp_path / "texts.txt"
    lines.write_text("".join(text.replace("\n", " ") + "\n" for text in demo["generation"][:30]), encoding="utf-8")
    assert main(["distancing", str(lines), "--no-cache"]) == 0
    single = capsys.readouterr().out
    args = ["distancing", str(lines), "--no-cache", "--scheduler", cluster.scheduler_address,
            "--output-dir", str(tmp_path / "o"), "--partition-size", "7"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out == single and "30 texts in 5 partitions: 5 parsed, 0 already done" in err
    assert main(args) == 0  # a re-run parses nothing
    out, err = capsys.readouterr()
    assert out == single and "30 texts in 5 partitions: 0 parsed, 5 already done" in err


def test_local_n_starts_and_stops_its_own_cluster(tmp_path):
    """``--scheduler local:1`` through ``python -m empathy`` (worker processes re-import the entry point)."""
    texts = tmp_path / "t.txt"
    texts.write_text("The decision was announced.\nI hear you.\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "empathy", "distancing", str(texts), "--no-cache", "--scheduler",
                           "local:1", "--output-dir", str(tmp_path / "o")], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["counts"] for line in done.stdout.splitlines()] == [
        {"nominalization": 1, "impersonal": 0, "agentless": 1}, {"nominalization": 0, "impersonal": 0, "agentless": 0}]
    assert done.stderr.strip() == f"empathy: 2 texts in 1 partitions: 1 parsed, 0 already done in {tmp_path / 'o'}"


# --- 10,000 outputs ------------------------------------------------------------------------------------------
SUBJECTS = ("The committee", "Our team", "The nurse", "A neighbour", "The council", "My doctor", "The company",
            "Your friend", "The school", "The police")
VERBS = ("announced", "reviewed", "approved", "ignored", "delayed", "explained", "rejected", "discussed")
OBJECTS = ("the decision", "the plan", "your concern", "the report", "the change", "the request")


def synthetic_outputs(n_items: int, n_models: int = 5, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``n_items x n_models`` outputs of one-to-two-sentence distinct texts, and one judge's ratings of them.

    The generations cycle through an impersonal passive, a nominalization and an active sentence with a
    second sentence, so all three distancing counts and the sentence counts vary; two tasks.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        reference = f"{SUBJECTS[i % 10]} {VERBS[i // 10 % 8]} {OBJECTS[i // 80 % 6]} on day {i}."
        for m in range(n_models):
            if m % 3 == 0:
                generation = f"It was decided that {OBJECTS[i % 6]} was {VERBS[(i + m) % 8]} on day {i}."
            elif m % 3 == 1:
                generation = f"The implementation of {OBJECTS[(i + m) % 6][4:]} {i} was {VERBS[i % 8]}."
            else:
                generation = f"{SUBJECTS[(i + m) % 10]} {VERBS[i % 8]} it, case {i}. I understand."
            rows.append((f"item-{i}", f"model-{m}", ("news", "counseling")[i % 2], reference, generation))
    outputs = pd.DataFrame(rows, columns=["item_id", "model", "task", "reference", "generation"])
    n = len(outputs)
    long = []
    for dimension, values in (("e_ref", rng.random(n)), ("e_gen", rng.random(n)),
                              ("u_ref", rng.integers(0, 3, n).astype(float)),
                              ("u_gen", rng.integers(0, 3, n).astype(float)),
                              ("ca", rng.integers(0, 2, n).astype(float))):
        long.append(pd.DataFrame({"item_id": outputs["item_id"], "model": outputs["model"], "rater": "judge",
                                  "dimension": dimension, "value": values, "rater_kind": "llm", "reason": "",
                                  "signature": "rater=judge"}))
    return outputs, pd.concat(long, ignore_index=True)


@pytest.mark.slow
def test_ten_thousand_outputs_metrics_equal_single_process(client, tmp_path):
    outputs, ratings = synthetic_outputs(2_000)
    assert len(outputs) == 10_000
    signature = detector_signature()
    single = text_features(outputs, _features, signature=signature)
    analyser = cluster_analyser(client, tmp_path / "features", partition_size=1_000, cache_dir=False)
    spread = text_features(outputs, analyser, signature=signature)
    for name in ("sentences_ref", "sentences_gen", "densities_ref", "densities_gen"):
        np.testing.assert_array_equal(getattr(spread, name), getattr(single, name), err_msg=name)
    assert np.nanmax(single.densities_gen, axis=0).min() > 0  # every distancing count occurs
    for by_task in (False, True):
        expected = compute_metrics(outputs, ratings, features=single, by_task=by_task)
        got = compute_metrics(outputs, ratings, features=spread, by_task=by_task)
        pd.testing.assert_frame_equal(got.table, expected.table, check_exact=True)
        assert str(got.signature) == str(expected.signature)
    assert set(expected.table["metric"]) == {"SA", "EGM", "CA", "LD"}
    assert len(list((tmp_path / "features").glob("part-*.parquet"))) == 12  # 12,000 distinct texts


# --- resume and failures -------------------------------------------------------------------------------------
def test_resume_recomputes_only_missing_partitions(client, demo, tmp_path):
    texts = list(demo["generation"][:60])
    out = tmp_path / "out"
    first = parse_to_partitions(texts, out, client, partition_size=6, cache_dir=False)
    assert (first.partitions, first.computed) == (10, 10)
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("part-*.parquet")}
    # a crash after partition 3's file but before its marker; partition 7 lost entirely; 8's file damaged
    (out / "_markers" / "part-000003.json").unlink()
    (out / "part-000007.parquet").unlink()
    (out / "_markers" / "part-000007.json").unlink()
    (out / "part-000008.parquet").write_bytes(b"truncated")
    second = parse_to_partitions(texts, out, client, partition_size=6, cache_dir=False)
    assert (second.computed, second.skipped) == (3, 7)
    after = {p.name: p.stat().st_mtime_ns for p in out.glob("part-*.parquet")}
    rewritten = sorted(name for name in after if after[name] != before.get(name))
    assert rewritten == ["part-000003.parquet", "part-000007.parquet", "part-000008.parquet"]
    assert list(read_results(out)) == _single(texts)
    # changed texts invalidate exactly their partition; a shorter input drops the partitions past its end
    edited = texts[:50]
    edited[13] = "The results were reviewed."
    third = parse_to_partitions(edited, out, client, partition_size=6, cache_dir=False)
    assert (third.partitions, third.computed, third.skipped) == (9, 2, 7)  # partition 2 (text 13) and 8 (shorter)
    assert sorted(p.name for p in out.glob("part-*.parquet"))[-1] == "part-000008.parquet"
    assert list(read_results(out)) == _single(edited)


def test_markers_vouch_for_texts_and_signature(tmp_path):
    store = PartitionStore(tmp_path / "s")
    frame = pd.DataFrame({"index": [0], "result": ["{}"]})
    digest = partition_digest(["a", "b"])
    store.write(0, digest, "sig", frame)
    assert store.is_done(0, digest, "sig")
    assert not store.is_done(0, partition_digest(["a", "c"]), "sig")
    assert not store.is_done(0, partition_digest(["b", "a"]), "sig")   # order matters
    assert not store.is_done(0, digest, "other-rules")
    assert not store.is_done(1, digest, "sig")
    assert not list((tmp_path / "s").glob(".*.tmp"))   # temporary files renamed into place


def test_folder_that_is_not_a_partition_folder_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ValueError, match="not an empathy partition folder"):
        PartitionStore(tmp_path)
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_worker_killed_mid_run_loses_no_finished_partition(client, demo, tmp_path):
    """SIGKILL one worker process after the second partition is written; the nanny restarts it, Dask reruns
    the partitions it held, and the finished ones are neither lost nor recomputed."""
    texts = list(pd.unique(pd.concat([demo["reference"], demo["generation"]])))
    pids = client.run(os.getpid)
    written: list[str] = []
    killed: list[int] = []

    def kill_once(stats):
        written.append(stats.computed)
        if stats.computed == 2 and not killed:
            victim = next(iter(pids.values()))
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    out = tmp_path / "out"
    stats = parse_to_partitions(texts, out, client, partition_size=8, cache_dir=tmp_path / "cache",
                                progress=kill_once)
    assert killed and stats.computed == stats.partitions == -(-len(texts) // 8)
    assert list(read_results(out)) == _single(texts)
    again = parse_to_partitions(texts, out, client, partition_size=8, cache_dir=tmp_path / "cache")
    assert (again.computed, again.skipped) == (0, stats.partitions)
    client.wait_for_workers(2, timeout=120)


def test_failed_partition_is_retried_then_reported(monkeypatch, tmp_path, demo):
    """A worker error is retried (``retries=``); one that persists stops the run with PartitionFailed, and the
    partitions finished before it stay on disk. An in-process cluster, so the fault can be injected."""
    import empathy.cluster as cluster_module

    texts = list(demo["generation"][:20])
    real = cluster_module.analyze
    calls: dict[str, int] = {}

    def flaky(chunk, **kw):
        calls[chunk[0]] = calls.get(chunk[0], 0) + 1
        if chunk[0] == texts[10] and calls[chunk[0]] <= failures:
            raise OSError("disk hiccup")
        return real(chunk, **kw)

    monkeypatch.setattr(cluster_module, "analyze", flaky)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0",
                                  silence_logs=40) as local, distributed.Client(local) as inproc:
        failures = 2
        stats = parse_to_partitions(texts, tmp_path / "a", inproc, partition_size=5, cache_dir=False, retries=2)
        assert stats.computed == 4 and calls[texts[10]] == 3   # two failures, then success on the last retry
        assert list(read_results(tmp_path / "a")) == _single(texts)
        calls.clear()
        failures = 10
        with pytest.raises(PartitionFailed, match="partition 2 failed after 1 retries: OSError: disk hiccup"):
            parse_to_partitions(texts, tmp_path / "b", inproc, partition_size=5, cache_dir=False, retries=1)
        assert calls[texts[10]] == 2
        done = PartitionStore(tmp_path / "b")
        assert done.is_done(0, partition_digest(texts[:5]), detector_signature())
        assert not done.is_done(2, partition_digest(texts[10:15]), detector_signature())
