"""Every figure the README, data/README.md and docs/*.md quote from data, recomputed: check them or rewrite them.

Usage (from the repository root)::

    python scripts/docs_figures.py            # check: exit 1 and one line per stale, missing or unknown figure
    python scripts/docs_figures.py --write    # rewrite the marked figures in place

A figure is a piece of text between markers in its file, ``<!-- fig:NAME -->...<!-- /fig -->`` (inline in a
sentence, or around a table), so a reader sees the text and the markers stay invisible in rendered Markdown.
Each is computed here from the bundled demo data (``data/``) or from a data set in ``../shared``; a figure whose
data set is absent is skipped and said to be (``tests/test_docs_figures.py`` runs the check in the suite and skips
those parts cleanly). A figure is a sentence fragment written from the numbers, so when the data change, the
wording follows (a model that no longer ranks first is not said to). Figures in the generated blocks of
``docs/kumar2025.md`` (``BEGIN kumar2025-*``) come from the ``bench/kumar2025_*.py`` scripts, checked by their own
tests; the detector figures (``docs/detectors.md``, the README's detector table) from ``python -m
validation.distancing``; timings from ``bench/`` (``docs/benchmarks.md``).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from empathy.paths import PROJECT_ROOT, SHIPPED_DEMO_DIR, shared_dataset

MARKER = re.compile(r"<!-- fig:(?P<name>[a-z0-9-]+) -->(?P<body>.*?)<!-- /fig -->", re.S)
KUMAR = "kumar2025-empathic-communication"
DEMO = "demo"
#: The model the demo data writes with distanced language (data/README.md).
DISTANCED_MODEL = "larch"
LLM_JUDGES = ("gpt", "claude", "gemini")
EXPERTS = ("expert1", "expert2", "expert3")


class Sources:
    """The data behind the figures, each computed once: the demo's metrics and the Kumar et al. import.

    ``demo_dir`` is the demo folder the figures describe: the shipped ``data/`` (never ``$EMPATHY_DEMO_DIR``,
    which the test suite points at the first demo), or a folder ``scripts/make_demo.py`` is writing.
    """

    def __init__(self, demo_dir: Path = SHIPPED_DEMO_DIR) -> None:
        self.demo_dir = Path(demo_dir)

    @cached_property
    def demo(self) -> tuple[pd.DataFrame, pd.DataFrame, object]:
        """The demo outputs, the author and lexicon ratings, and the text features (one spaCy parse)."""
        from empathy.evaluate import text_features
        from empathy.io import load_dataset

        folder = self.demo_dir
        dataset = load_dataset(folder / "outputs.csv", [folder / "ratings_author.csv", folder / "ratings_lexicon.csv"])
        return dataset.outputs, dataset.ratings, text_features(dataset.outputs)

    def metrics(self, *, by_task: bool, raters: tuple[str, ...] = ("author", "lexicon"), **options: str
                ) -> pd.DataFrame:
        """The results table of ``python -m empathy metrics`` on the demo (per task or pooled)."""
        from empathy.evaluate import compute_metrics

        key = (by_task, raters, tuple(sorted(options.items())))
        if key not in self._metrics:
            outputs, ratings, features = self.demo
            chosen = ratings[ratings["rater"].isin(raters)]
            self._metrics[key] = compute_metrics(outputs, chosen, features=features, by_task=by_task,
                                                 **options).table
        return self._metrics[key]

    @cached_property
    def _metrics(self) -> dict[tuple, pd.DataFrame]:
        return {}

    @cached_property
    def kumar(self) -> pd.DataFrame:
        """The Kumar et al. (2025) ratings through the project's importer."""
        from empathy.datasets import import_kumar2025

        return import_kumar2025(shared_dataset(KUMAR)).ratings

    @cached_property
    def kumar_slopes(self) -> pd.DataFrame:
        """Per Kumar dimension: each LLM's slope on the experts' mean, the dilution benchmark, and the spread of
        the LLMs' ratings against the experts' mean (sd ratio, mean over the LLMs)."""
        from empathy.calibration import calibration_bias
        from empathy.datasets import CORPORA

        rows = []
        for corpus, spec in CORPORA.items():
            part = self.kumar[self.kumar["model"] == corpus]
            for dimension in spec.dimensions:
                bias = calibration_bias(part, dimension, bootstrap=0).set_index("judge")
                wide = part[part["dimension"] == dimension].pivot_table(index="item_id", columns="rater",
                                                                         values="value")
                experts = wide[list(EXPERTS)].mean(axis=1)
                spread = np.mean([wide[j].std(ddof=0) / experts.std(ddof=0) for j in LLM_JUDGES])
                rows.append({"corpus": spec.title, "dimension": dimension,
                             "benchmark": float(bias["human_slope"].iloc[0]),
                             **{judge: float(bias.loc[judge, "slope"]) for judge in LLM_JUDGES},
                             "bias": {judge: float(bias.loc[judge, "bias"]) for judge in LLM_JUDGES},
                             "sd_ratio": float(spread)})
        table = pd.DataFrame(rows)
        table["llm_mean"] = table[list(LLM_JUDGES)].mean(axis=1)
        return table

    @cached_property
    def kumar_lexicon(self) -> pd.DataFrame:
        """bench/kumar2025_lexicon_judge.py's table: the lexicon judge's and the crowd's rho with the experts."""
        spec = importlib.util.spec_from_file_location("kumar2025_lexicon_judge",
                                                      PROJECT_ROOT / "bench" / "kumar2025_lexicon_judge.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        return module.measure(shared_dataset(KUMAR))

    def available(self, source: str) -> bool:
        """Whether the figure's data set is here (the demo always is)."""
        return source == DEMO or shared_dataset(source) is not None


# ------------------------------------------------------------------------------------------------ the demo
def _ld_eq4(sources: Sources) -> str:
    """Where the distanced model ranks under Eq. 4 in each task, against the best other model."""
    table = sources.metrics(by_task=True)
    ld = table[table["metric"] == "LD"]
    ranks, values, rivals = [], [], []
    for task, part in ld.groupby("task", sort=True):
        ordered = part.sort_values("value", ascending=False)["model"].tolist()
        value = part.set_index("model")["value"]
        ranks.append(ordered.index(DISTANCED_MODEL) + 1)
        values.append(f"{task} {value[DISTANCED_MODEL]:.2f}")
        rivals.append(f"{value.drop(DISTANCED_MODEL).max():.2f}")
    models = ld["model"].nunique()
    if set(ranks) == {1}:
        where = f"has the highest LD of the {models} models in every task"
    else:
        where = "ranks " + ", ".join(f"{r} of {models}" for r in ranks) + " in the tasks"
    return f"{where} under Eq. 4 ({', '.join(values)}; the best other model {', '.join(rivals)})"


def _ld_reference(sources: Sources) -> str:
    table = sources.metrics(by_task=False, ld_standardization="reference")
    value = table[table["metric"] == "LD"].set_index("model")["value"]
    others = value.drop(DISTANCED_MODEL)
    return f"pooled, {value[DISTANCED_MODEL]:.2f} against {others.min():.2f}-{others.max():.2f}"


def _egm_both_zero(sources: Sources) -> str:
    """The lexicon judge's model whose pooled EGM moves most when items with a + b = 0 are left out."""
    zero = sources.metrics(by_task=False, raters=("lexicon",), include_ld=False)
    left_out = sources.metrics(by_task=False, raters=("lexicon",), include_ld=False, egm_both_zero="exclude")
    with_them = zero[zero["metric"] == "EGM"].set_index("model")["value"]
    without = left_out[left_out["metric"] == "EGM"].set_index("model")["value"]
    model = (without - with_them).abs().idxmax()
    return f"{model} {with_them[model]:.3f} with them, {without[model]:.3f} without"


def _reference_units(sources: Sources) -> str:
    from empathy.agreement import pairwise_agreement

    outputs, ratings, _ = sources.demo
    pairs = pairwise_agreement(ratings, dimensions=["e_ref"])
    return f"n = {int(pairs['n'].iloc[0])}, not {len(outputs)}"


def _sa_term_min(sources: Sources) -> str:
    from empathy.metrics import sentiment_attenuation_terms

    _, ratings, _ = sources.demo
    lowest = []
    for rater, part in ratings.groupby("rater"):
        wide = part.pivot_table(index=["item_id", "model"], columns="dimension", values="value")
        terms, _ = sentiment_attenuation_terms(wide["e_ref"].to_numpy(), wide["e_gen"].to_numpy())
        position = int(np.nanargmin(terms))
        lowest.append((float(terms[position]), rater, wide.index[position]))
    value, rater, (item, model) = min(lowest)
    return f"{value:.2f} on the demo, the {rater} judge's {item} / {model}"


def _point_interval(sources: Sources) -> str:
    """The first (model, judge) of the demo's CA calibration whose bias interval is a single point."""
    from empathy.calibration import calibration_bias

    _, ratings, _ = sources.demo
    bias = calibration_bias(ratings, "ca")
    row = bias[bias["bias_low"] == bias["bias_high"]].iloc[0]
    return (f"{row['model']}, CA bias [{row['bias_low']:g}, {row['bias_high']:g}] and slope "
            f"[{row['slope_low']:g}, {row['slope_high']:g}] on {row['n']} items")


def _count(path: str, what: Callable[[pd.DataFrame], int]) -> Callable[[Sources], str]:
    def compute(sources: Sources) -> str:
        return f"{what(pd.read_csv(sources.demo_dir / path, dtype=str, keep_default_na=False)):,}"

    return compute


def _missing(frame: pd.DataFrame) -> int:
    return int((frame["value"].str.strip() == "").sum())


def _author_table(sources: Sources) -> str:
    """data/README.md's table of the author's pooled SA, EGM and CA per model."""
    pooled = sources.metrics(by_task=False, raters=("author",), include_ld=False)
    per_task = sources.metrics(by_task=True, raters=("author",), include_ld=False)
    lines = ["", "| model | SA | EGM | CA (counseling) |", "|---|---|---|---|"]
    for model in sorted(pooled["model"].unique()):
        cells = []
        for metric in ("SA", "EGM", "CA"):
            row = pooled[(pooled["model"] == model) & (pooled["metric"] == metric)].iloc[0]
            notes = []
            negative = per_task[(per_task["model"] == model) & (per_task["metric"] == metric)
                                & (per_task["value"] < 0)]["task"].tolist()
            if negative:
                notes.append(f"negative in {', '.join(negative)}")
            if row["n_missing"]:
                notes.append(f"of {row['n']} rated")
            cells.append(f"{row['value']:.2f}" + (f" ({'; '.join(notes)})" if notes else ""))
        lines.append(f"| `{model}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _densities(sources: Sources) -> str:
    """The distanced model's mean densities of the generations against the other models'."""
    outputs, _, features = sources.demo
    densities = pd.DataFrame(features.densities_gen, columns=["nominalization", "impersonal", "agentless"])
    means = densities.groupby(outputs["model"].to_numpy()).mean()
    own = means.loc[DISTANCED_MODEL]
    others = means.drop(DISTANCED_MODEL)
    levels = ", ".join(f"{v:.2f}" for v in own)
    ratios = ", ".join(f"{(own[c] / others[c]).min():.1f}-{(own[c] / others[c]).max():.1f}" for c in means.columns)
    return f"of {levels} per sentence, {ratios} times those of the other models"


def _lexicon_vs_author(sources: Sources) -> str:
    from empathy.agreement import pairwise_agreement

    _, ratings, _ = sources.demo
    pairs = pairwise_agreement(ratings).set_index("dimension")
    rho = ", ".join(f"{pairs.loc[d, 'spearman']:.2f} for `{d}`" for d in ("u_gen", "u_ref", "e_gen", "e_ref"))
    labels = ratings[ratings["dimension"] == "ca"].pivot_table(index=["item_id", "model"], columns="rater",
                                                               values="value").dropna()
    return (f"Spearman {rho}; `ca` agrees on {pairs.loc['ca', 'percent_agreement']:.1%} of the {len(labels)} "
            f"responses (it finds avoidance in {labels['lexicon'].mean():.1%} where the author marked "
            f"{labels['author'].mean():.1%})").replace("%", " %")


# -------------------------------------------------------------------------------------- Kumar et al. (2025)
def _dilution_table(sources: Sources) -> str:
    table = sources.kumar_slopes
    lines = ["", "| corpus | dimension | one expert on the other two | gpt | claude | gemini | LLMs' mean | "
             "LLM sd / experts' mean sd |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in table.itertuples(index=False):
        mark = " (at or below)" if row.llm_mean <= row.benchmark else ""
        lines.append(f"| {row.corpus} | `{row.dimension}` | {row.benchmark:.2f} | {row.gpt:.2f} | {row.claude:.2f} | "
                     f"{row.gemini:.2f} | {row.llm_mean:.2f}{mark} | {row.sd_ratio:.2f} |")
    return "\n".join(lines) + "\n"


def _dilution_summary(sources: Sources) -> str:
    table = sources.kumar_slopes
    below = int((table["llm_mean"] <= table["benchmark"]).sum())
    return (f"{table['benchmark'].min():.2f}-{table['benchmark'].max():.2f} on all {len(table)} dimensions; the "
            f"LLMs' mean slope is at or below it on {below} of {len(table)}")


def _dimension_list(table: pd.DataFrame) -> str:
    """``dimension`` names grouped by corpus: ``EPITOME `a`, `b`; Lend an Ear `c```."""
    return "; ".join(f"{corpus} " + ", ".join(f"`{d}`" for d in part["dimension"])
                     for corpus, part in table.groupby("corpus", sort=False))


def _compression(sources: Sources) -> str:
    """The dimensions where the LLMs' mean slope is at or below the benchmark and their spread is narrower."""
    table = sources.kumar_slopes
    chosen = table[(table["llm_mean"] <= table["benchmark"]) & (table["sd_ratio"] < 1)]
    return f"{len(chosen)} of {len(table)} dimensions ({_dimension_list(chosen)})"


def _wider(sources: Sources) -> str:
    """The dimensions where the LLMs' ratings spread at least as widely as the experts' mean."""
    table = sources.kumar_slopes
    return _dimension_list(table[table["sd_ratio"] >= 1])


def _dilution_range(sources: Sources) -> str:
    table = sources.kumar_slopes
    return f"{table['benchmark'].min():.2f}-{table['benchmark'].max():.2f}"


def _ed_empathy(sources: Sources) -> str:
    table = sources.kumar_slopes.set_index("dimension")
    row = table.loc["empathy"]
    slopes = [row[j] for j in LLM_JUDGES]
    return (f"slopes {min(slopes):.2f}-{max(slopes):.2f} against the benchmark's {row['benchmark']:.2f}, and the "
            f"LLMs' ratings spread {row['sd_ratio']:.2f} times as widely as the experts' mean")


def _shift(dimension: str, *, rates: bool) -> Callable[[Sources], str]:
    """The three judges' bias range on one dimension (and their disagreement rates)."""
    def compute(sources: Sources) -> str:
        from empathy.slices import judge_human_events

        row = sources.kumar_slopes.set_index("dimension").loc[dimension]
        biases = sorted(row["bias"].values(), key=abs)
        text = f"{biases[0]:+.1f} to {biases[-1]:+.1f}"
        if rates:
            events, _ = judge_human_events(sources.kumar, dimension, threshold=1.0)
            shares = events.groupby("judge")["event"].mean()
            text += f", {100 * shares.min():.0f}-{100 * shares.max():.0f} % of units disagree"
        return text

    return compute


def _gpt_shift(sources: Sources) -> str:
    table = sources.kumar_slopes.set_index("dimension")
    return " and ".join(f"{table.loc[d, 'bias']['gpt']:+.1f}" for d in ("relevance", "fluency"))


def _lexicon_kumar(sources: Sources) -> str:
    table = sources.kumar_lexicon
    best = table["lexicon_best_abs"]
    return f"{best.min():.2f}-{best.max():.2f} per dimension, median {best.median():.2f}"


def _lexicon_kumar_strongest(sources: Sources) -> str:
    """The lexicon's two most negative ``ca`` correlations and its largest ``e_gen`` one."""
    table = sources.kumar_lexicon

    def named(row: pd.Series, column: str) -> str:
        return f"{row[column]:.2f} with `{row['dimension']}` ({row['corpus']})"

    ca = table.sort_values("ca").head(2)
    e_gen = table.sort_values("e_gen", ascending=False).iloc[0]
    return (f"`ca` {named(ca.iloc[0], 'ca')} and {named(ca.iloc[1], 'ca')}, `e_gen` {named(e_gen, 'e_gen')}")


def _crowd_kumar(sources: Sources) -> str:
    crowd = sources.kumar_lexicon["crowd"]
    return f"{crowd.min():.2f}-{crowd.max():.2f}, median {crowd.median():.2f}"


def _crowd_beats_lexicon(sources: Sources) -> str:
    table = sources.kumar_lexicon
    beaten = int((table["crowd"] > table["lexicon_best_abs"]).sum())
    return f"all {len(table)}" if beaten == len(table) else f"{beaten} of {len(table)}"


@dataclass(frozen=True)
class Figure:
    """One quoted figure: its marker name, the files quoting it, its data set and how to compute it."""

    name: str
    paths: tuple[str, ...]
    source: str
    compute: Callable[[Sources], str] = field(compare=False)


README, DATA_README, JUDGES, KUMAR_DOC = "README.md", "data/README.md", "docs/judges.md", "docs/kumar2025.md"
# the docs site's pages that quote the same figures as the README
METRICS_DOC, AGREEMENT_DOC = "docs/explanation/metrics.md", "docs/explanation/agreement.md"
DISAGREEMENT_DOC, FRAGILITY_DOC = "docs/explanation/disagreement.md", "docs/explanation/fragility-and-exhibits.md"
TUTORIAL_DEMO = "docs/tutorial/demo-mechanisms.md"
FIGURES: tuple[Figure, ...] = (
    Figure("ld-eq4-larch", (README, METRICS_DOC), DEMO, _ld_eq4),
    Figure("ld-reference", (README, DATA_README, METRICS_DOC), DEMO, _ld_reference),
    Figure("egm-both-zero", (README, METRICS_DOC), DEMO, _egm_both_zero),
    Figure("reference-units", (README, AGREEMENT_DOC), DEMO, _reference_units),
    Figure("sa-term-min", (README, FRAGILITY_DOC), DEMO, _sa_term_min),
    Figure("demo-point-interval", (README, DISAGREEMENT_DOC), DEMO, _point_interval),
    Figure("rows-outputs", (DATA_README, TUTORIAL_DEMO), DEMO, _count("outputs.csv", len)),
    Figure("rows-author", (DATA_README,), DEMO, _count("ratings_author.csv", len)),
    Figure("rows-lexicon", (DATA_README,), DEMO, _count("ratings_lexicon.csv", len)),
    Figure("rows-exhibits", (DATA_README,), DEMO, _count("exhibits.csv", len)),
    Figure("author-missing", (DATA_README,), DEMO, _count("ratings_author.csv", _missing)),
    Figure("author-table", (DATA_README,), DEMO, _author_table),
    Figure("larch-densities", (DATA_README,), DEMO, _densities),
    Figure("lexicon-vs-author", (JUDGES,), DEMO, _lexicon_vs_author),
    Figure("lexicon-kumar", (JUDGES,), KUMAR, _lexicon_kumar),
    Figure("crowd-kumar", (JUDGES,), KUMAR, _crowd_kumar),
    Figure("lexicon-kumar-strongest", (JUDGES,), KUMAR, _lexicon_kumar_strongest),
    Figure("crowd-beats-lexicon", (JUDGES,), KUMAR, _crowd_beats_lexicon),
    Figure("kumar-dilution-table", (KUMAR_DOC,), KUMAR, _dilution_table),
    Figure("kumar-dilution", (KUMAR_DOC,), KUMAR, _dilution_summary),
    Figure("kumar-dilution-range", (README, DISAGREEMENT_DOC), KUMAR, _dilution_range),
    Figure("kumar-ed-empathy", (KUMAR_DOC,), KUMAR, _ed_empathy),
    Figure("kumar-compression", (KUMAR_DOC,), KUMAR, _compression),
    Figure("kumar-wider", (KUMAR_DOC,), KUMAR, _wider),
    Figure("kumar-dismissing", (KUMAR_DOC,), KUMAR, _shift("dismissing_emotions", rates=True)),
    Figure("kumar-advice", (KUMAR_DOC,), KUMAR, _shift("advice_giving", rates=False)),
    Figure("kumar-ed-shift", (KUMAR_DOC,), KUMAR, _shift("empathy", rates=True)),
    Figure("kumar-gpt-shift", (KUMAR_DOC,), KUMAR, _gpt_shift),
)


@dataclass(frozen=True)
class Problem:
    """A figure that is not what the data give: stale (``found`` != ``expected``), missing or unknown."""

    path: str
    name: str
    kind: str
    found: str = ""
    expected: str = ""

    def __str__(self) -> str:
        if self.kind == "stale":
            return f"{self.path}: fig:{self.name} says {self.found!r}; the data give {self.expected!r}"
        if self.kind == "missing":
            return f"{self.path}: fig:{self.name} is not in the file (no <!-- fig:{self.name} --> marker)"
        return f"{self.path}: fig:{self.name} is not a known figure (scripts/docs_figures.py FIGURES)"


@dataclass
class Result:
    """What a check found: problems, figures checked, and data sets skipped because they are absent."""

    problems: list[Problem] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    skipped: set[str] = field(default_factory=set)


def run(root: Path = PROJECT_ROOT, *, write: bool = False, sources: Sources | None = None,
        figures: tuple[Figure, ...] = FIGURES) -> Result:
    """Check (or with ``write`` rewrite) every figure of ``figures`` in the files under ``root``."""
    sources = sources or Sources()
    result = Result()
    expected: dict[str, str] = {}
    for figure in figures:
        if sources.available(figure.source):
            expected[figure.name] = figure.compute(sources)
        else:
            result.skipped.add(figure.source)
    known = {figure.name for figure in (*FIGURES, *figures)}  # a subset checked still knows every figure
    for path in sorted({p for figure in figures for p in figure.paths}):
        file = root / path
        text = file.read_text(encoding="utf-8")
        found = {m.group("name") for m in MARKER.finditer(text)}
        result.problems += [Problem(path, name, "unknown") for name in sorted(found - known)]
        result.problems += [Problem(path, f.name, "missing") for f in figures
                            if path in f.paths and f.name not in found]

        def replace(match: re.Match[str], path: str = path) -> str:
            name, body = match.group("name"), match.group("body")
            if name not in expected:
                return match.group(0)
            result.checked.append(f"{path}:{name}")
            if body != expected[name]:
                result.problems.append(Problem(path, name, "stale", body, expected[name]))
            return f"<!-- fig:{name} -->{expected[name]}<!-- /fig -->"

        rewritten = MARKER.sub(replace, text)
        if write and rewritten != text:
            file.write_text(rewritten, encoding="utf-8")
    return result


def fill(text: str, sources: Sources, path: str = DATA_README) -> str:
    """``text`` with every figure marked in it computed from ``sources``: how ``scripts/make_demo.py`` writes the
    figures of the demo's README (``path``), so that the check finds them as the data give them.

    Raises
    ------
    ValueError
        When a marker names a figure that ``path`` does not quote (:data:`FIGURES`).
    """
    chosen = {figure.name: figure for figure in FIGURES if path in figure.paths}

    def replace(match: re.Match[str]) -> str:
        figure = chosen.get(match.group("name"))
        if figure is None:
            raise ValueError(f"{path}: fig:{match.group('name')} is not a figure of this file "
                             "(scripts/docs_figures.py FIGURES)")
        return f"<!-- fig:{figure.name} -->{figure.compute(sources)}<!-- /fig -->"

    return MARKER.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the stale figures in place")
    args = parser.parse_args(argv)
    result = run(write=args.write)
    for source in sorted(result.skipped):
        print(f"skipped: the figures from {source} (the data set is not in ../shared)", file=sys.stderr)
    stale = [p for p in result.problems if p.kind == "stale"]
    others = [p for p in result.problems if p.kind != "stale"]
    for problem in (others if args.write else result.problems):
        print(problem)
    if args.write:
        print(f"{len(result.checked)} figures checked, {len(stale)} rewritten")
        return 1 if others else 0
    print(f"{len(result.checked)} figures checked, {len(result.problems)} problems")
    return 1 if result.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
