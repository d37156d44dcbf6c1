"""Overview's bars and Agreement's heatmaps (empathy_app.views), drawn with Plotly's figure objects: what the
browser receives (the figure's JSON), names from the data escaped, missing numbers as null."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from empathy_app import charts


def _table(tasks: tuple[str, ...]) -> pd.DataFrame:
    rows = []
    for task in tasks:
        for scorer, shift in (("j1", 0.0), ("<b>j2</b>%{x}", 0.1)):
            for model, base in (("m1", 0.2), ("m2", 0.6)):
                rows.append({"task": task, "metric": "CA", "model": model, "scorer": scorer, "value": base + shift,
                             "n": 10, "n_missing": 0, "ci_low": base + shift - 0.1, "ci_high": base + shift + 0.05})
    table = pd.DataFrame(rows)
    table["n"] = table["n"].astype("Int64")
    table.loc[1, ["n", "ci_low", "ci_high"]] = [pd.NA, float("nan"), float("nan")]  # a value without its interval
    return table


def _figure(tasks: tuple[str, ...]) -> dict:
    return json.loads(charts.metric_bars(_table(tasks), "CA").to_json())


def test_bars_carry_the_values_their_intervals_and_escaped_names():
    figure = _figure(("counseling",))
    assert figure["layout"]["title"]["text"] == "CA by model and judge"
    first, second = figure["data"]
    assert first["name"] == "j1" and first["x"] == ["m1", "m2"] and first["y"] == pytest.approx([0.2, 0.6])
    assert first["error_y"]["array"] == [pytest.approx(0.05), None]  # above the bar; none without an interval
    assert first["error_y"]["arrayminus"] == [pytest.approx(0.1), None]
    assert first["customdata"] == [[10, 0], [None, 0]]  # n missing: null
    # a judge's name from the data: escaped as HTML in the legend and the hover, its % not a template field
    assert second["name"] == "&lt;b&gt;j2&lt;/b&gt;%{x}"
    assert "judge=&lt;b&gt;j2&lt;/b&gt;&#37;{x}<br>" in second["hovertemplate"]
    assert "<b>" not in json.dumps(figure["data"])
    assert not figure["layout"].get("annotations")  # one task: one panel, no panel title


def test_several_tasks_get_a_panel_each_and_a_judge_keeps_its_colour_and_one_legend_entry():
    figure = _figure(("counseling", "news", "translation"))
    assert [a["text"] for a in figure["layout"]["annotations"]] == ["task=counseling", "task=news", "task=translation"]
    axes = sorted(key for key in figure["layout"] if key.startswith("xaxis"))
    assert axes == ["xaxis", "xaxis2", "xaxis3"]
    domains = [figure["layout"][axis]["domain"] for axis in axes]
    assert all(a[1] < b[0] for a, b in zip(domains, domains[1:], strict=False))  # side by side, not overlapping
    by_judge: dict[str, list[dict]] = {}
    for trace in figure["data"]:
        by_judge.setdefault(trace["name"], []).append(trace)
    assert [len(traces) for traces in by_judge.values()] == [3, 3]
    for traces in by_judge.values():
        assert len({t["marker"]["color"] for t in traces}) == 1
        assert [t.get("showlegend", True) for t in traces] == [True, False, False]
    assert figure["layout"]["yaxis2"]["matches"] == "y"  # one scale for every panel


def test_the_heatmap_is_symmetric_with_escaped_judges_and_a_missing_value_as_null():
    agreement = pd.DataFrame({"metric": ["SA", "SA", "SA"], "scorer_a": ["a", "a", "<i>c</i>"],
                              "scorer_b": ["b", "<i>c</i>", "b"], "spearman": [0.5, None, -0.25]})
    figure = json.loads(charts.spearman_heatmap(agreement, "SA").to_json())
    heat = figure["data"][0]
    assert heat["x"] == heat["y"] == ["&lt;i&gt;c&lt;/i&gt;", "a", "b"]
    assert heat["z"] == [[1.0, None, -0.25], [None, 1.0, 0.5], [-0.25, 0.5, 1.0]]
    assert (heat["zmin"], heat["zmax"]) == (-1, 1)
    assert figure["layout"]["title"]["text"] == "SA: Spearman between judges"
    assert charts.spearman_heatmap(agreement[agreement["scorer_a"] == "x"], "SA") is None
