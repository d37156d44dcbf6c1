"""The random audit design (issue 23, item 1): reproducible draws, inclusion probabilities, errors, stored rows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from empathy.audit import AuditDesign, audit_frame, draw_audit

MODELS = ("a", "b")


def _data(n_items: int = 10, tasks: tuple[str, ...] = ("news", "talk")) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``n_items`` items per task, two models; judge ``j`` rates ca on every output but (i0 of news, b) (NaN)."""
    outputs = pd.DataFrame([{"item_id": f"{t}-{i}", "model": m, "task": t} for t in tasks for i in range(n_items)
                            for m in MODELS])
    ratings = outputs[["item_id", "model"]].assign(rater="j", dimension="ca",
                                                   value=[float(k % 2) for k in range(len(outputs))])
    ratings.loc[(ratings["item_id"] == f"{tasks[0]}-0") & (ratings["model"] == "b"), "value"] = math.nan
    human = outputs[["item_id", "model"]].assign(rater="h", dimension="e_gen", value=0.5)
    return outputs, pd.concat([ratings, human], ignore_index=True)


def test_frame_is_what_the_judge_rated_sorted() -> None:
    outputs, ratings = _data()
    frame = audit_frame(outputs.sample(frac=1, random_state=3), ratings, judge="j", dimension="ca")
    assert len(frame) == 39  # 40 outputs, one missing rating
    assert frame[["model", "task", "item_id"]].equals(frame[["model", "task", "item_id"]].sort_values(
        ["model", "task", "item_id"]).reset_index(drop=True))


def test_draw_is_reproducible_and_independent_of_row_order() -> None:
    outputs, ratings = _data()
    first = draw_audit(outputs, ratings, judge="j", dimension="ca", per_model=5, seed=11)
    again = draw_audit(outputs.iloc[::-1], ratings.sample(frac=1, random_state=1), judge="j", dimension="ca",
                       per_model=5, seed=11)
    assert first == again and first.digest == again.digest
    other = draw_audit(outputs, ratings, judge="j", dimension="ca", per_model=5, seed=12)
    assert other.digest != first.digest
    assert [o.position for o in first.outputs] == list(range(10))
    counts = pd.Series([o.model for o in first.outputs]).value_counts()
    assert counts.to_dict() == {"a": 5, "b": 5}
    # model a has 20 rated outputs, b 19 (one NaN): inclusion 5/20 and 5/19
    assert {o.model: o.inclusion for o in first.outputs} == {"a": pytest.approx(0.25), "b": pytest.approx(5 / 19)}
    assert ("news-0", "b") not in {(o.item_id, o.model) for o in first.outputs}


def test_draw_follows_the_documented_generator_calls() -> None:
    # Strata in sorted order, Generator.choice(N_h, n_h, replace=False) each (sorted), then one permutation.
    outputs, ratings = _data(n_items=4, tasks=("t",))
    design = draw_audit(outputs, ratings, judge="j", dimension="ca", per_model=2, seed=5)
    frame = audit_frame(outputs, ratings, judge="j", dimension="ca")
    rng = np.random.default_rng(5)
    drawn = []
    for model in ("a", "b"):
        part = frame[frame["model"] == model]
        drawn += [tuple(part.iloc[k][["item_id", "model"]]) for k in np.sort(rng.choice(len(part), 2, replace=False))]
    order = rng.permutation(len(drawn))
    assert [(o.item_id, o.model) for o in design.outputs] == [drawn[k] for k in order]


def test_stratified_draw_takes_per_model_from_every_task() -> None:
    outputs, ratings = _data()
    design = draw_audit(outputs, ratings, judge="j", dimension="ca", per_model=3, seed=0, stratify_by_task=True)
    table = design.frame()
    assert table.groupby(["model", "task"]).size().to_dict() == {(m, t): 3 for m in MODELS for t in ("news", "talk")}
    news_b = table[(table["model"] == "b") & (table["task"] == "news")]
    assert news_b["inclusion"].tolist() == pytest.approx([3 / 9] * 3)


def test_every_output_is_drawn_with_its_inclusion_probability() -> None:
    # Simple random sampling: over many seeds each output of a stratum of 20 is drawn about 5/20 of the time,
    # and every prefix of the audit order holds each model's outputs at random too.
    outputs, ratings = _data(n_items=10, tasks=("t", "u"))
    hits: dict[tuple[str, str], int] = {}
    first_two: dict[str, int] = {}
    runs = 150
    for seed in range(runs):
        design = draw_audit(outputs, ratings, judge="j", dimension="ca", per_model=5, seed=seed)
        for o in design.outputs:
            hits[(o.item_id, o.model)] = hits.get((o.item_id, o.model), 0) + 1
        for o in design.outputs[:2]:
            first_two[o.item_id] = first_two.get(o.item_id, 0) + 1
    shares = np.array([hits.get((i, "a"), 0) / runs for i in outputs.loc[outputs["model"] == "a", "item_id"]])
    assert shares.mean() == pytest.approx(0.25)  # exactly 5 of 20 every time
    assert np.abs(shares - 0.25).max() < 4 * math.sqrt(0.25 * 0.75 / runs)
    assert shares.min() > 0  # no output of the frame is out of reach
    assert len(first_two) == 20  # every item reaches the head of the order at some seed


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"judge": "nobody"}, ValueError, r"judge 'nobody' has no ratings; raters are 'h', 'j'"),
    ({"dimension": "e_gen"}, ValueError, r"judge 'j' did not rate dimension 'e_gen'; it rated 'ca'"),
    ({"per_model": 21}, ValueError, r"larger than the data: model 'a' has 20 output"),
    ({"per_model": 10, "stratify_by_task": True}, ValueError, r"model 'b' in task 'news' has 9 output"),
    ({"per_model": 0}, ValueError, r"per_model must be at least 1"),
    ({"per_model": 2.5}, TypeError, r"per_model must be a whole number"),
    ({"per_model": True}, TypeError, r"per_model must be a whole number"),
    ({"seed": -1}, ValueError, r"seed must be at least 0"),
    ({"seed": "1"}, TypeError, r"seed must be a whole number"),
    ({"stratify_by_task": "yes"}, TypeError, r"stratify_by_task"),
    ({"judge": ""}, TypeError, r"judge must be a non-empty string"),
])
def test_bad_draws_name_the_culprit(kwargs: dict[str, object], error: type, match: str) -> None:
    outputs, ratings = _data()
    arguments = {"judge": "j", "dimension": "ca", "per_model": 3, "seed": 0, **kwargs}
    with pytest.raises(error, match=match):
        draw_audit(outputs, ratings, **arguments)


def test_bad_tables_are_refused() -> None:
    outputs, ratings = _data()
    with pytest.raises(ValueError, match="ratings lacks the column"):
        draw_audit(outputs, ratings.drop(columns="rater"), judge="j", dimension="ca", per_model=1, seed=0)
    with pytest.raises(TypeError, match="outputs must be a pandas DataFrame"):
        draw_audit([], ratings, judge="j", dimension="ca", per_model=1, seed=0)
    twice = pd.concat([ratings, ratings.iloc[:1]])
    with pytest.raises(ValueError, match=r"rated output \('news-0', 'a'\) twice"):
        draw_audit(outputs, twice, judge="j", dimension="ca", per_model=1, seed=0)


def _stored() -> tuple[dict[str, object], list[dict[str, object]]]:
    outputs, ratings = _data()
    return draw_audit(outputs, ratings, judge="j", dimension="ca", per_model=3, seed=4).to_rows()


def test_rows_round_trip_exactly() -> None:
    outputs, ratings = _data()
    for stratify in (False, True):
        design = draw_audit(outputs, ratings, judge="j", dimension="ca", per_model=3, seed=4,
                            stratify_by_task=stratify)
        header, rows = design.to_rows()
        assert all(isinstance(v, (str, int, float, bool)) for v in header.values())
        assert AuditDesign.from_rows(header, rows) == design
        # as a database returns them: booleans as 0/1, whole floats, numpy scalars
        loose = {**header, "stratify_by_task": int(stratify), "seed": float(header["seed"])}
        looser = [{**r, "position": np.int64(r["position"])} for r in rows]
        assert AuditDesign.from_rows(loose, looser) == design
    assert design.signature_fields() == {"audit": design.digest[:12], "audit-judge": "j", "audit-dimension": "ca"}


def _damage(what: str) -> tuple[dict[str, object], list[dict[str, object]]]:
    header, rows = _stored()
    rows = [dict(r) for r in rows]
    if what == "item":
        rows[2]["item_id"] = "news-99"
    elif what == "inclusion":
        rows[1]["inclusion"] = 0.5
    elif what == "position":
        rows[3]["position"] = 7
    elif what == "missing":
        del rows[0]["model"]
    elif what == "type":
        rows[0]["stratum_size"] = "twenty"
    elif what == "twice":
        rows[1] = {**rows[0], "position": 1}
    elif what == "dropped":
        rows = rows[:-1]
        header = {**header, "n_drawn": len(rows)}
    elif what == "seed":
        header = {**header, "seed": header["seed"] + 1}
    elif what == "size":
        for r in rows:
            if r["model"] == rows[0]["model"]:
                r["stratum_size"], r["inclusion"] = 30, 3 / 30
        rows[0]["stratum_size"], rows[0]["inclusion"] = 20, 3 / 20
    return header, rows


@pytest.mark.parametrize(("what", "match"), [
    ("item", r"digest .* does not match its rows"),
    ("seed", r"digest .* does not match its rows"),
    ("inclusion", r"output row 1: inclusion 0.5 is not stratum_drawn / stratum_size"),
    ("position", r"output row 3: position 7 where 3 was expected"),
    ("missing", r"output row 0: the field 'model' is missing"),
    ("type", r"output row 0: stratum_size must be int, got 'twenty'"),
    ("twice", r"output row 1: output .* is drawn twice"),
    ("dropped", r"stratum .* should have 3 output rows, has 2"),
    ("size", r"has size 30 and 3 drawn here but 20 and 3 on an earlier row"),
])
def test_damaged_rows_are_detected_in_one_line(what: str, match: str) -> None:
    header, rows = _damage(what)
    with pytest.raises(ValueError, match=match) as caught:
        AuditDesign.from_rows(header, rows)
    assert "\n" not in str(caught.value)


def test_header_damage_is_detected() -> None:
    header, rows = _stored()
    with pytest.raises(ValueError, match="n_drawn is 6 but there are 5 output rows"):
        AuditDesign.from_rows(header, rows[:5])
    with pytest.raises(ValueError, match="format 2 is not supported"):
        AuditDesign.from_rows({**header, "format": 2}, rows)
    with pytest.raises(ValueError, match="header: the field 'judge' is missing"):
        AuditDesign.from_rows({k: v for k, v in header.items() if k != "judge"}, rows)
    with pytest.raises(TypeError, match="rows must be a sequence"):
        AuditDesign.from_rows(header, "rows")
