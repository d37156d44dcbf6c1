r"""Benchmark: one long generation through the judges' sentence segmentations and the lexicon judge.

Run: ``python bench/bench_long_text_judge.py [--sizes 0.5,1,2,5] [--spacy-sizes 0.1,0.2,0.4] [--json]``.

The text is the demo data's references and generations joined into ONE paragraph (no blank lines), repeated
up to each size in MB (10**6 characters): the worst case for the regex splitter, whose earlier version copied
the rest of the paragraph for every candidate sentence end (quadratic: 0.4 / 0.8 / 1.6 MB took 0.15 / 0.52 /
1.57 s, and a 5 MB generation ran past 1,000 s in ``judge --judge lexicon``).

Measured per size, with a baseline in the same run:

* ``split_sentences`` (the regex splitter) against the baseline ``re.findall(r"\S+")`` over the same text
  (a linear-time reference; best of 3 runs each): the ratio stays flat when the splitter is linear;
* ``run_judge(..., "lexicon", segmentation="regex")`` on a one-row outputs table whose generation is the text
  (affect, disturbing and conflict protocols): seconds per MB stays flat when the judge is linear;
* at the smaller ``--spacy-sizes``, the default segmentation (the spaCy parse of Eq. 2,
  :mod:`empathy.judges.segment`), seconds per MB; texts above the parser's 1,000,000-character limit are
  parsed in pieces of 100,000 characters.

Figures with the machine and load average go into ``docs/benchmarks.md`` (section "Long texts through the
judges").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MB = 1_000_000
WORD = re.compile(r"\S+")


def _text(size: int) -> str:
    import pandas as pd

    from empathy.paths import DEMO_DIR

    outputs = pd.read_csv(DEMO_DIR / "outputs.csv")
    unit = " ".join(" ".join(str(t).split()) for t in [*outputs["reference"], *outputs["generation"]] if t == t)
    return (unit + " ") * (size // (len(unit) + 1)) + unit[: size % (len(unit) + 1)]


def _timed(function, *args, repeat: int = 1, **kwargs) -> tuple[float, object]:
    """Best of ``repeat`` wall times (the machine is shared: the minimum is the least disturbed run)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, result


def _words(text: str) -> list[str]:
    """The linear baseline: every whitespace-delimited token through a compiled regex."""
    return WORD.findall(text)


def main(argv: list[str] | None = None) -> int:
    import pandas as pd
    from bench_judges import machine

    from empathy.judges import run_judge, split_sentences
    from empathy.judges.segment import sentence_spans

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.5,1,2,5", help="regex/lexicon sizes in MB")
    parser.add_argument("--spacy-sizes", default="0.1,0.2,0.4", help="spaCy segmentation sizes in MB")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    rows = []
    for size_mb in (float(s) for s in args.sizes.split(",")):
        text = _text(int(size_mb * MB))
        baseline, _ = _timed(_words, text, repeat=3)
        split_s, sentences = _timed(split_sentences, text, repeat=3)
        outputs = pd.DataFrame({"item_id": ["1"], "model": ["m"], "reference": ["A short reference."],
                                "generation": [text]})
        judge_s, run = _timed(run_judge, outputs, "lexicon", segmentation="regex", cache=False)
        rows.append({"kind": "regex", "mb": size_mb, "sentences": len(sentences), "baseline_s": round(baseline, 4),
                     "split_s": round(split_s, 4), "split_over_baseline": round(split_s / baseline, 2),
                     "lexicon_judge_s": round(judge_s, 3), "lexicon_judge_s_per_mb": round(judge_s / size_mb, 3),
                     "missing": int(run.ratings["value"].isna().sum())})
    sentence_spans(["Warm the model up. Load it before timing."])
    for size_mb in (float(s) for s in args.spacy_sizes.split(",") if s):
        text = _text(int(size_mb * MB))
        parse_s, spans = _timed(sentence_spans, [text])
        rows.append({"kind": "spacy", "mb": size_mb, "sentences": len(spans[0]), "parse_s": round(parse_s, 3),
                     "parse_s_per_mb": round(parse_s / size_mb, 2)})
    figures = {"rows": rows, "load_average_1min_before": round(load, 2), "machine": machine()}
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print("| MB | sentences | baseline (s) | split_sentences (s) | ratio to baseline | lexicon judge (s) | s per MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        if row["kind"] == "regex":
            print(f"| {row['mb']:g} | {row['sentences']} | {row['baseline_s']:.3f} | {row['split_s']:.3f} | "
                  f"{row['split_over_baseline']:.1f} | {row['lexicon_judge_s']:.2f} | "
                  f"{row['lexicon_judge_s_per_mb']:.2f} |")
    print("\n| MB (spaCy segmentation) | sentences | parse (s) | s per MB |\n|---:|---:|---:|---:|")
    for row in rows:
        if row["kind"] == "spacy":
            print(f"| {row['mb']:g} | {row['sentences']} | {row['parse_s']:.2f} | {row['parse_s_per_mb']:.1f} |")
    print(f"\nload average before {load:.2f}; machine: {figures['machine']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
