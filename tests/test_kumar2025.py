"""Import of the Kumar et al. (2025) expert / crowd / LLM annotations (empathy.datasets.kumar2025).

The data set lives in ``shared/datasets/kumar2025-empathic-communication``; every test that needs it skips
cleanly when it is absent. Reference numbers come from the raw files themselves, from the authors' own merge
(``combined_annotations_across_methods_and_datasets.csv``) and from the authors' published agreement table
(``annotations/all_annotator_pairs_spearman_kappa.csv`` of their repository, commit ba68e4f).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

from empathy.cli import main as cli_main
from empathy.datasets import CORPORA, RATERS, import_kumar2025
from empathy.io import DataError, load_dataset
from empathy.paths import shared_dataset

DATA = shared_dataset("kumar2025-empathic-communication")
needs_data = pytest.mark.skipif(DATA is None, reason="shared/datasets/kumar2025-empathic-communication absent")
pytestmark = needs_data

CORPUS_SIZES = {"epitome": 3, "lend_an_ear": 6, "empatheticdialogues": 3, "perceived_empathy": 9}


@pytest.fixture(scope="module")
def result():
    return import_kumar2025(DATA)


def _raw_cell(relative: str, key: str, source_id: str, column: str) -> str:
    with (DATA / relative).open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if row[key].strip() == source_id:
                return row[column]
    raise KeyError(source_id)


def _value(ratings: pd.DataFrame, corpus: str, rater: str, source_id: str, dimension: str) -> float:
    rows = ratings[(ratings["item_id"] == f"{corpus}:{source_id}") & (ratings["rater"] == rater)
                   & (ratings["dimension"] == dimension)]
    assert len(rows) == 1
    return float(rows["value"].iat[0])


def _wide(ratings: pd.DataFrame, corpus: str, dimension: str) -> pd.DataFrame:
    subset = ratings[(ratings["model"] == corpus) & (ratings["dimension"] == dimension)]
    return subset.pivot(index="item_id", columns="rater", values="value").sort_index()


# ------------------------------------------------------------------------------------------ counts


def test_outputs_one_row_per_conversation(result):
    outputs = result.outputs
    assert len(outputs) == 200
    assert outputs.groupby("model").size().to_dict() == {c: 50 for c in CORPUS_SIZES}
    assert (outputs["model"] == outputs["task"]).all()
    assert outputs["item_id"].is_unique
    assert (outputs["item_id"] == outputs["model"] + ":" + outputs["source_id"]).all()
    assert result.report.items == {c: {"items": 50, "with_text": 0 if c == "perceived_empathy" else 50}
                                   for c in CORPUS_SIZES}


def test_ratings_per_rater_and_dimension(result):
    ratings = result.ratings
    assert len(ratings) == 7350  # 50 conversations x 21 dimensions x 7 raters
    assert ratings["value"].notna().all()
    per_cell = ratings.groupby(["model", "rater", "dimension"]).size()
    assert len(per_cell) == 7 * sum(CORPUS_SIZES.values())
    assert (per_cell == 50).all()
    for corpus, spec in CORPORA.items():
        assert set(ratings.loc[ratings["model"] == corpus, "dimension"]) == set(spec.dimensions)
    counts = result.report.counts
    assert counts["ratings"].sum() == 7350 and counts["missing"].sum() == 0
    kinds = ratings.groupby("rater")["rater_kind"].unique().map(list).to_dict()
    assert kinds == {r: [kind] for r, (kind, _) in RATERS.items()}


@pytest.mark.parametrize(("corpus", "low", "high", "fractional"), [
    ("epitome", 0, 2, 0),
    ("lend_an_ear", 1, 5, 195),
    ("empatheticdialogues", 1, 5, 29),
    ("perceived_empathy", 1, 7, 296),
])
def test_scales_and_fractional_crowd_means(result, corpus, low, high, fractional):
    ratings = result.ratings[result.ratings["model"] == corpus]
    assert ratings["value"].between(low, high).all()
    non_crowd = ratings[ratings["rater"] != "crowd"]["value"]
    assert (non_crowd % 1 == 0).all()
    crowd = ratings[ratings["rater"] == "crowd"]["value"]
    assert int((crowd % 1 != 0).sum()) == fractional
    stats = {f.path: f for f in result.report.files}
    assert stats[f"annotations/{corpus}/crowd_ratings.csv"].fractional_values == fractional


def test_report_counts_every_quirk(result):
    report = result.report
    dropped = report.events_where("dropped")
    index_files = sorted(e.file for e in dropped if "index column" in e.why)
    assert index_files == sorted(
        [f"annotations/{c}/{r}_ratings.csv" for c in CORPUS_SIZES for r in ("gpt", "claude")]
        + ["annotations/lend_an_ear/gemini_ratings.csv"])
    literal = [e for e in dropped if e.file == "annotations/lend_an_ear/gemini_ratings.csv"]
    assert "non-contiguous 1..140" in literal[0].why and "empty header" not in literal[0].why
    assert all(e.count == 1 for e in dropped)  # one index column per file; no rating rows dropped
    merged = report.events_where("merged")
    assert [(e.file, e.count) for e in merged] == [("original_data/sample_empatheticdialogues.csv", 162)]
    changed = {(e.file, e.count) for e in report.events_where("changed")}
    assert changed == {("original_data/sample_empatheticdialogues.csv", 86), ("annotations/perceived_empathy", 50)}
    assert sum(f.repeated_run_rows_merged for f in report.files) == 0  # no repeated LLM runs in this snapshot
    assert sum(f.exact_duplicates_dropped + f.blank_keys_dropped + f.out_of_scale for f in report.files) == 0
    crlf = sorted(f.path for f in report.files if f.line_endings.startswith("CRLF"))
    assert crlf == sorted([f"annotations/{c}/expert3_ratings.csv" for c in CORPUS_SIZES]
                          + ["annotations/perceived_empathy/gemini_ratings.csv"])
    assert all(c.action == "ok" for c in report.checks), [c for c in report.checks if c.action != "ok"]
    assert len(report.checks) == 18
    empty_turns = [c for c in report.checks if "630 empty" in c.why]
    assert [c.file for c in empty_turns] == ["annotations/lend_an_ear/gemini_ratings.csv"]
    text = report.format()
    assert "non-contiguous 1..140" in text and "total: 7350 ratings" in text


# ------------------------------------------------------------------------------------ raw cells


@pytest.mark.parametrize(("corpus", "rater", "key", "source_id", "dimension", "expected"), [
    ("epitome", "expert1", "sp_id", "97keuy", "level_emotional_reactions", 0.0),
    ("epitome", "gpt", "sp_id", "41g07l", "level_explorations", 1.0),
    ("lend_an_ear", "crowd", "conversation_id", "20241031124050492385", "validating_emotions", 2.6666666666666665),
    ("lend_an_ear", "crowd", "conversation_id", "20241031124050492385", "self_oriented", 1.6666666666666667),
    ("perceived_empathy", "crowd", "id", "5bfd81fb2feab400014d9060", "m_understood", 6.666666667),
    ("empatheticdialogues", "crowd", "conv_id", "hit:401_conv:803", "fluency", 3.5),
    ("perceived_empathy", "gemini", "id", "609122350e5b8e743ab41f79", "m_motivation", 3.0),
])
def test_values_equal_raw_cells(result, corpus, rater, key, source_id, dimension, expected):
    relative = f"annotations/{corpus}/{rater}_ratings.csv"
    assert float(_raw_cell(relative, key, source_id, dimension)) == expected
    assert _value(result.ratings, corpus, rater, source_id, dimension) == expected


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_every_file_cell_is_imported(result, corpus):
    spec = CORPORA[corpus]
    for rater in RATERS:
        raw = pd.read_csv(DATA / f"annotations/{corpus}/{rater}_ratings.csv", dtype=str, keep_default_na=False)
        key = next(k for k in spec.key_columns if k in raw.columns)
        expected = raw.melt(id_vars=key, value_vars=list(spec.dimensions), var_name="dimension")
        expected["item_id"] = corpus + ":" + expected[key].str.strip()
        ours = result.ratings[(result.ratings["rater"] == rater) & (result.ratings["model"] == corpus)]
        joined = expected.merge(ours, on=["item_id", "dimension"], how="outer", suffixes=("_raw", ""))
        assert len(joined) == len(expected) == len(ours)
        assert np.array_equal(joined["value_raw"].astype(float).to_numpy(), joined["value"].to_numpy())


# ----------------------------------------------------------------------------------------- texts


def test_reference_and_generation(result):
    outputs = result.outputs.set_index("item_id")
    epitome = pd.read_csv(DATA / "original_data/sample_epitome.csv", dtype=str, keep_default_na=False)
    first = epitome.iloc[0]
    assert outputs.at[f"epitome:{first['sp_id']}", "reference"] == first["seeker_post"].strip()
    assert outputs.at[f"epitome:{first['sp_id']}", "generation"] == first["response_post"].strip()
    assert outputs.at[f"epitome:{first['sp_id']}", "rp_id"] == first["rp_id"]
    texts = outputs[outputs["text_available"] == "yes"]
    assert len(texts) == 150
    # the authors' response_length is the word count of the supporter's text: our generation reproduces it
    words = texts["generation"].str.split().str.len()
    assert (words == texts["response_length"].astype(int)).all()
    assert not texts["generation"].str.contains("Seeker:|Supporter:", regex=True).any()
    assert not texts["reference"].str.contains("Supporter:").any()
    ed = texts[texts["model"] == "empatheticdialogues"]
    assert not (ed["reference"] + ed["generation"]).str.contains("_comma_").any()
    assert ed["emotion"].ne("").all()
    lend = texts[texts["model"] == "lend_an_ear"]
    assert lend["crowd_n"].between(2, 11).all() and lend["crowd_n"].sum() == 196
    hidden = outputs[outputs["model"] == "perceived_empathy"]
    assert (hidden["reference"] == "").all() and (hidden["generation"] == "").all()
    assert (hidden["text_available"] == "no").all()


# --------------------------------------------------------------------------------------- writing


def test_written_files_reload(result, tmp_path):
    paths = result.write(tmp_path / "out")
    dataset = load_dataset(paths["outputs"], [paths["ratings"]])
    assert len(dataset.outputs) == 200 and len(dataset.ratings) == 7350
    assert dataset.raters == sorted(RATERS)
    key = ["item_id", "model", "rater", "dimension"]
    reloaded = dataset.ratings.sort_values(key).reset_index(drop=True)
    original = result.ratings.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(reloaded, original)  # floats survive the CSV round trip exactly
    assert paths["report"].is_file()


def test_cli_writes_and_prints_report(tmp_path, capsys):
    assert cli_main(["import", "kumar2025", str(DATA), "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "total: 7350 ratings" in out and "wrote 200 outputs" in out
    assert (tmp_path / "o" / "ratings.csv").is_file()


# ----------------------------------------------------------------------- the authors' own merge


METHOD_COLUMNS = {"lend_an_ear": ("lend_an_ear_conversation_id", "annotation_method"),
                  "perceived_empathy": ("perceived_conversation_id", "annotation_method.1"),
                  "empatheticdialogues": ("empathetic_conversation_id", "annotation_method.2"),
                  "epitome": ("epitome_conversation_id", "annotation_method.3")}
#: the authors' merge calls Gemini "llm" and adds "experts", the per-item median of the three experts
AUTHOR_NAMES = {"expert1": "expert1", "expert2": "expert2", "expert3": "expert3", "crowd": "crowd",
                "gpt": "gpt", "claude": "claude", "gemini": "llm"}


@pytest.fixture(scope="module")
def combined():
    return pd.read_csv(DATA / "annotations/combined_annotations_across_methods_and_datasets.csv", dtype=str,
                       keep_default_na=False)


@pytest.mark.parametrize("corpus", list(CORPORA))
def test_means_and_cells_match_authors_merge(result, combined, corpus):
    id_column, method_column = METHOD_COLUMNS[corpus]
    for dimension in CORPORA[corpus].dimensions:
        ours = _wide(result.ratings, corpus, dimension)
        ours["experts"] = ours[["expert1", "expert2", "expert3"]].median(axis=1)
        for rater, theirs_name in [*AUTHOR_NAMES.items(), ("experts", "experts")]:
            block = combined[combined[method_column] == theirs_name]
            theirs = pd.Series(block[dimension].astype(float).to_numpy(),
                               index=corpus + ":" + block[id_column].str.strip()).sort_index()
            assert len(theirs) == 50
            assert ours[rater].mean() == pytest.approx(theirs.mean(), abs=1e-9), (rater, dimension)
            assert np.allclose(ours[rater].reindex(theirs.index).to_numpy(), theirs.to_numpy(), atol=1e-9)


# ------------------------------------------------------------------------------------- agreement


#: The authors' published table (all_annotator_pairs_spearman_kappa.csv): Spearman and quadratic kappa to
#: two decimals. "experts" = per-item median of the experts, "llm" = Gemini. Their kappa builds categories
#: from the observed values (x100 for crowd means), which is what sklearn does with its default labels.
PUBLISHED = [
    ("epitome", "level_explorations", "expert1", "expert2", 0.82, 0.76),
    ("epitome", "level_interpretations", "expert3", "expert1", 0.44, 0.29),
    ("lend_an_ear", "self_oriented", "expert1", "expert2", 0.85, 0.82),
    ("lend_an_ear", "advice_giving", "experts", "llm", 0.85, 0.66),
    ("lend_an_ear", "encouraging_elaboration", "experts", "crowd", 0.70, 0.43),
    ("empatheticdialogues", "fluency", "expert2", "expert3", 0.03, 0.11),
    ("empatheticdialogues", "empathy", "llm", "crowd", -0.01, 0.00),
    ("perceived_empathy", "m_practical", "expert3", "expert1", 0.82, 0.81),
    ("perceived_empathy", "m_understood", "experts", "crowd", 0.32, 0.20),
    ("perceived_empathy", "m_emotional", "experts", "llm", 0.76, 0.75),
]


@pytest.mark.parametrize(("corpus", "dimension", "a", "b", "rho", "kappa"), PUBLISHED)
def test_reproduces_published_agreement(result, corpus, dimension, a, b, rho, kappa):
    wide = _wide(result.ratings, corpus, dimension)
    wide["experts"] = wide[["expert1", "expert2", "expert3"]].median(axis=1)
    wide["llm"] = wide["gemini"]
    assert spearmanr(wide[a], wide[b]).statistic == pytest.approx(rho, abs=0.005)
    scaled_a, scaled_b = (np.round(wide[c] * 100).astype(int) for c in (a, b))
    assert cohen_kappa_score(scaled_a, scaled_b, weights="quadratic") == pytest.approx(kappa, abs=0.005)


#: expert1 vs GPT-4o (not in the published table): pinned values, each computed by a reference library
@pytest.mark.parametrize(("corpus", "dimension", "rho", "kappa", "alpha_experts"), [
    ("epitome", "level_explorations", 0.8194956982972791, 0.7668997668997669, 0.7639133972019465),
    ("epitome", "level_emotional_reactions", 0.6848198054764356, 0.6143057503506311, 0.5066534485330396),
    ("lend_an_ear", "advice_giving", 0.6586874772571294, 0.4690136747163224, 0.6921097626237529),
    ("perceived_empathy", "m_emotional", 0.595401436118011, 0.5551161641127039, 0.6366762182780921),
])
def test_expert_llm_agreement(result, corpus, dimension, rho, kappa, alpha_experts):
    wide = _wide(result.ratings, corpus, dimension)
    assert spearmanr(wide["expert1"], wide["gpt"]).statistic == pytest.approx(rho, abs=1e-12)
    qwk = cohen_kappa_score(wide["expert1"].astype(int), wide["gpt"].astype(int), weights="quadratic")
    assert qwk == pytest.approx(kappa, abs=1e-12)
    experts = wide[["expert1", "expert2", "expert3"]].to_numpy().T
    alpha = krippendorff.alpha(reliability_data=experts, level_of_measurement="ordinal")
    assert alpha == pytest.approx(alpha_experts, abs=1e-12)
    agreement = pytest.importorskip("empathy.agreement")
    ratings = result.ratings[result.ratings["model"] == corpus]
    pairs = agreement.pairwise_agreement(ratings, dimensions=[dimension], raters=["expert1", "gpt"])
    assert pairs["spearman"].iat[0] == pytest.approx(rho, abs=1e-12)
    assert pairs["kappa_quadratic"].iat[0] == pytest.approx(kappa, abs=1e-12)
    experts_only = ratings[ratings["rater"].str.startswith("expert")]
    alphas = agreement.krippendorff_by_dimension(experts_only).set_index("dimension")
    assert alphas.at[dimension, "alpha"] == pytest.approx(alpha_experts, abs=1e-12)


# ------------------------------------------------------------------------ policies and bad input


@pytest.fixture()
def copy_of_data(tmp_path):
    target = tmp_path / "kumar"
    shutil.copytree(DATA, target, ignore=shutil.ignore_patterns("combined_*", "perceived_empathy_self_*"))
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def _append_rows(path: Path, rows: list[str]) -> None:
    text = path.read_text(encoding="utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    path.write_text(text.rstrip("\r\n") + newline + newline.join(rows) + newline, encoding="utf-8")


@pytest.mark.parametrize(("runs", "expected", "reason"), [
    ("mean", (5.0 + 3.0 + 4.0) / 3, "mean of 3 of 3 runs (runs: 5, 3, 4)"),
    ("first", 5.0, "first of 3 runs (runs: 5, 3, 4)"),
])
def test_repeated_llm_runs(copy_of_data, runs, expected, reason):
    path = copy_of_data / "annotations/perceived_empathy/gemini_ratings.csv"
    first = next(csv.DictReader(path.open(encoding="utf-8", newline="")))
    assert first["m_motivation"] == "5"
    header = list(first)
    extra = [",".join("3" if c != "id" else first["id"] for c in header),
             ",".join("4" if c != "id" else first["id"] for c in header)]
    _append_rows(path, extra)
    imported = import_kumar2025(copy_of_data, runs=runs)
    ratings = imported.ratings.set_index(["item_id", "rater", "dimension"])
    row = ratings.loc[(f"perceived_empathy:{first['id']}", "gemini", "m_motivation")]
    assert row["value"] == pytest.approx(expected)
    assert row["reason"] == reason
    assert len(imported.ratings) == 7350
    merged = [e for e in imported.report.events_where("merged") if "gemini" in e.file]
    assert [(e.count, "1 conversations" in e.why) for e in merged] == [(2, True)]


def test_conflicting_expert_rows_are_an_error(copy_of_data):
    path = copy_of_data / "annotations/epitome/expert2_ratings.csv"
    _append_rows(path, ["97keuy,e48xfwa,2,2,2"])
    with pytest.raises(DataError, match="expert2_ratings.csv.*97keuy.*conflicting"):
        import_kumar2025(copy_of_data)


def test_exact_duplicate_rows_are_dropped_and_counted(copy_of_data):
    path = copy_of_data / "annotations/epitome/expert2_ratings.csv"
    _append_rows(path, ["97keuy,e48xfwa,1,1,0"])
    imported = import_kumar2025(copy_of_data)
    assert len(imported.ratings) == 7350
    stats = {f.path: f for f in imported.report.files}
    assert stats["annotations/epitome/expert2_ratings.csv"].exact_duplicates_dropped == 1


@pytest.mark.parametrize(("remove", "message"), [
    ("annotations/lend_an_ear/claude_ratings.csv", "claude_ratings.csv: expected file not found"),
    ("original_data/sample_epitome.csv", "sample_epitome.csv: expected file not found"),
])
def test_missing_file_exits_2_naming_it(copy_of_data, tmp_path, capsys, remove, message):
    (copy_of_data / remove).unlink()
    with pytest.raises(DataError, match=message):
        import_kumar2025(copy_of_data)
    assert cli_main(["import", "kumar2025", str(copy_of_data), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_missing_directory_exits_2(tmp_path, capsys):
    assert cli_main(["import", "kumar2025", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")]) == 2
    assert "data set directory not found" in capsys.readouterr().err


def test_missing_dimension_column_names_it(copy_of_data):
    path = copy_of_data / "annotations/empatheticdialogues/gpt_ratings.csv"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False).drop(columns=["fluency"])
    frame.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"gpt_ratings.csv, column 'fluency': missing dimension column"):
        import_kumar2025(copy_of_data)


def test_bad_run_policy():
    with pytest.raises(ValueError, match="runs must be 'mean' or 'first'"):
        import_kumar2025(DATA, runs="median")  # type: ignore[arg-type]


def test_identical_llm_runs_are_merged_not_dropped(copy_of_data):
    path = copy_of_data / "annotations/epitome/gemini_ratings.csv"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    pd.concat([frame, frame.iloc[[0]]]).to_csv(path, index=False)
    imported = import_kumar2025(copy_of_data)
    stats = {f.path: f for f in imported.report.files}["annotations/epitome/gemini_ratings.csv"]
    assert (stats.rows_read, stats.exact_duplicates_dropped, stats.repeated_run_rows_merged) == (51, 0, 1)
    merged = imported.ratings[(imported.ratings["item_id"] == f"epitome:{frame['sp_id'].iat[0]}")
                              & (imported.ratings["rater"] == "gemini")]
    assert merged["reason"].str.startswith("mean of 2 of 2 runs").all() and len(merged) == 3


def test_empty_cell_is_a_missing_rating_with_reason(copy_of_data):
    path = copy_of_data / "annotations/epitome/expert1_ratings.csv"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.loc[0, "level_interpretations"] = ""
    frame.to_csv(path, index=False)
    imported = import_kumar2025(copy_of_data)
    missing = imported.ratings[imported.ratings["value"].isna()]
    assert missing[["item_id", "rater", "dimension"]].values.tolist() == [
        [f"epitome:{frame['sp_id'].iat[0]}", "expert1", "level_interpretations"]]
    assert missing["reason"].iat[0] == "empty cell in annotations/epitome/expert1_ratings.csv"
    assert imported.report.counts["missing"].sum() == 1
    assert "50(1)" in imported.report.format()


def test_non_numeric_cell_names_row_and_column(copy_of_data):
    path = copy_of_data / "annotations/lend_an_ear/expert2_ratings.csv"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.loc[4, "advice_giving"] = "three"
    frame.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"expert2_ratings.csv, row 6, column 'advice_giving': not a number"):
        import_kumar2025(copy_of_data)


# ------------------------------------------------------------------ seekers' own ratings (opt-in)


@pytest.fixture(scope="module")
def with_seeker():
    return import_kumar2025(DATA, include_seeker=True)


def test_seeker_ratings_are_opt_in(result, with_seeker):
    assert "seeker" not in set(result.ratings["rater"])
    seeker = with_seeker.ratings[with_seeker.ratings["rater"] == "seeker"]
    assert len(with_seeker.ratings) == 7350 + 300
    assert seeker.groupby("dimension").size().to_dict() == {
        d: 50 for d in ("m_understood", "m_validated", "m_affirmed", "m_seen", "m_accepted", "m_caredfor")}
    assert set(seeker["rater_kind"]) == {"human"} and set(seeker["model"]) == {"perceived_empathy"}
    assert seeker["value"].between(1, 7).all()
    dropped = [(e.count, e.why) for e in with_seeker.report.events_where("dropped") if "self_ratings" in e.file]
    assert dropped == [(405, "participants outside the 50-conversation sample (of 455 rows)")]
    non_seeker = with_seeker.ratings[with_seeker.ratings["rater"] != "seeker"].reset_index(drop=True)
    pd.testing.assert_frame_equal(non_seeker, result.ratings)


@pytest.mark.parametrize(("column", "dimension", "expected"), [
    ("understood", "m_understood", 6.0), ("caredfor", "m_caredfor", 7.0), ("validated", "m_validated", 5.0)])
def test_seeker_values_equal_raw_cells(with_seeker, column, dimension, expected):
    source_id = "5bfd81fb2feab400014d9060"
    assert float(_raw_cell("original_data/perceived_empathy_self_ratings.csv", "id", source_id, column)) == expected
    assert _value(with_seeker.ratings, "perceived_empathy", "seeker", source_id, dimension) == expected


def test_perceived_empathy_metadata(result):
    rows = result.outputs[result.outputs["model"] == "perceived_empathy"]
    assert (rows["response_source"] == "human").all()
    assert rows["label_shown"].value_counts().to_dict() == {"human": 26, "ai": 24}
    raw = pd.read_csv(DATA / "original_data/sample_perceived_empathy_annotations.csv", dtype=str)
    lengths = raw.set_index("OriginalDiscloserID")["response_length"]
    assert (rows["response_length"].to_numpy() == lengths.reindex(rows["source_id"]).to_numpy()).all()
    assert (result.outputs.loc[result.outputs["model"] != "perceived_empathy", "label_shown"] == "").all()


@pytest.mark.parametrize(("rater", "rho"), [("expert1", 0.15824367757780552), ("crowd", 0.2948630661307009)])
def test_seeker_agreement(with_seeker, rater, rho):
    wide = _wide(with_seeker.ratings, "perceived_empathy", "m_understood")
    assert spearmanr(wide["seeker"], wide[rater]).statistic == pytest.approx(rho, abs=1e-12)


def test_cli_with_seeker(tmp_path, capsys):
    assert cli_main(["import", "kumar2025", str(DATA), "--out", str(tmp_path / "o"), "--with-seeker"]) == 0
    assert "seeker self-ratings: imported" in capsys.readouterr().out
    dataset = load_dataset(tmp_path / "o" / "outputs.csv", [tmp_path / "o" / "ratings.csv"])
    assert "seeker" in dataset.raters and len(dataset.ratings) == 7650


def test_docs_agreement_tables_are_current():
    """docs/kumar2025.md's tables are generated by bench/kumar2025_agreement.py; they must match the code."""
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("kumar2025_agreement", root / "bench/kumar2025_agreement.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    block = bench.build_block(DATA)
    docs = (root / "docs/kumar2025.md").read_text(encoding="utf-8")
    assert f"{bench.BEGIN}\n{block}\n{bench.END}" in docs


def test_the_importer_registry_drives_the_cli_and_names_the_store():
    """Issue 10: one registry of importers; the CLI's ``import`` choices, options and the store file come from it."""
    from empathy.cli import build_parser
    from empathy.datasets import IMPORTERS, get_importer
    from empathy.datasets.report import ImportReport

    importer = get_importer("kumar2025")
    assert (importer.folder, importer.store_file, importer.module) == (
        "kumar2025-empathic-communication", "overrides-kumar2025.sqlite", "empathy.datasets.kumar2025")
    with pytest.raises(ValueError, match="unknown importer 'nope'; known: kumar2025"):
        get_importer("nope")
    parser = build_parser()
    args = parser.parse_args(["import", "kumar2025", "DIR", "--out", "O", "--runs", "first", "--with-seeker"])
    assert (args.dataset, args.directory, args.runs, args.include_seeker) == ("kumar2025", "DIR", "first", True)
    defaults = parser.parse_args(["import", "kumar2025", "DIR", "--out", "O"])
    assert {o.parameter: getattr(defaults, o.parameter) for o in importer.options} == {"runs": "mean",
                                                                                       "include_seeker": False}
    assert set(IMPORTERS) == {"kumar2025"}
    # the general report (empathy/datasets/report.py) names its importer
    assert ImportReport(directory="/d", title="X").format().startswith("X import from /d\nseeker self-ratings")
