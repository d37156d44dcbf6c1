"""The generated tables of docs/judge-report.md: the Alt-Test on the Kumar et al. (2025) import, the offline
lexicon judge's probes on the demo data, and the probes' interval coverage for a noisy judge
(:mod:`validation.probe_coverage`, about 30 s).

``python scripts/judge_report_doc.py`` prints the tables; ``--write`` puts each between its markers
(``<!-- alt-test-table -->`` ... ``<!-- /alt-test-table -->``, ``<!-- probes-table -->`` ...
``<!-- /probes-table -->``, ``<!-- probe-coverage-table -->`` ... ``<!-- /probe-coverage-table -->``) of
docs/judge-report.md. ``tests/test_judge_report_doc.py`` checks that the page holds what this script produces
(the Alt-Test table is skipped when the shared data set is absent).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from empathy.judge_report.alt_test import alt_test, alt_test_signature  # noqa: E402
from empathy.paths import shared_dataset  # noqa: E402

DOC = ROOT / "docs" / "judge-report.md"
START, END = "<!-- alt-test-table -->", "<!-- /alt-test-table -->"
PROBES_START, PROBES_END = "<!-- probes-table -->", "<!-- /probes-table -->"
COVERAGE_START, COVERAGE_END = "<!-- probe-coverage-table -->", "<!-- /probe-coverage-table -->"
NAME = "kumar2025-empathic-communication"
JUDGES = ("gpt", "claude", "gemini", "crowd")
ANNOTATORS = ("expert1", "expert2", "expert3")
CORPORA = ("epitome", "lend_an_ear", "empatheticdialogues", "perceived_empathy")


def table(directory: Path) -> str:
    """The Markdown table: per dimension, each judge's outcome, winning rate and advantage probability."""
    from empathy.datasets.kumar2025 import import_kumar2025

    ratings = import_kumar2025(directory).ratings
    corpus_of = ratings.drop_duplicates("dimension").set_index("dimension")["model"].to_dict()
    dimensions = sorted(corpus_of, key=lambda d: (CORPORA.index(corpus_of[d]), d))
    lines = ["| corpus | dimension | n | scoring | " + " | ".join(JUDGES) + " |",
             "| --- | --- | ---: | --- | " + " | ".join("---" for _ in JUDGES) + " |"]
    passes = dict.fromkeys(JUDGES, 0)
    for dimension in dimensions:
        cells = []
        result = None
        for judge in JUDGES:
            result = alt_test(ratings, dimension, judge, annotators=list(ANNOTATORS))
            passes[judge] += result.passed
            mark = "**pass**" if result.passed else "fail"
            cells.append(f"{mark} {result.winning_rate:.2f} / {result.advantage_probability:.2f}")
        assert result is not None
        lines.append(f"| {corpus_of[dimension]} | `{dimension}` | {result.n_instances} | {result.scoring} | "
                     + " | ".join(cells) + " |")
    lines.append(f"| **passes** | of {len(dimensions)} | | | "
                 + " | ".join(f"**{passes[j]}**" for j in JUDGES) + " |")
    rated = ratings[ratings["rater"].isin([*ANNOTATORS, *JUDGES])]
    signature = alt_test_signature(rated, dimension="*", scoring="neg-rmse", epsilon=0.2, q=0.05, min_humans=2,
                                   min_instances=30, annotators=ANNOTATORS, unit="output")
    lines += ["", f"Signature: `{signature}`"]
    return "\n".join(lines)


def probes_table() -> str:
    """The Markdown table of the lexicon judge's probes on the demo outputs (offline, deterministic)."""
    from empathy import __version__
    from empathy.io import load_outputs
    from empathy.judge_report.probes import DEFAULT_SCORE_TOLERANCE, probes_signature, run_probes
    from empathy.judges.config import resolve_judge

    outputs = load_outputs(ROOT / "data" / "outputs.csv")[0]
    results = run_probes(outputs, resolve_judge("lexicon", None))
    lines = ["| probe | kind | applicable | violations | rate [95 % interval] | moved / movable | outcome |",
             "| --- | --- | ---: | ---: | --- | --- | --- |"]
    for result in results:
        rate = ("" if result.violation_rate is None else
                f"{result.violation_rate:.3f} [{result.rate_low:.3f}, {result.rate_high:.3f}]")
        moved = f"{result.n_moved} / {result.n_movable}" if result.probe.kind == "directional" else ""
        outcome = {None: "not applicable", True: "pass", False: "**fail**"}[result.passed]
        lines.append(f"| `{result.probe.name}` | {result.probe.kind} | {result.n_applicable} | "
                     f"{result.n_violations} | {rate} | {moved} | {outcome} |")
    judge_signature = f"empathy:{__version__}|judge[lexicon]:kind=lexicon|data:data/outputs.csv"
    lines += ["", f"Signature: `{probes_signature(judge_signature, DEFAULT_SCORE_TOLERANCE)}`"]
    return "\n".join(lines)


def replace_block(text: str, block: str, start: str = START, end: str = END) -> str:
    """``text`` with the part between the markers replaced by ``block``."""
    head, found, rest = text.partition(start)
    if not found or end not in rest:
        raise ValueError(f"{DOC}: the markers {start} ... {end} are missing")
    return f"{head}{start}\n{block}\n{end}{rest.partition(end)[2]}"


def shown_block(text: str, start: str = START, end: str = END) -> str:
    """The table the page holds now (between the markers)."""
    return text.partition(start)[2].partition(end)[0].strip("\n")


def main() -> int:
    """Print the table, or write it into docs/judge-report.md with ``--write``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the table into docs/judge-report.md")
    args = parser.parse_args()
    directory = shared_dataset(NAME)
    if directory is None:
        print(f"shared/datasets/{NAME} is absent", file=sys.stderr)
        return 2
    from validation.probe_coverage import markdown

    block, probes, coverage = table(directory), probes_table(), markdown()
    if args.write:
        page = replace_block(DOC.read_text(encoding="utf-8"), block)
        page = replace_block(page, probes, PROBES_START, PROBES_END)
        DOC.write_text(replace_block(page, coverage, COVERAGE_START, COVERAGE_END), encoding="utf-8")
    else:
        print(block + "\n\n" + probes + "\n\n" + coverage)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
