"""The live metric beside the Relabel key queue: the browser's arithmetic equals the server's recomputation.

The page's script computes CA per model (Eq. 3) at each key, before the server has the decision: the server's
sums and counts plus the label now and after each level that :func:`empathy_app.keyqueue.live_state` sends
with the window (:func:`empathy.overrides.decision_effects` under the session's label rule). Here the script's
own functions (``empathy_app/static/keyqueue/live_table.js``) run under Node on windows the server built, a key
at a time, and after each key the table must equal the server's recomputation with the same decisions stored
(:class:`empathy.review.Recompute` on the ledger's applied overrides, as the page computes it): values to
1e-12, n and ranks exactly, under each label rule, with other annotators' decisions, adjudications, missing
labels, outputs of another task and decisions the judge shown never receives. Skipped without ``node``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from relabel_keys import live_table

from empathy.evaluate import TextFeatures, default_by_task
from empathy.io import load_dataset
from empathy.labels.ledger import ledger_from_decisions
from empathy.labels.rules import ALL_JUDGES, make_changes, override_targets
from empathy.labels.sqlite import OverrideStore
from empathy.paths import DEMO_DIR
from empathy.review import Recompute, relabel_queue
from empathy.vocabulary import DIRECTIONS, HIGHER_IS_BETTER, LOWER_IS_BETTER, RANK_TIES
from empathy_app import keyqueue, loading

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "tests" / "keyqueue_live.mjs"
NODE = shutil.which("node")
LEVELS = [0.0, 1.0]
ANN = "ann"
FW, BOLD = "\uff21", "\U0001d400"  # tie on CA: Python orders U+FF21 first, UTF-16 code units U+1D400 first

pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js (`node` on PATH) to run the key queue's "
                                                     "script; its arithmetic is not checked here without it")


def node(cases: list[dict], module: Path | None = None) -> list:
    """Each case's answer from tests/keyqueue_live.mjs (the script's functions, or those of ``module``)."""
    command = [NODE, str(DRIVER), *([str(module)] if module else [])]
    done = subprocess.run(command, input=json.dumps({"cases": cases}), capture_output=True, text=True,
                          timeout=120, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def rows(table: dict) -> list[tuple[int, str, float | None, int]]:
    """(rank, model, value, n) of a table the script computed."""
    return [(r["rank"], r["model"], r["value"], r["n"]) for r in table["rows"]]


# ------------------------------------------------------------------------------------------ the server

@dataclass
class Page:
    """What the Relabel page holds for one live table: the data, its store, the engine and the choices."""

    data: loading.Loaded
    engine: Recompute
    rule: str
    judge: str
    apply_to: str
    task: str | None = None

    @property
    def name(self) -> str:
        return self.data.dataset_id

    def ledger(self):
        return ledger_from_decisions(self.name, self.data.store.decisions(self.name), self.data.dataset.outputs,
                                     self.rule)

    def table(self) -> pd.DataFrame:
        """The server's CA per model for the judge (and task) shown, with every stored decision applied."""
        report = self.engine.report(self.ledger().applied)
        table = report.table
        table = table[(table["metric"] == "CA") & (table["scorer"] == self.judge)]
        if self.task is not None:
            table = table[table["task"] == self.task]
        return table.reset_index(drop=True)

    def decide(self, pair: tuple[str, str], value: float, *, annotator: str = ANN, adjudicate: bool = False,
               apply_to: str | None = None) -> None:
        """Store a decision as the page does (:func:`empathy_app.keyqueue.apply_events`)."""
        ratings, outputs = self.data.dataset.ratings, self.data.dataset.outputs
        targets = override_targets(ratings, *pair, "ca", apply_to or self.apply_to)
        changes = make_changes(outputs, ratings, *pair, targets, "ca", value)
        if adjudicate:
            self.data.store.adjudicate(self.name, changes, annotator=annotator)
        else:
            self.data.store.set_overrides(self.name, changes, annotator=annotator)

    def targets(self, pair: tuple[str, str]) -> list[str]:
        return override_targets(self.data.dataset.ratings, *pair, "ca", self.apply_to)


def open_page(folder: Path, ratings: list[Path], store: Path, *, rule: str, judge: str, apply_to: str = ALL_JUDGES,
              task: str | None = None) -> Page:
    dataset = load_dataset(folder / "outputs.csv", ratings)
    data = loading.Loaded(dataset=dataset, name=folder.name, data_dir=folder, dataset_id="outputs.csv",
                          content_key=loading.content_key(dataset), store=OverrideStore(store))
    n = len(dataset.outputs)
    # CA reads no text feature (sentence counts and densities feed EGM and LD only)
    features = TextFeatures(np.ones(n), np.ones(n), np.zeros((n, 3)), np.zeros((n, 3)), "test")
    engine = Recompute(dataset.outputs, dataset.ratings, features, by_task=default_by_task(dataset.outputs))
    return Page(data, engine, rule, judge, apply_to, task)


def server_rows(table: pd.DataFrame, better: str) -> list[tuple[int | None, str, float | None, int]]:
    """(rank, model, value, n) of the server's table under the one rank convention (rank 1 = the best value in the
    direction ``better``, ties share the smaller rank, no rank without a value: ``RANK_TIES`` as
    ``empathy.evaluate.rank_by_direction``); rows best first, no value last, ties by model name."""
    ordered = table.sort_values(["value", "model"], ascending=[better == LOWER_IS_BETTER, True], na_position="last",
                                kind="stable")
    sign = 1.0 if better == LOWER_IS_BETTER else -1.0
    ranks = (ordered["value"].astype(float) * sign).rank(method=RANK_TIES)
    return [(None if pd.isna(rank) else int(rank), str(model), None if pd.isna(value) else float(value), int(n))
            for rank, model, value, n in zip(ranks, ordered["model"], ordered["value"], ordered["n"], strict=True)]


def assert_same(browser: list[tuple], server: list[tuple], where: str) -> None:
    assert [(r[0], r[1], r[3]) for r in browser] == [(r[0], r[1], r[3]) for r in server], where
    for got, want in zip(browser, server, strict=True):
        assert (got[2] is None) == (want[2] is None), (where, got, want)
        if want[2] is not None:
            assert abs(got[2] - want[2]) <= 1e-12, (where, got, want)


def press_and_compare(page: Page, window: list[tuple[str, str]], keys: list[tuple[tuple[str, str], float]]
                      ) -> dict[str, list[list[tuple]]]:
    """Send ``window`` as the page does, press ``keys`` in the script (each on an output of the window), then
    store the same decisions one by one; after each key the script's table must be the server's, with the
    server's direction, each explicit direction and none (the script's default). Returns the script's tables
    (before any key, then after each) by direction."""
    ledger = page.ledger()
    items = [{"item": item, "model": model} for item, model in window]
    live = keyqueue.live_state(page.data, page.table(), items, metric="CA", judge=page.judge, dimension="ca",
                               apply_to=page.apply_to, annotator=ANN, decisions=ledger.status.fresh,
                               rule=page.rule, levels=LEVELS, task=page.task)
    position = {pair: k for k, pair in enumerate(window)}
    pressed = [[position[pair], value] for pair, value in keys]
    assert all(page.targets(pair) for pair, _ in keys)  # the script takes keys on decidable outputs only
    directions = {"(absent)": None, HIGHER_IS_BETTER: HIGHER_IS_BETTER, LOWER_IS_BETTER: LOWER_IS_BETTER}
    if "better" in live:
        directions["(server)"] = live["better"]
    states = {}
    for label, better in directions.items():
        states[label] = {k: v for k, v in live.items() if k != "better"} | ({"better": better} if better else {})
    answers = dict(zip(states, node([{"live": s, "items": items, "keys": pressed} for s in states.values()]),
                       strict=True))
    server = [page.table()]
    for pair, value in keys:
        page.decide(pair, value)
        server.append(page.table())
    tables = {}
    for label, answer in answers.items():
        assert "error" not in answer, answer
        better = states[label].get("better", HIGHER_IS_BETTER)
        for k, (table, recomputed) in enumerate(zip(answer["tables"], server, strict=True)):
            where = f"{label} after {k} key(s) ({page.rule}, {page.judge}, {page.apply_to})"
            assert_same(rows(table), server_rows(recomputed, better), where)
            # a key counts as unsaved in the table when the window told the script its effect
            assert table["pending"] == sum("fx" in items[i] for i, _ in pressed[:k]), where
            # the AppTest helper that stands in for the script (tests/relabel_keys.py) computes the same
            assert live_table(states[label], answer["events"][:k]) == [
                (r[0], r[1], None if r[2] is None else pytest.approx(r[2], abs=1e-12), r[3])
                for r in rows(table)], where
        tables[label] = [rows(t) for t in answer["tables"]]
    return tables


# ------------------------------------------------------------------------------------------ hand-worked

def small(folder: Path) -> tuple[Path, list[Path]]:
    """4 models on tasks t1 (i1-i4, and i5 for B only) and t2 (j1, j2); CA by two LLM judges.

    gpt on t1: Ａ 1 0 1 0 (0.5), 𝐀 0 1 0 1 (0.5: a tie with Ａ), B 1 1 1 and a missing label on i4 (1.0, n 3;
    i5 rated by claude only), Z four missing labels (no value, n 0). claude says the opposite of gpt (1 where
    gpt's label is missing).
    """
    folder.mkdir(parents=True, exist_ok=True)
    gpt = {("t1", FW): [1, 0, 1, 0], ("t1", BOLD): [0, 1, 0, 1], ("t1", "B"): [1, 1, 1, None],
           ("t1", "Z"): [None] * 4, ("t2", FW): [1, 1], ("t2", BOLD): [0, 1], ("t2", "B"): [0, 0], ("t2", "Z"): [1, 0]}
    items = {"t1": ["i1", "i2", "i3", "i4"], "t2": ["j1", "j2"]}
    outputs, ratings = [], []
    for (task, model), labels in gpt.items():
        for item, label in zip(items[task], labels, strict=True):
            outputs.append({"item_id": item, "model": model, "task": task, "reference": f"Reference {item}.",
                            "generation": f"Generation {item} of {model}."})
            ratings += [{"item_id": item, "model": model, "rater": "gpt", "dimension": "ca", "value": label,
                         "rater_kind": "llm"},
                        {"item_id": item, "model": model, "rater": "claude", "dimension": "ca",
                         "value": 1 if label is None else 1 - label, "rater_kind": "llm"}]
    outputs.append({"item_id": "i5", "model": "B", "task": "t1", "reference": "Reference i5.",
                    "generation": "Generation i5 of B."})
    ratings.append({"item_id": "i5", "model": "B", "rater": "claude", "dimension": "ca", "value": 1,
                    "rater_kind": "llm"})
    pd.DataFrame(outputs).to_csv(folder / "outputs.csv", index=False)
    pd.DataFrame(ratings).to_csv(folder / "ratings.csv", index=False)
    return folder, [folder / "ratings.csv"]


SMALL_WINDOW = [("i1", FW), ("i4", "B"), ("j1", FW), ("i2", BOLD), ("i3", "Z"), ("i5", "B")]


def test_hand_worked_keys_on_every_kind_of_output(tmp_path):
    folder, ratings = small(tmp_path / "small")
    page = open_page(folder, ratings, tmp_path / "store.sqlite", rule="latest", judge="gpt", task="t1")
    keys = [(("i1", FW), 0.0),    # gpt 1 -> 0: Ａ 2/4 -> 1/4
            (("i4", "B"), 1.0),   # a missing label gets one: B 3/3 -> 4/4, n 4
            (("j1", FW), 0.0),    # an output of t2: the t1 table does not move (and the key is not pending)
            (("i2", BOLD), 1.0),  # the judge's own label: nothing moves
            (("i3", "Z"), 1.0),   # Z's first label: 1/1, tied with B at 1.0 (both rank 1, B listed first by name)
            (("i5", "B"), 0.0)]   # gpt never rated i5: "(all judges)" decides for claude only
    tables = press_and_compare(page, SMALL_WINDOW, keys)
    higher, lower = tables[HIGHER_IS_BETTER], tables[LOWER_IS_BETTER]
    # ties share the smaller rank and a model without a value has none (the server's rank convention)
    assert higher[0] == [(1, "B", 1.0, 3), (2, FW, 0.5, 4), (2, BOLD, 0.5, 4), (None, "Z", None, 0)]
    assert lower[0] == [(1, FW, 0.5, 4), (1, BOLD, 0.5, 4), (3, "B", 1.0, 3), (None, "Z", None, 0)]
    assert higher[1] == [(1, "B", 1.0, 3), (2, BOLD, 0.5, 4), (3, FW, 0.25, 4), (None, "Z", None, 0)]
    assert higher[2] == higher[3] == higher[4] == [(1, "B", 1.0, 4), (2, BOLD, 0.5, 4), (3, FW, 0.25, 4),
                                                   (None, "Z", None, 0)]
    assert higher[5] == higher[6] == [(1, "B", 1.0, 4), (1, "Z", 1.0, 1), (3, BOLD, 0.5, 4), (4, FW, 0.25, 4)]
    assert lower[6] == [(1, FW, 0.25, 4), (2, BOLD, 0.5, 4), (3, "B", 1.0, 4), (3, "Z", 1.0, 1)]
    assert tables["(absent)"] == higher  # the order before the server said


def test_a_decision_for_the_judge_by_name_adds_the_label_it_never_gave(tmp_path):
    folder, ratings = small(tmp_path / "small")
    page = open_page(folder, ratings, tmp_path / "store.sqlite", rule="latest", judge="gpt", apply_to="gpt",
                     task="t1")
    # i5 of B has no gpt row: the decision adds one (the server recomputes the whole scope): B 3/3 -> 3/4
    tables = press_and_compare(page, SMALL_WINDOW, [(("i5", "B"), 0.0), (("j1", FW), 1.0)])
    higher = tables[HIGHER_IS_BETTER]
    assert higher[1] == higher[2] == [(1, "B", 0.75, 4), (2, FW, 0.5, 4), (2, BOLD, 0.5, 4), (None, "Z", None, 0)]


@pytest.mark.parametrize(("rule", "fw", "bold"), [("latest", 0.75, 0.5), ("majority", 0.5, 0.5),
                                                   ("adjudicated", 0.25, 0.5)])
def test_hand_worked_label_rules_with_other_annotators_and_an_adjudication(tmp_path, rule, fw, bold):
    folder, ratings = small(tmp_path / "small")
    page = open_page(folder, ratings, tmp_path / "store.sqlite", rule=rule, judge="gpt", task="t1")
    page.decide(("i2", FW), 1.0, annotator="bob")  # then cat says 0: a tie (gpt's own 0 under majority)
    page.decide(("i2", FW), 0.0, annotator="cat")
    page.decide(("i3", FW), 0.0, annotator="judy", adjudicate=True)  # gpt said 1
    page.decide(("i1", BOLD), 1.0, annotator="bob")  # gpt said 0
    window = [("i2", FW), ("i3", FW), ("i1", BOLD), ("i4", FW)]
    tables = press_and_compare(page, window, [(("i2", FW), 1.0), (("i3", FW), 1.0), (("i1", BOLD), 0.0)])
    start = {model: value for _, model, value, _ in tables[HIGHER_IS_BETTER][0]}
    assert (start[FW], start[BOLD]) == (0.25, 0.75)  # Ａ: 1 0 0 0 under every rule; 𝐀: bob's 1 on i1
    # latest: ann's keys are the labels; majority: 2:1 for 1 on i2, the adjudication keeps i3 at 0, 1:1 on i1 of
    # 𝐀 is a tie (gpt's 0); adjudicated: any disagreement leaves gpt's label, the adjudication stays
    end = {model: value for _, model, value, _ in tables[HIGHER_IS_BETTER][-1]}
    assert (end[FW], end[BOLD]) == (fw, bold)


# ------------------------------------------------------------------------------------------ the demo data

def demo_keys(page: Page, count: int) -> tuple[list[tuple[str, str]], list]:
    """The page's window (its queue: judge disagreement first) and keys on its first ``count`` decidable outputs
    and on every output whose label by the judge shown is missing: two keys in three the opposite of the judge's
    label (1 where it is missing), the third the same."""
    ratings = page.data.dataset.ratings
    queue = relabel_queue(ratings, "ca", page.data.dataset.outputs)
    window = list(zip(queue["item_id"].astype(str), queue["model"].astype(str), strict=True))[:keyqueue.WINDOW]
    mine = ratings[(ratings["rater"] == page.judge) & (ratings["dimension"] == "ca")]
    own = dict(zip(zip(mine["item_id"].astype(str), mine["model"].astype(str), strict=True), mine["value"],
                   strict=True))
    decidable = [pair for pair in window if page.targets(pair)]
    chosen = decidable[:count] + [pair for pair in decidable[count:] if pair in own and pd.isna(own[pair])]
    labels = [0.0 if pd.isna(own.get(pair, np.nan)) else float(own[pair]) for pair in chosen]
    return window, [(pair, label if k % 3 == 2 else 1.0 - label) for k, (pair, label) in
                    enumerate(zip(chosen, labels, strict=True))]


@pytest.mark.parametrize("rule", ["latest", "majority", "adjudicated"])
@pytest.mark.parametrize(("judge", "apply_to"), [("lexicon", ALL_JUDGES), ("author", "author")])
def test_demo_data_windows_under_each_label_rule(tmp_path, rule, judge, apply_to):
    files = DEMO_DIR
    page = open_page(files, [files / "ratings_author.csv", files / "ratings_lexicon.csv"],
                     tmp_path / "store.sqlite", rule=rule, judge=judge, apply_to=apply_to)
    window, keys = demo_keys(page, 16)
    # the window's first 41 outputs are the demo's CA outputs; the author left one unlabelled (a key labels it)
    assert len(window) == keyqueue.WINDOW and len(keys) == (16 if judge == "lexicon" else 17)
    assert page.table()["n"].sum() == (41 if judge == "lexicon" else 40)
    # before the session: bob and cat decided some of them (agreeing or not), judy adjudicated a few
    rng = np.random.default_rng(7)
    pairs = [pair for pair, _ in keys[:16]]  # not the unlabelled output: the annotator alone decides it
    for k in rng.choice(len(pairs), 8, replace=False):
        page.decide(pairs[k], float(rng.integers(0, 2)), annotator="bob")
    for k in rng.choice(len(pairs), 6, replace=False):
        page.decide(pairs[k], float(rng.integers(0, 2)), annotator="cat")
    for k in rng.choice(len(pairs), 3, replace=False):
        page.decide(pairs[k], float(rng.integers(0, 2)), annotator="judy", adjudicate=True)
    tables = press_and_compare(page, window, keys)
    assert len({str(table) for table in tables[HIGHER_IS_BETTER]}) > 5  # the keys moved the table (and the ranks)
    labelled = [sum(n for *_, n in table) for table in tables[HIGHER_IS_BETTER]]
    assert (labelled[0], labelled[-1]) == ((41, 41) if judge == "lexicon" else (40, 41))


# ------------------------------------------------------------------------------------------ the script alone

def _live(models: dict[str, tuple[float, int]], **fields) -> dict:
    return {"metric": "CA", "judge": "gpt", "scope": "CA|gpt||latest",
            "models": [{"model": m, "sum": s, "n": n} for m, (s, n) in models.items()], **fields}


def _decide(model: str, before: float | None, after: float | None, scope: str = "CA|gpt||latest") -> dict:
    return {"action": "decide", "fx": {"scope": scope, "m": model, "before": before, "after": after}}


def test_the_script_counts_only_the_decisions_on_the_table_shown():
    live = _live({"A": (2.0, 4), "B": (1.0, 2), "C": (0.0, 1)})
    events = [_decide("A", 1.0, 0.0),                    # A 2/4 -> 1/4
              _decide("B", None, 1.0),                   # B gains a label: 2/3
              _decide("C", 0.0, None),                   # C loses its only label: no value, last
              _decide("A", 0.0, 1.0, scope="CA|lex||latest"),  # another judge's table
              _decide("Q", 0.0, 1.0),                    # a model not in the table
              {"action": "decide"}, {"action": "skip", "fx": _decide("A", 1.0, 0.0)["fx"]}, {"action": "undo"}]
    [table, empty] = node([{"live": live, "events": events}, {"live": live, "events": []}])
    assert table["pending"] == 3
    assert rows(table) == [(1, "B", 2 / 3, 3), (2, "A", 0.25, 4), (None, "C", None, 0)]
    assert empty["pending"] == 0 and rows(empty) == [(1, "A", 0.5, 4), (1, "B", 0.5, 2), (3, "C", 0.0, 1)]
    assert live_table(live, events) == rows(table)


def test_the_script_orders_ties_by_code_point_as_the_server_does():
    # JavaScript's < compares UTF-16 code units: U+1D400 (a surrogate pair, 0xD835 ...) before U+FF21
    names = [BOLD, FW, "Z", "B"]
    live = _live({name: (1.0, 2) for name in names})
    answers = node([{"live": live, "events": []}, {"live": live | {"better": LOWER_IS_BETTER}, "events": []}])
    for answer in answers:
        assert [r[1] for r in rows(answer)] == sorted(names) == ["B", "Z", FW, BOLD]


@pytest.mark.parametrize("better", ["best", None, "Lower", 1])
def test_the_script_refuses_a_direction_it_does_not_know(better):
    [answer] = node([{"live": _live({"A": (1.0, 1)}, better=better), "events": []}])
    assert answer == {"error": f'TypeError: live metric: "better" must be "lower" or "higher", got '
                               f"{json.dumps(better)}"}


def test_the_script_knows_every_direction_of_the_registry():
    answers = node([{"live": _live({"A": (1.0, 2), "B": (2.0, 2)}, better=better), "events": []}
                    for better in DIRECTIONS])
    first = {better: rows(answer)[0][1] for better, answer in zip(DIRECTIONS, answers, strict=True)}
    assert first == {LOWER_IS_BETTER: "A", HIGHER_IS_BETTER: "B"}


def test_a_key_has_an_effect_only_for_a_level_the_server_resolved():
    live = _live({"A": (1.0, 2)})
    items = [{"item": "i1", "model": "A", "fx": {"m": "A", "b": 1.0, "a": {"0": 0.0, "1": 1.0}}},
             {"item": "i2", "model": "A"}]  # decided for another judge: no effect sent
    [answer] = node([{"live": live, "items": items, "keys": [[1, 0.0], [0, 2.0], [0, 0.0]]}])
    assert [e.get("fx") for e in answer["events"]] == [None, None, {"scope": live["scope"], "m": "A", "before": 1.0,
                                                                    "after": 0.0}]
    assert [t["pending"] for t in answer["tables"]] == [0, 0, 0, 1]
    assert rows(answer["tables"][-1]) == [(1, "A", 0.0, 2)]
    [without] = node([{"live": None, "items": items, "keys": [[0, 0.0]]}])
    assert without == {"tables": [None, None], "events": [{"seq": 1, "action": "decide", "value": 0}]}


def test_the_page_script_carries_the_same_functions(tmp_path):
    # keyqueue.py inlines live_table.js into the component's script: the module Streamlit loads computes the same
    bundle = tmp_path / "queue.mjs"
    bundle.write_text(keyqueue._JS, encoding="utf-8")
    live = _live({"A": (2.0, 4), "B": (1.0, 2)}, better=LOWER_IS_BETTER)
    case = {"live": live, "events": [_decide("A", 1.0, 0.0), _decide("B", None, 1.0)]}
    assert node([case], module=bundle) == node([case])
    checked = subprocess.run([NODE, "--input-type=module", "-e", "const m = await import(process.argv[1]);"
                              "process.stdout.write(typeof m.default);", bundle.as_uri()],
                             capture_output=True, text=True, timeout=60, check=False)
    assert (checked.returncode, checked.stdout) == (0, "function"), checked.stderr
