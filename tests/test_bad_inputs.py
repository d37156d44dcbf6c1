"""A catalogue of bad inputs: each gets exit code 2 and one stderr line naming file, row and column.

The CLI runs in a subprocess, as a user or a script would run it, so a traceback would show.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GOOD_OUTPUTS = (
    "item_id,model,task,reference,generation\n"
    "1,a,news,The river rose overnight.,Water levels changed.\n"
    "2,a,news,Three people died in the fire.,A fire occurred.\n"
)
GOOD_RATINGS_HEADER = "item_id,model,rater,dimension,value,rater_kind\n"


def _write(tmp: Path, name: str, content: str | bytes) -> Path:
    path = tmp / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _ratings(*lines: str) -> str:
    return GOOD_RATINGS_HEADER + "".join(line + "\n" for line in lines)


# (case id, files to write {name: content}, CLI args (file names relative to tmp), expected fragments in stderr)
CATALOGUE = [
    ("missing-file", {}, ["metrics", "{tmp}/nope.csv"], ["nope.csv", "file not found"]),
    ("unsupported-type", {"out.txt": GOOD_OUTPUTS}, ["metrics", "{tmp}/out.txt"], ["out.txt", "unsupported file type"]),
    ("empty-file", {"out.csv": ""}, ["metrics", "{tmp}/out.csv"], ["out.csv", "file is empty"]),
    ("missing-column", {"out.csv": "item_id,model,reference\n1,a,x\n"}, ["metrics", "{tmp}/out.csv"],
     ["out.csv", "column 'generation'", "missing required column"]),
    ("empty-item-id", {"out.csv": GOOD_OUTPUTS + ",a,news,ref,gen\n"}, ["metrics", "{tmp}/out.csv"],
     ["out.csv", "row 4", "column 'item_id'", "empty value"]),
    ("duplicate-output", {"out.csv": GOOD_OUTPUTS + "2,a,news,ref,gen\n"}, ["metrics", "{tmp}/out.csv"],
     ["out.csv", "row 4", "column 'item_id'", "duplicate (item_id, model) = (2, a)"]),
    ("bad-jsonl", {"out.jsonl": '{"item_id": "1", "model": "a", "reference": "r", "generation": "g"}\n{oops\n'},
     ["metrics", "{tmp}/out.jsonl"], ["out.jsonl", "row 2", "invalid JSON"]),
    ("jsonl-not-object", {"out.jsonl": '["item_id", "model"]\n'}, ["metrics", "{tmp}/out.jsonl"],
     ["out.jsonl", "row 1", "JSON object"]),
    ("not-utf8", {"out.csv": "item_id,model,reference,generation\n1,a,caf\xe9,x\n".encode("latin-1")},
     ["metrics", "{tmp}/out.csv"], ["out.csv", "not UTF-8"]),
    ("corrupt-parquet", {"out.parquet": b"PAR1 this is not parquet"}, ["metrics", "{tmp}/out.parquet"],
     ["out.parquet", "cannot read file"]),
    ("rating-not-number", {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,e_ref,0.5,llm", "2,a,j,e_ref,high,llm")},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv"], ["r.csv", "row 3", "column 'value'", "not a number"]),
    ("affect-out-of-range", {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,e_gen,1.5,llm")},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv"], ["r.csv", "row 2", "column 'value'", "[0, 1]"]),
    ("ca-not-binary", {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,ca,1,llm", "2,a,j,ca,0.5,llm")},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv"], ["r.csv", "row 3", "column 'value'", "0 or 1"]),
    ("negative-count", {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,u_gen,-2,llm")},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv"], ["r.csv", "row 2", "column 'value'", "u_gen"]),
    ("infinite-value", {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,empathy,inf,llm")},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv"], ["r.csv", "row 2", "column 'value'", "infinite"]),
    ("unknown-rater-kind", {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,ca,1,robot")},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv"], ["r.csv", "row 2", "column 'rater_kind'", "robot"]),
    ("duplicate-rating", {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,ca,1,llm", "1,a,j,ca,0,llm")},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv"], ["r.csv", "row 3", "column 'rater'", "duplicate"]),
    ("rating-unknown-item", {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,ca,1,llm", "9,a,j,ca,0,llm")},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv"], ["r.csv", "row 3", "column 'item_id'", "(9, a)"]),
    ("ratings-missing-column", {"out.csv": GOOD_OUTPUTS, "r.csv": "item_id,model,rater,value\n1,a,j,1\n"},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv"], ["r.csv", "column 'dimension'"]),
    ("wide-bad-value", {"out.csv": "item_id,model,reference,generation,j:ca\n1,a,r,g,1\n2,a,r,g,2\n"},
     ["metrics", "{tmp}/out.csv"], ["out.csv", "row 3", "column 'j:ca'", "0 or 1"]),
    ("wide-bad-name", {"out.csv": "item_id,model,reference,generation,:ca\n1,a,r,g,1\n"},
     ["metrics", "{tmp}/out.csv"], ["out.csv", "column ':ca'", "<rater>:<dimension>"]),
    ("empty-rater", {"r.csv": _ratings("1,a,,ca,1,llm")}, ["agreement", "{tmp}/r.csv"],
     ["r.csv", "row 2", "column 'rater'", "empty value"]),
    ("agreement-missing-file", {}, ["agreement", "{tmp}/none.jsonl"], ["none.jsonl", "file not found"]),
    ("duplicate-column", {"out.csv": "item_id,model,reference,generation,model\n1,a,r,g,b\n"},
     ["metrics", "{tmp}/out.csv"], ["out.csv", "column 'model", "duplicate column"]),
]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "empathy", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("files", "args", "fragments"), [c[1:] for c in CATALOGUE], ids=[c[0] for c in CATALOGUE])
def test_bad_input_gets_one_clear_line(tmp_path, files, args, fragments):
    for name, content in files.items():
        _write(tmp_path, name, content)
    result = run_cli(*[a.format(tmp=tmp_path) for a in args])
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def test_catalogue_is_large_enough():
    assert len(CATALOGUE) >= 15


def test_usage_error_is_one_line():
    result = run_cli("metrics", "x.csv", "--format", "yaml")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "invalid choice" in result.stderr
