"""The demo generator (``scripts/make_demo.py``): the same bytes every run, at least 300 outputs with a
conflict-avoidance label, author labels equal to what was planted, and the planted tendencies visible in the
package's own metrics on the generated data.

One module fixture generates the data set once (the distancing parses come from the persistent cache); the
determinism test generates it a second time in a fresh interpreter with another hash seed.
"""

from __future__ import annotations

import csv
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from empathy.evaluate import compute_metrics, text_features
from empathy.exhibits import MECHANISMS, read_curated
from empathy.io import load_dataset, load_outputs
from empathy.judges import run_judge
from empathy.paths import PROJECT_ROOT

SCRIPTS = PROJECT_ROOT / "scripts"
FILES = ("outputs.csv", "ratings_author.csv", "ratings_lexicon.csv", "exhibits.csv", "README.md")
MODELS = {"fennel", "gorse", "hazel", "larch", "sorrel"}
#: Modes whose replies give solutions or seek harmony (label 1), explore (label 0) or are left undecided.
AVOIDING = {"solve", "flat_solve", "drama_direct", "distance_suggest", "harmony"}
EXPLORING = {"explore", "flat_clarify", "drama_explore", "distance_explore"}
UNDECIDED = {"drama_mixed"}
#: The mechanisms each mode's demo_note must name (hand-written here, not read from the generator).
MODE_TAGS = {
    "explore": {"faithful"}, "solve": {"CA"}, "flat_solve": {"SA", "CA"}, "flat_clarify": {"SA"},
    "drama_direct": {"EGM", "SA", "CA"}, "drama_explore": {"EGM", "SA"}, "drama_mixed": {"EGM", "SA", "CA"},
    "distance_explore": {"LD", "SA"}, "distance_suggest": {"LD", "SA", "CA"}, "harmony": {"CA", "SA"},
}


@pytest.fixture(scope="module")
def make_demo():
    """The generator module (it imports its banks and the lexicon script from beside it, in ``scripts/``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(SCRIPTS))
        yield importlib.import_module("make_demo")


@pytest.fixture(scope="module")
def demo(make_demo, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    make_demo.generate(out)
    return out


@pytest.fixture(scope="module")
def dataset(demo):
    return load_dataset(demo / "outputs.csv", [demo / "ratings_author.csv", demo / "ratings_lexicon.csv"])


@pytest.fixture(scope="module")
def generated(make_demo):
    return make_demo.generated_rows()


def _author(dataset) -> pd.Series:
    ratings = dataset.ratings[dataset.ratings["rater"] == "author"]
    return ratings.set_index(["item_id", "model", "dimension"])["value"]


# ------------------------------------------------------------------------------------------ determinism
def test_two_runs_write_the_same_bytes(demo, tmp_path):
    again = tmp_path / "again"
    environment = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, str(SCRIPTS / "make_demo.py"), "--out", str(again)], check=True,
                   cwd=tmp_path, env=environment, capture_output=True)
    assert sorted(path.name for path in again.iterdir()) == sorted(FILES)
    for name in FILES:
        assert (again / name).read_bytes() == (demo / name).read_bytes(), name


# ------------------------------------------------------------------------------------------ counts
def test_counts_tasks_and_models(dataset):
    outputs = dataset.outputs
    assert set(outputs["task"]) == {"news", "translation", "counseling"}
    assert set(outputs["model"]) == MODELS
    assert not outputs.duplicated(["item_id", "model"]).any()
    for rater in ("author", "lexicon"):
        ca = dataset.ratings[(dataset.ratings["rater"] == rater) & (dataset.ratings["dimension"] == "ca")]
        assert ca["value"].notna().sum() >= 300, rater
        assert set(ca["item_id"]) == set(outputs.loc[outputs["task"] == "counseling", "item_id"])
    assert len(outputs) == 121 + 5 * 63


def test_the_hand_written_items_are_kept_verbatim(demo):
    for name in ("outputs.csv", "ratings_author.csv"):
        source = (SCRIPTS / "demo_bank" / "handwritten" / name).read_bytes()
        assert (demo / name).read_bytes().startswith(source), name


def test_the_html_payload_row_is_kept(dataset):
    row = dataset.outputs[dataset.outputs["item_id"] == "co-09"]
    assert row["model"].tolist() == ["hazel"]
    assert row["demo_note"].tolist() == ["escaping test"]
    generation = row["generation"].iloc[0]
    assert "<script>alert(1)</script>" in generation and "<img src=x onerror=alert(2)>" in generation


def test_no_text_is_repeated(dataset, generated):
    outputs = dataset.outputs
    assert not outputs["generation"].duplicated().any()
    references = outputs.drop_duplicates("item_id")["reference"]
    assert not references.duplicated().any()
    # a narrative's closing question comes from a small bank; every other sentence is its own
    narratives = {row.reference for row in generated}
    bodies = [sentence for text in narratives for sentence in re.split(r"(?<=[.?!])\s+", text)[:-1]]
    assert len(bodies) == len(set(bodies))


def test_texts_are_filled_and_punctuated(generated):
    for row in generated:
        for text in (row.reference, row.generation):
            assert "{" not in text and "}" not in text and "  " not in text, text
            assert text[0].isupper() and text[-1] in ".?!", text


# ------------------------------------------------------------------------------------------ notes and labels
def test_every_generated_note_names_its_mechanisms(generated):
    for row in generated:
        tags = {part.split(":")[0].split(" ")[0] for part in row.demo_note.split("; ")}
        assert MODE_TAGS[row.mode] <= tags, (row.item_id, row.model, row.demo_note)
        if row.mode == "explore":
            assert row.demo_note.startswith("faithful")


def test_sa_notes_quote_the_words_of_the_texts(generated):
    for row in generated:
        for before, after in re.findall(r"'([^']+)' (?:->|held at a distance as) '([^']+)'", row.demo_note):
            assert before in row.reference and after in row.generation, (row.item_id, row.model)


def test_author_labels_are_what_was_planted(dataset, generated):
    author = _author(dataset)
    for row in generated:
        planted = dict(row.ratings)
        for dimension, value in planted.items():
            stored = author[(row.item_id, row.model, dimension)]
            assert (np.isnan(stored) if value is None else stored == value), (row.item_id, row.model, dimension)
        ca = author[(row.item_id, row.model, "ca")]
        if row.mode in AVOIDING:
            assert ca == 1, (row.item_id, row.model)
        elif row.mode in EXPLORING:
            assert ca == 0, (row.item_id, row.model)
        else:
            assert row.mode in UNDECIDED and np.isnan(ca)
        e_ref, e_gen = planted["e_ref"], planted["e_gen"]
        if row.mode.startswith("drama"):  # over-dramatised: more intense than the client, disturbing detail added
            assert e_gen > e_ref and planted["u_gen"] >= 1
        if row.mode.startswith(("flat", "distance", "harmony")) and e_gen is not None:
            assert e_gen < e_ref


def test_a_hand_worked_row(generated):
    """co-10 (Joel's tablet) to fennel: both feelings 0.85 ('betrayed', 'humiliated'); fennel's 'let down' and
    'embarrassed' are 0.3 each; clarifying questions (label 0); no disturbing content on either side."""
    row = next(row for row in generated if (row.item_id, row.model) == ("co-10", "fennel"))
    assert row.client.key == "joel-tablet" and row.mode == "flat_clarify"
    assert dict(row.ratings) == {"e_ref": 0.85, "e_gen": 0.3, "u_ref": 0.0, "u_gen": 0.0, "ca": 0.0}
    assert row.demo_note.startswith("SA: 'betrayed' -> 'let down', 'humiliated' -> 'embarrassed'")


def test_deliberately_missing_ratings(dataset):
    ratings = dataset.ratings[dataset.ratings["rater"] == "author"]
    missing = ratings[ratings["value"].isna()]
    assert set(missing["reason"]) == {"author could not decide"}
    assert sorted(missing["dimension"]) == ["ca", "ca", "ca", "e_gen", "e_gen", "u_gen"]
    assert len(missing) == 6  # the hand-written demo's 3, two undecided gorse labels, one sorrel affect


@pytest.mark.parametrize(("phrase", "quoted"), [
    ("tell him I'm not coming", "tell him you're not coming"),
    ("losing my temper and proving his point", "losing your temper and proving his point"),
    ("what they would do to me afterwards", "what they would do to you afterwards"),
    ("ask him why he told me to apply at all", "ask him why he told you to apply at all"),
    ("tell him that I have stopped expecting him to ask", "tell him that you have stopped expecting him to ask"),
    ("the panic she would be in when my dot disappeared", "the panic she would be in when your dot disappeared"),
    ("hearing that she's right", "hearing that she's right"),
])
def test_second_person(make_demo, phrase, quoted):
    assert make_demo.second_person(phrase) == quoted


# ------------------------------------------------------------------------------------------ the metrics
@pytest.fixture(scope="module")
def metrics(dataset):
    features = text_features(dataset.outputs)
    table = compute_metrics(dataset.outputs, dataset.ratings, features=features, by_task=True).table
    reference = compute_metrics(dataset.outputs, dataset.ratings, features=features, by_task=True,
                                ld_standardization="reference").table
    return table, reference


def _values(table: pd.DataFrame, task: str, metric: str, scorer: str) -> pd.Series:
    rows = table[(table["task"] == task) & (table["metric"] == metric) & (table["scorer"] == scorer)]
    return rows.set_index("model")["value"]


def test_planted_tendencies_show_in_the_metrics(metrics):
    table, reference = metrics
    ca = _values(table, "counseling", "CA", "author")
    assert ca.idxmax() == "sorrel" and ca.idxmin() == "hazel"
    for task in ("news", "translation", "counseling"):
        assert _values(table, task, "SA", "author").idxmax() == "fennel", task
        assert _values(table, task, "EGM", "author").idxmax() == "gorse", task
        assert _values(reference, task, "LD", "spacy-distancing").idxmax() == "larch", task
    assert _values(table, "counseling", "SA", "author")["gorse"] < 0  # amplified: more intense than the client
    lexicon = _values(table, "counseling", "CA", "lexicon")
    assert lexicon["sorrel"] > lexicon["hazel"]  # the harmony cues are the kind the lexicon's heuristic reads


def test_lexicon_ratings_equal_a_fresh_run(make_demo, demo):
    stored = pd.read_csv(demo / "ratings_lexicon.csv", keep_default_na=False, dtype=str)
    outputs, _ = load_outputs(demo / "outputs.csv")
    protocols = importlib.import_module("make_demo_lexicon_ratings").TASK_PROTOCOLS
    fresh = run_judge(outputs, "lexicon", task_protocols=protocols, cache=False).ratings
    assert len(stored) == len(fresh)
    for column in ("item_id", "model", "rater", "dimension", "rater_kind", "signature"):
        assert stored[column].tolist() == fresh[column].astype(str).tolist(), column
    values = pd.to_numeric(stored["value"].replace("", np.nan)).to_numpy(dtype=float)
    assert np.array_equal(values, fresh["value"].to_numpy(dtype=float), equal_nan=True)


# ------------------------------------------------------------------------------------------ exhibits, README
def test_exhibits_show_each_mechanism_with_the_written_numbers(demo, dataset):
    curated = read_curated(demo / "exhibits.csv", dataset.outputs)
    assert curated["mechanism"].tolist() == list(MECHANISMS)
    author = _author(dataset)
    sa, egm, ca, ld = curated.itertuples()
    e_ref, e_gen = author[(sa.item_id, sa.model, "e_ref")], author[(sa.item_id, sa.model, "e_gen")]
    assert f"{e_ref:.2f} in the reference and {e_gen:.2f}" in sa.note and f"{1 - e_gen / e_ref:.2f}" in sa.note
    assert f"counts {author[(egm.item_id, egm.model, 'u_ref')]:g} disturbing" in egm.note
    assert author[(ca.item_id, ca.model, "ca")] == 1 and "labels it 1" in ca.note
    assert re.search(r"\d+, \d+ and \d+ spans in \d+ sentences", ld.note)


def test_readme_counts_the_files(demo, dataset):
    text = (demo / "README.md").read_text(encoding="utf-8")
    with (demo / "ratings_author.csv").open(newline="", encoding="utf-8") as handle:
        author_rows = sum(1 for _ in csv.DictReader(handle))
    assert f"| `outputs.csv` | {len(dataset.outputs)} |" in text
    assert f"| `ratings_author.csv` | {author_rows} |" in text
    assert "`co-10` .. `co-72`" in text
    assert "$" not in text  # every template field was filled
