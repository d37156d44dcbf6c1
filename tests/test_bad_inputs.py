"""A catalogue of bad inputs: each gets exit code 2 and one stderr line naming file, row and column.

Every case runs the real command line (:func:`empathy.cli.main`) in-process with warnings turned into errors,
so a traceback, a stray warning or a second stderr line fails it; a sample of the cases also runs in a
subprocess (``python -m empathy``), as a user or a script would run it. The outputs-file cases run through
every command that reads an outputs file (metrics, judge, standard), the ratings cases through every command
that reads ratings (metrics --ratings, agreement, panels, stability --dimension).
"""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

from empathy.cli import main
from empathy.paths import shared_dataset

GOOD_OUTPUTS = (
    "item_id,model,task,reference,generation\n"
    "1,a,news,The river rose overnight.,Water levels changed.\n"
    "2,a,news,Three people died in the fire.,A fire occurred.\n"
)
GOOD_RATINGS_HEADER = "item_id,model,rater,dimension,value,rater_kind\n"
OUTPUT_KEYS = ("item_id", "model", "reference", "generation")


def _ratings(*lines: str) -> str:
    return GOOD_RATINGS_HEADER + "".join(line + "\n" for line in lines)


def _jsonl(*records: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def _out(**fields: object) -> dict[str, object]:
    """A JSONL outputs record: item 1 of model a, with ``fields`` replaced (a value of ... drops the key)."""
    record: dict[str, object] = {"item_id": "1", "model": "a", "reference": "r", "generation": "g"}
    record.update(fields)
    return {k: v for k, v in record.items() if v is not ...}


def _rating(**fields: object) -> dict[str, object]:
    record: dict[str, object] = {"item_id": "1", "model": "a", "rater": "j", "dimension": "ca", "value": 1}
    record.update(fields)
    return {k: v for k, v in record.items() if v is not ...}


def _parquet(frame: pd.DataFrame) -> bytes:
    import io

    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


LEDGER = "item_id,model,rater,dimension,value,annotator\n1,a,j,ca,1,alice\n"
LEDGER_ADJUDICATED = "item_id,model,rater,dimension,value,annotator,role\n1,a,j,ca,1,alice,adjudicator\n"
ROLES = '[roles]\n"alice" = "annotator"\n"bob" = "adjudicator"\n"carol" = "viewer"\n'
DEEP = '{"item_id": "1", "model": "a", "reference": "r", "generation": ' + "[" * 100_000 + "]" * 100_000 + "}"
MANY_GOOD = "item_id,model,reference,generation\n" + "".join(f"{i},a,ref {i},gen {i}\n" for i in range(1, 3001))

# --- outputs files: (id, {file: content}, expected fragments) -- the file is always named out.<ext> ---------
OUTPUT_CASES: list[tuple[str, dict[str, str | bytes], list[str]]] = [
    ("missing-file", {}, ["out.csv", "file not found"]),
    ("unsupported-type", {"out.txt": GOOD_OUTPUTS}, ["out.txt", "unsupported file type"]),
    ("no-suffix", {"out": GOOD_OUTPUTS}, ["out", "unsupported file type '(none)'"]),
    ("empty-file", {"out.csv": ""}, ["out.csv", "file is empty"]),
    ("empty-jsonl", {"out.jsonl": ""}, ["out.jsonl", "file is empty"]),
    ("blank-lines-jsonl", {"out.jsonl": "\n\n  \n"}, ["out.jsonl", "no records"]),
    ("header-only", {"out.csv": "item_id,model,reference,generation\n"}, ["out.csv", "no rows"]),
    ("missing-column", {"out.csv": "item_id,model,reference\n1,a,x\n"},
     ["out.csv", "column 'generation'", "missing required column"]),
    ("missing-item-id-column", {"out.csv": "model,reference,generation\na,r,g\n"}, ["out.csv", "column 'item_id'"]),
    ("empty-item-id", {"out.csv": GOOD_OUTPUTS + ",a,news,ref,gen\n"},
     ["out.csv", "row 4", "column 'item_id'", "empty value"]),
    ("blank-item-id", {"out.csv": GOOD_OUTPUTS + '"   ",a,news,ref,gen\n'},
     ["out.csv", "row 4", "column 'item_id'", "empty value"]),
    ("empty-model", {"out.csv": GOOD_OUTPUTS + "3,,news,ref,gen\n"}, ["out.csv", "row 4", "column 'model'"]),
    ("duplicate-output", {"out.csv": GOOD_OUTPUTS + "2,a,news,ref,gen\n"},
     ["out.csv", "row 4", "column 'item_id'", "duplicate (item_id, model) = (2, a)"]),
    ("duplicate-after-strip", {"out.csv": GOOD_OUTPUTS + '" 2 ",a ,news,ref,gen\n'},
     ["out.csv", "row 4", "column 'item_id'", "duplicate (item_id, model) = (2, a)"]),
    ("carriage-return-in-id", {"out.csv": GOOD_OUTPUTS + '"7\rX",a,news,r,g\n"7\rX",a,news,r,g\n'},
     ["out.csv", "row 5", "(7\\x0dX, a)"]),
    ("ansi-escape-in-model", {"out.csv": GOOD_OUTPUTS + "7,\x1b[31mred,news,r,g\n7,\x1b[31mred,news,r,g\n"},
     ["out.csv", "row 5", "(7, \\x1b[31mred)"]),
    ("short-csv-row", {"out.csv": GOOD_OUTPUTS + "3,a,news,ref\n"},
     ["out.csv", "row 4", "column 'generation'", "4 fields, the header has 5"]),
    ("short-csv-row-early", {"out.csv": "item_id,model,reference,generation\n1,a\n2,a,r,g\n"},
     ["out.csv", "row 2", "column 'reference'", "2 fields"]),
    ("long-csv-row", {"out.csv": GOOD_OUTPUTS + "3,a,news,ref,gen,extra\n"}, ["out.csv", "row 4", "malformed CSV"]),
    ("unterminated-quote", {"out.csv": GOOD_OUTPUTS + '3,a,news,"ref,gen\n'}, ["out.csv", "malformed CSV"]),
    ("duplicate-column", {"out.csv": "item_id,model,reference,generation,model\n1,a,r,g,b\n"},
     ["out.csv", "column 'model'", "duplicate column"]),
    ("duplicate-column-after-strip", {"out.csv": "item_id,model,reference,generation, model\n1,a,r,g,b\n"},
     ["out.csv", "column 'model'", "duplicate column"]),
    ("not-utf8", {"out.csv": "item_id,model,reference,generation\n1,a,caf\xe9,x\n".encode("latin-1")},
     ["out.csv", "row 2", "not UTF-8"]),
    ("not-utf8-deep", {"out.csv": MANY_GOOD.encode() + "3001,a,caf\xe9,x\n".encode("latin-1")},
     ["out.csv", "row 3002", "not UTF-8", "byte 10 of the line"]),
    ("not-utf8-header", {"out.csv": "item_id,model,r\xe9f,generation\n1,a,r,g\n".encode("latin-1")},
     ["out.csv", "row 1", "not UTF-8"]),
    ("not-utf8-jsonl", {"out.jsonl": _jsonl(_out(), _out(item_id="2")).encode() + b'{"item_id": "\xff"}\n'},
     ["out.jsonl", "row 3", "not UTF-8"]),
    ("utf16-file", {"out.csv": GOOD_OUTPUTS.encode("utf-16")}, ["out.csv", "row 1", "not UTF-8"]),
    ("corrupt-parquet", {"out.parquet": b"PAR1 this is not parquet"}, ["out.parquet", "cannot read file"]),
    ("parquet-missing-column", {"out.parquet": _parquet(pd.DataFrame({"item_id": ["1"], "model": ["a"],
                                                                      "reference": ["r"]}))},
     ["out.parquet", "column 'generation'"]),
    ("parquet-int64-na-id", {"out.parquet": _parquet(pd.DataFrame({
        "item_id": pd.array([1, None], dtype="Int64"), "model": ["a", "a"], "reference": ["r", "r"],
        "generation": ["g", "h"]}))}, ["out.parquet", "row 2", "column 'item_id'", "empty value"]),
    ("parquet-float-id", {"out.parquet": _parquet(pd.DataFrame({"item_id": [1.5], "model": ["a"],
                                                                "reference": ["r"], "generation": ["g"]}))},
     ["out.parquet", "row 1", "column 'item_id'", "expected text, got float"]),
    ("parquet-list-generation", {"out.parquet": _parquet(pd.DataFrame({
        "item_id": ["1"], "model": ["a"], "reference": ["r"], "generation": [["g", "h"]]}))},
     ["out.parquet", "row 1", "column 'generation'", "expected text"]),
    ("bad-jsonl", {"out.jsonl": _jsonl(_out(), "{oops")}, ["out.jsonl", "row 2", "invalid JSON"]),
    ("jsonl-trailing-comma", {"out.jsonl": _jsonl(_out(), '{"item_id": "2",}')},
     ["out.jsonl", "row 2", "invalid JSON"]),
    ("jsonl-not-object", {"out.jsonl": '["item_id", "model"]\n'}, ["out.jsonl", "row 1", "JSON object"]),
    ("jsonl-null-line", {"out.jsonl": _jsonl(_out(), "null")}, ["out.jsonl", "row 2", "JSON object"]),
    ("jsonl-number-line", {"out.jsonl": _jsonl("42")}, ["out.jsonl", "row 1", "JSON object"]),
    ("json-array-file", {"out.json": json.dumps([_out()]) + "\n"}, ["out.json", "row 1", "JSON object"]),
    ("jsonl-blank-lines-counted", {"out.jsonl": _jsonl(_out()) + "\n\n" + "{oops\n"},
     ["out.jsonl", "row 4", "invalid JSON"]),
    ("jsonl-missing-generation", {"out.jsonl": _jsonl(_out(), _out(item_id="2", generation=...))},
     ["out.jsonl", "row 2", "column 'generation'", "missing key"]),
    ("jsonl-missing-reference", {"out.jsonl": _jsonl(_out(reference=...), _out(item_id="2"))},
     ["out.jsonl", "row 1", "column 'reference'", "missing key"]),
    ("jsonl-missing-item-id", {"out.jsonl": _jsonl(_out(), _out(item_id=...))},
     ["out.jsonl", "row 2", "column 'item_id'"]),
    ("jsonl-true-item-id", {"out.jsonl": _jsonl(_out(item_id=True))},
     ["out.jsonl", "row 1", "column 'item_id'", "expected text, got bool"]),
    ("jsonl-false-model", {"out.jsonl": _jsonl(_out(), _out(item_id="2", model=False))},
     ["out.jsonl", "row 2", "column 'model'", "got bool"]),
    ("jsonl-float-item-id", {"out.jsonl": _jsonl(_out(item_id=1.5))}, ["out.jsonl", "row 1", "got float"]),
    ("jsonl-list-item-id", {"out.jsonl": _jsonl(_out(item_id=[1]))}, ["out.jsonl", "row 1", "got list"]),
    ("jsonl-dict-generation", {"out.jsonl": _jsonl(_out(generation={"text": "g"}))},
     ["out.jsonl", "row 1", "column 'generation'", "got dict"]),
    ("jsonl-deep-nesting", {"out.jsonl": DEEP + "\n"}, ["out.jsonl", "row 1", "nested too deeply"]),
    ("jsonl-5000-digit-integer", {"out.jsonl": '{"item_id": ' + "9" * 5000 + "}\n"},
     ["out.jsonl", "row 1", "invalid JSON"]),
    ("jsonl-huge-int-rating", {"out.jsonl": _jsonl(_out(**{"j:ca": 10 ** 400}))},
     ["out.jsonl", "row 1", "column 'j:ca'", "not a number"]),
    ("wide-bad-value", {"out.csv": "item_id,model,reference,generation,j:ca\n1,a,r,g,1\n2,a,r,g,2\n"},
     ["out.csv", "row 3", "column 'j:ca'", "0 or 1"]),
    ("wide-not-number", {"out.csv": "item_id,model,reference,generation,j:e_ref\n1,a,r,g,high\n"},
     ["out.csv", "row 2", "column 'j:e_ref'", "not a number: 'high'"]),
    ("wide-underscore-number", {"out.csv": "item_id,model,reference,generation,j:u_gen\n1,a,r,g,1_000\n"},
     ["out.csv", "row 2", "column 'j:u_gen'", "not a number: '1_000'"]),
    ("wide-bad-name", {"out.csv": "item_id,model,reference,generation,:ca\n1,a,r,g,1\n"},
     ["out.csv", "column ':ca'", "<rater>:<dimension>"]),
    ("wide-no-dimension", {"out.csv": "item_id,model,reference,generation,j:\n1,a,r,g,1\n"},
     ["out.csv", "column 'j:'", "<rater>:<dimension>"]),
    ("folder-as-file", {"out.csv/keep": "x"}, ["out.csv", "is a folder"]),
    # issue 27: near misses. A trailing comma names a column "Unnamed: 5" in pandas, a phantom wide rater.
    ("header-trailing-comma", {"out.csv": "item_id,model,task,reference,generation,\n1,a,news,r,g,\n"},
     ["out.csv", "row 1", "column '#6'", "has no name"]),
    ("header-blank-cell", {"out.csv": "item_id,model,  ,reference,generation\n1,a,x,r,g\n"},
     ["out.csv", "row 1", "column '#3'", "has no name"]),
    ("header-zero-width-cell", {"out.csv": "item_id,model,\u200b,reference,generation\n1,a,x,r,g\n"},
     ["out.csv", "row 1", "column '#3'", "has no name"]),
    ("jsonl-blank-key", {"out.jsonl": _jsonl(_out(), _out(item_id="2", **{" ": 1}))},
     ["out.jsonl", "row 2", "a key with no name"]),
    ("jsonl-duplicate-key", {"out.jsonl": _jsonl(_out(), '{"item_id": "2", "model": "a", "reference": "r", '
                                                 '"generation": "g", "model": "b"}')},
     ["out.jsonl", "row 2", "column 'model'", "duplicate key 'model'"]),
    ("jsonl-duplicate-nested-key", {"out.jsonl": _jsonl('{"item_id": "1", "model": "a", "reference": "r", '
                                                        '"generation": "g", "meta": {"k": 1, "k": 2}}')},
     ["out.jsonl", "row 1", "duplicate key 'k'"]),
    ("zero-width-item-id", {"out.csv": GOOD_OUTPUTS + "\u200b,a,news,r,g\n"},
     ["out.csv", "row 4", "column 'item_id'", "only invisible characters", "U+200B"]),
    ("zero-width-inside-item-id", {"out.csv": GOOD_OUTPUTS + "1\u200b,a,news,r,g\n"},
     ["out.csv", "row 4", "column 'item_id'", "U+200B ZERO WIDTH SPACE"]),
    ("word-joiner-model", {"out.csv": GOOD_OUTPUTS + "3,a\u2060,news,r,g\n"},
     ["out.csv", "row 4", "column 'model'", "U+2060 WORD JOINER"]),
    ("bidi-override-model", {"out.csv": GOOD_OUTPUTS + "3,\u202eb,news,r,g\n"},
     ["out.csv", "row 4", "column 'model'", "U+202E"]),
    ("byte-order-mark-task", {"out.csv": GOOD_OUTPUTS + "3,a,\ufeffnews,r,g\n"},
     ["out.csv", "row 4", "column 'task'", "U+FEFF"]),
    ("jsonl-soft-hyphen-item-id", {"out.jsonl": _jsonl(_out(), _out(item_id="1\u00ad"))},
     ["out.jsonl", "row 2", "column 'item_id'", "U+00AD SOFT HYPHEN"]),
    ("wide-dimension-upper-case", {"out.csv": "item_id,model,reference,generation,j:CA\n1,a,r,g,5\n"},
     ["out.csv", "row 1", "column 'j:CA'", "dimension 'CA' is the paper's 'ca'"]),
    ("wide-dimension-full-width", {"out.csv": "item_id,model,reference,generation,j:\uff43\uff41\n1,a,r,g,1\n"},
     ["out.csv", "row 1", "the paper's 'ca'"]),
    ("wide-dimension-zero-width", {"out.csv": "item_id,model,reference,generation,j:ca\u200b\n1,a,r,g,1\n"},
     ["out.csv", "row 1", "the paper's 'ca'"]),
    ("wide-rater-zero-width", {"out.csv": "item_id,model,reference,generation,j\u200b:ca\n1,a,r,g,1\n"},
     ["out.csv", "row 1", "U+200B"]),
    ("wide-ca-rounds-to-one", {"out.csv": "item_id,model,reference,generation,j:ca\n1,a,r,g,0.99999999999999999\n"},
     ["out.csv", "row 2", "column 'j:ca'", "0 or 1", "round it to 1"]),
    ("jsonl-wide-true", {"out.jsonl": _jsonl(_out(**{"j:ca": 1}), _out(item_id="2", **{"j:ca": True}))},
     ["out.jsonl", "row 2", "column 'j:ca'", "a boolean is not a number"]),
    ("jsonl-wide-ca-rounds-to-one", {"out.jsonl": '{"item_id": "1", "model": "a", "reference": "r", '
                                                  '"generation": "g", "j:ca": 0.99999999999999999}\n'},
     ["out.jsonl", "row 1", "column 'j:ca'", "round it to 1"]),
]

# How each command reads an outputs file: args with {f} for the file, {tmp} for the folder.
OUTPUT_COMMANDS = {
    "metrics": ["metrics", "{f}"],
    "judge": ["judge", "{f}", "--out", "{tmp}/ratings.csv", "--quiet", "--no-cache"],
    "standard": ["standard", "{f}"],
    "slices": ["slices", "{f}", "--dimension", "ca", "--feature", "task"],
}

# --- ratings files: (id, ratings.csv lines after the header | {file: content}, expected fragments) -----------
RATING_CASES: list[tuple[str, dict[str, str | bytes], list[str]]] = [
    ("rating-not-number", {"r.csv": _ratings("1,a,j,e_ref,0.5,llm", "2,a,j,e_ref,high,llm")},
     ["r.csv", "row 3", "column 'value'", "not a number: 'high'"]),
    ("underscore-digits", {"r.csv": _ratings("1,a,j,u_gen,1_000,llm")},
     ["r.csv", "row 2", "column 'value'", "not a number: '1_000'"]),
    ("arabic-indic-digits", {"r.csv": _ratings("1,a,j,u_gen,\u0661\u0662,llm")},
     ["r.csv", "row 2", "column 'value'", "not a number"]),
    ("extended-arabic-indic-digits", {"r.csv": _ratings("1,a,j,ca,\u06f1,llm")}, ["r.csv", "row 2", "not a number"]),
    ("full-width-digits", {"r.csv": _ratings("1,a,j,ca,\uff11,llm")}, ["r.csv", "row 2", "not a number"]),
    ("devanagari-digits", {"r.csv": _ratings("1,a,j,ca,\u0967,llm")}, ["r.csv", "row 2", "not a number"]),
    ("hex-number", {"r.csv": _ratings("1,a,j,u_gen,0x10,llm")}, ["r.csv", "row 2", "not a number: '0x10'"]),
    ("decimal-comma", {"r.csv": _ratings('1,a,j,e_ref,"0,5",llm')}, ["r.csv", "row 2", "not a number: '0,5'"]),
    ("double-sign", {"r.csv": _ratings("1,a,j,u_gen,--1,llm")}, ["r.csv", "row 2", "not a number"]),
    ("bare-dot", {"r.csv": _ratings("1,a,j,u_gen,.,llm")}, ["r.csv", "row 2", "not a number"]),
    ("dangling-exponent", {"r.csv": _ratings("1,a,j,u_gen,1e,llm")}, ["r.csv", "row 2", "not a number"]),
    ("word-true", {"r.csv": _ratings("1,a,j,ca,true,llm")}, ["r.csv", "row 2", "not a number: 'true'"]),
    ("percent", {"r.csv": _ratings("1,a,j,e_ref,50%,llm")}, ["r.csv", "row 2", "not a number: '50%'"]),
    ("affect-out-of-range", {"r.csv": _ratings("1,a,j,e_gen,1.5,llm")},
     ["r.csv", "row 2", "column 'value'", "[0, 1]"]),
    ("affect-barely-out", {"r.csv": _ratings("1,a,j,e_ref,1.0000001,llm")}, ["r.csv", "row 2", "[0, 1]"]),
    ("affect-negative", {"r.csv": _ratings("1,a,j,e_ref,0.2,llm", "2,a,j,e_ref,-0.1,llm")},
     ["r.csv", "row 3", "[0, 1]", "got '-0.1'"]),
    ("ca-not-binary", {"r.csv": _ratings("1,a,j,ca,1,llm", "2,a,j,ca,0.5,llm")},
     ["r.csv", "row 3", "column 'value'", "0 or 1"]),
    ("ca-two", {"r.csv": _ratings("1,a,j,ca,2,llm")}, ["r.csv", "row 2", "'ca' must be 0 or 1, got '2'"]),
    ("negative-count", {"r.csv": _ratings("1,a,j,u_gen,-2,llm")}, ["r.csv", "row 2", "column 'value'", "u_gen"]),
    ("infinite-value", {"r.csv": _ratings("1,a,j,empathy,inf,llm")},
     ["r.csv", "row 2", "column 'value'", "infinite"]),
    ("negative-infinity", {"r.csv": _ratings("1,a,j,empathy,-Infinity,llm")}, ["r.csv", "row 2", "infinite"]),
    ("overflowing-exponent", {"r.csv": _ratings("1,a,j,u_gen,1e400,llm")}, ["r.csv", "row 2", "infinite"]),
    ("first-bad-row-wins", {"r.csv": _ratings("1,a,j,ca,1,llm", "2,a,j,e_ref,7,llm", "1,a,j,e_ref,x,llm")},
     ["r.csv", "row 3", "[0, 1]"]),
    ("unknown-rater-kind", {"r.csv": _ratings("1,a,j,ca,1,robot")},
     ["r.csv", "row 2", "column 'rater_kind'", "robot"]),
    ("rater-kind-case", {"r.csv": _ratings("1,a,j,ca,1,LLM")}, ["r.csv", "row 2", "column 'rater_kind'", "'LLM'"]),
    ("rater-kind-ansi", {"r.csv": _ratings("1,a,j,ca,1,\x1b[2Jx")},
     ["r.csv", "row 2", "column 'rater_kind'", "\\x1b[2Jx"]),
    ("duplicate-rating", {"r.csv": _ratings("1,a,j,ca,1,llm", "1,a,j,ca,0,llm")},
     ["r.csv", "row 3", "column 'rater'", "duplicate"]),
    ("rating-duplicate-after-strip", {"r.csv": _ratings("1,a,j,ca,1,llm", "1 ,a, j ,ca,0,llm")},
     ["r.csv", "row 3", "column 'rater'", "duplicate"]),
    ("ratings-missing-column", {"r.csv": "item_id,model,rater,value\n1,a,j,1\n"}, ["r.csv", "column 'dimension'"]),
    ("ratings-missing-value-column", {"r.csv": "item_id,model,rater,dimension\n1,a,j,ca\n"},
     ["r.csv", "column 'value'"]),
    ("empty-rater", {"r.csv": _ratings("1,a,,ca,1,llm")}, ["r.csv", "row 2", "column 'rater'", "empty value"]),
    ("empty-rating-item", {"r.csv": _ratings("1,a,j,ca,1,llm", ",a,j,ca,1,llm")},
     ["r.csv", "row 3", "column 'item_id'", "empty value"]),
    ("empty-rating-model", {"r.csv": _ratings("1, ,j,ca,1,llm")}, ["r.csv", "row 2", "column 'model'"]),
    ("empty-dimension", {"r.csv": _ratings("1,a,j,,1,llm")}, ["r.csv", "row 2", "column 'dimension'"]),
    ("short-ratings-row", {"r.csv": _ratings("1,a,j,ca,1,llm", "2,a,j,ca,1")},
     ["r.csv", "row 3", "column 'rater_kind'", "5 fields, the header has 6"]),
    ("ratings-not-utf8", {"r.csv": _ratings("1,a,j,ca,1,llm").encode() + "2,a,j\xe9,ca,1,llm\n".encode("latin-1")},
     ["r.csv", "row 3", "not UTF-8"]),
    ("ratings-empty-file", {"r.csv": ""}, ["r.csv", "file is empty"]),
    ("ratings-jsonl-huge-integer", {"r.jsonl": _jsonl(_rating(dimension="u_gen", value=10 ** 400))},
     ["r.jsonl", "row 1", "column 'value'", "not a number"]),
    ("ratings-jsonl-list-value", {"r.jsonl": _jsonl(_rating(), _rating(item_id="2", value=[1]))},
     ["r.jsonl", "row 2", "column 'value'", "not a number"]),
    ("ratings-jsonl-dict-value", {"r.jsonl": _jsonl(_rating(value={"v": 1}))}, ["r.jsonl", "row 1", "not a number"]),
    ("ratings-jsonl-true-item", {"r.jsonl": _jsonl(_rating(item_id=True))},
     ["r.jsonl", "row 1", "column 'item_id'", "got bool"]),
    ("ratings-jsonl-missing-value", {"r.jsonl": _jsonl(_rating(), _rating(item_id="2", value=...))},
     ["r.jsonl", "row 2", "column 'value'", "missing key"]),
    ("ratings-jsonl-deep", {"r.jsonl": _jsonl(_rating()) + '{"value": ' + "[" * 100_000 + "\n"},
     ["r.jsonl", "row 2", "nested too deeply"]),
    ("ratings-jsonl-infinity", {"r.jsonl": _jsonl(_rating(dimension="u_gen")) + '{"item_id": "2", "model": "a", '
                                '"rater": "j", "dimension": "u_gen", "value": Infinity}\n'},
     ["r.jsonl", "row 2", "infinite"]),
    ("ratings-parquet-bad-range", {"r.parquet": _parquet(pd.DataFrame({
        "item_id": ["1", "2"], "model": "a", "rater": "j", "dimension": "ca",
        "value": pd.array([1, 3], dtype="Int64")}))}, ["r.parquet", "row 2", "0 or 1"]),
    # issue 27: a known dimension spelt differently is an error naming it, not an unchecked rubric
    ("dimension-upper-case", {"r.csv": _ratings("1,a,j,ca,1,llm", "2,a,j,CA,5,llm")},
     ["r.csv", "row 3", "column 'dimension'", "dimension 'CA' is the paper's 'ca'"]),
    ("dimension-title-case", {"r.csv": _ratings("1,a,j,Ca,1,llm")}, ["r.csv", "row 2", "the paper's 'ca'"]),
    ("dimension-full-width", {"r.csv": _ratings("1,a,j,\uff43\uff41,1,llm")}, ["r.csv", "row 2", "the paper's 'ca'"]),
    ("dimension-zero-width", {"r.csv": _ratings("1,a,j,ca\u200b,1,llm")}, ["r.csv", "row 2", "the paper's 'ca'"]),
    ("dimension-e-ref-upper-case", {"r.csv": _ratings("1,a,j,E_REF,0.5,llm")},
     ["r.csv", "row 2", "the paper's 'e_ref'"]),
    ("rater-only-zero-width", {"r.csv": _ratings("1,a,\u200b\u200b,ca,1,llm")},
     ["r.csv", "row 2", "column 'rater'", "only invisible characters"]),
    ("item-zero-width-inside", {"r.csv": _ratings("1,a,j,ca,1,llm", "1\u200b,a,j,ca,0,llm")},
     ["r.csv", "row 3", "column 'item_id'", "U+200B"]),
    ("model-bidi-isolate", {"r.csv": _ratings("1,a\u2066,j,ca,1,llm")}, ["r.csv", "row 2", "column 'model'", "U+2066"]),
    ("unknown-dimension-zero-width", {"r.csv": _ratings("1,a,j,empathy\u200b,3,llm")},
     ["r.csv", "row 2", "column 'dimension'", "U+200B"]),
    ("ratings-header-trailing-comma", {"r.csv": "item_id,model,rater,dimension,value,\n1,a,j,ca,1,\n"},
     ["r.csv", "row 1", "column '#6'", "has no name"]),
    # booleans are not numbers (CSV 'true' already is not: word-true)
    ("ratings-jsonl-true-value", {"r.jsonl": _jsonl(_rating(value=True))},
     ["r.jsonl", "row 1", "column 'value'", "a boolean is not a number: got true"]),
    ("ratings-jsonl-false-among-numbers", {"r.jsonl": _jsonl(_rating(), _rating(item_id="2", value=False))},
     ["r.jsonl", "row 2", "column 'value'", "a boolean is not a number: got false"]),
    ("ratings-parquet-bool-value", {"r.parquet": _parquet(pd.DataFrame({
        "item_id": ["1"], "model": "a", "rater": "j", "dimension": "ca", "value": [True]}))},
     ["r.parquet", "row 1", "column 'value'", "a boolean is not a number"]),
    # a value is checked as written: a float's rounding never makes a label
    ("ca-rounds-to-one", {"r.csv": _ratings("1,a,j,ca,0.99999999999999999,llm")},
     ["r.csv", "row 2", "column 'value'", "'ca' must be 0 or 1", "round it to 1"]),
    ("ca-rounds-to-zero", {"r.csv": _ratings("1,a,j,ca,1e-400,llm")}, ["r.csv", "row 2", "round it to 0"]),
    ("ca-jsonl-rounds-to-one", {"r.jsonl": '{"item_id": "1", "model": "a", "rater": "j", "dimension": "ca", '
                                           '"value": 0.99999999999999999}\n'},
     ["r.jsonl", "row 1", "column 'value'", "'ca' must be 0 or 1", "round it to 1"]),
    ("affect-rounds-into-range", {"r.csv": _ratings("1,a,j,e_gen,1.00000000000000001,llm")},
     ["r.csv", "row 2", "'e_gen' must be in [0, 1]", "round it to 1"]),
    ("count-rounds-to-zero", {"r.jsonl": '{"item_id": "1", "model": "a", "rater": "j", "dimension": "u_ref", '
                                         '"value": -1e-400}\n'}, ["r.jsonl", "row 1", "'u_ref' must be in"]),
    ("ratings-jsonl-duplicate-key", {"r.jsonl": _jsonl(_rating(), '{"item_id": "2", "model": "a", "rater": "j", '
                                                                   '"dimension": "ca", "value": 1, "value": 0}')},
     ["r.jsonl", "row 2", "column 'value'", "duplicate key 'value'"]),
]

# How each command reads a ratings file: args with {f} for it, {tmp} for the folder ({tmp}/out.csv is good).
RATING_COMMANDS = {
    "metrics": ["metrics", "{tmp}/out.csv", "--ratings", "{f}"],
    "agreement": ["agreement", "{f}"],
    "panels": ["panels", "{f}", "--bootstrap", "0"],
    "stability": ["stability", "{f}", "--dimension", "ca"],
    "calibration": ["calibration", "{f}", "--dimension", "ca", "--bootstrap", "0"],

    "fragility": ["fragility", "{tmp}/out.csv", "--ratings", "{f}", "--metric", "CA"],
}

# An outputs file with one judge (j) and one expert (h) on CA: good input for slices and calibration.
JUDGED: dict[str, str | bytes] = {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings(
    "1,a,j,ca,1,llm", "2,a,j,ca,0,llm", "1,a,h,ca,0,expert", "2,a,h,ca,0,expert")}

# A judge config with one LLM judge 'a'; the cases add one setting.
JUDGE = '[judges.a]\nbase_url = "https://api.example.org/v1"\nmodel = "m"\n'


def _store_with_a_damaged_design() -> bytes:
    """A SQLite override store holding an audit design of GOOD_OUTPUTS (data set ``out.csv``) whose drawn output was
    changed after it was stored: its digest no longer matches its rows."""
    import sqlite3
    import tempfile

    from empathy.audit import draw_audit
    from empathy.labels.audits import save_design
    from empathy.labels.sqlite import OverrideStore

    outputs = pd.DataFrame({"item_id": ["1", "2"], "model": ["a", "a"], "task": ["news", "news"]})
    ratings = pd.DataFrame({"item_id": ["1", "2"], "model": "a", "rater": "j", "dimension": "ca", "value": [1.0, 0.0]})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "store.sqlite"
        save_design(OverrideStore(path), "out.csv",
                    draw_audit(outputs, ratings, judge="j", dimension="ca", per_model=1, seed=0))
        connection = sqlite3.connect(path)
        connection.execute("UPDATE audit_design_outputs SET item_id = CASE item_id WHEN '1' THEN '2' ELSE '1' END")
        connection.commit()
        connection.execute("PRAGMA journal_mode=DELETE")  # everything in the one file
        connection.close()
        return path.read_bytes()


DAMAGED_DESIGN = _store_with_a_damaged_design()
AUDITED: dict[str, str | bytes] = {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,ca,1,llm", "2,a,j,ca,0,llm")}
_DRAW = ["audit", "draw", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv"]

# --- options and other commands: (id, {file: content}, args, expected fragments) ----------------------------
OTHER_CASES: list[tuple[str, dict[str, str | bytes], list[str], list[str]]] = [
    # --scheduler (issue 13): checked while parsing the options, or before a cluster starts
    ("scheduler-bad-address", {"out.csv": GOOD_OUTPUTS}, ["metrics", "{tmp}/out.csv", "--scheduler", "yarn://x"],
     ["--scheduler", "yarn://x", "tcp://HOST:PORT or local:N"]),
    ("scheduler-local-zero", {"t.txt": "A text.\n"},
     ["distancing", "{tmp}/t.txt", "--scheduler", "local:0", "--output-dir", "{tmp}/o"], ["local:0", "from 1 to 256"]),
    ("scheduler-without-output-dir", {"t.txt": "A text.\n"}, ["distancing", "{tmp}/t.txt", "--scheduler", "local:1"],
     ["--scheduler needs --output-dir"]),
    ("output-dir-without-scheduler", {"t.txt": "A text.\n"}, ["distancing", "{tmp}/t.txt", "--output-dir", "{tmp}/o"],
     ["--output-dir needs --scheduler"]),
    ("features-dir-without-scheduler", {"out.csv": GOOD_OUTPUTS},
     ["metrics", "{tmp}/out.csv", "--features-dir", "{tmp}/f"], ["--features-dir needs --scheduler"]),
    ("output-dir-not-ours", {"t.txt": "A text.\n", "o/mine.csv": "a\n1\n"},
     ["distancing", "{tmp}/t.txt", "--scheduler", "local:1", "--output-dir", "{tmp}/o"],
     ["o: not empty and not an empathy partition folder", "mine.csv"]),
    ("rating-unknown-item", {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,ca,1,llm", "9,a,j,ca,0,llm")},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv"], ["r.csv", "row 3", "column 'item_id'", "(9, a)"]),
    ("rating-unknown-model-jsonl", {"out.csv": GOOD_OUTPUTS, "r.jsonl": _jsonl(_rating(), _rating(model="z"))},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.jsonl"], ["r.jsonl", "row 2", "column 'item_id'", "(1, z)"]),
    ("rating-in-two-files", {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,ca,1,llm"),
                             "s.csv": _ratings("1,a,j,ca,0,llm")},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--ratings", "{tmp}/s.csv"],
     ["r.csv", "s.csv", "column 'rater'", "more than one file"]),
    ("agreement-same-file-twice", {"r.csv": _ratings("1,a,j,ca,1,llm")}, ["agreement", "{tmp}/r.csv", "{tmp}/r.csv"],
     ["r.csv", "column 'rater'", "more than one file"]),
    ("agreement-missing-file", {}, ["agreement", "{tmp}/none.jsonl"], ["none.jsonl", "file not found"]),
    ("agreement-outputs-without-ratings-columns", {"out.csv": GOOD_OUTPUTS + ",a,news,r,g\n"},
     ["agreement", "{tmp}/out.csv"], ["out.csv", "row 4", "column 'item_id'"]),
    ("overrides-not-sqlite", {"out.csv": GOOD_OUTPUTS, "store.sqlite": "this is not a database\n" * 100},
     ["metrics", "{tmp}/out.csv", "--overrides", "{tmp}/store.sqlite", "--no-ld"], ["store.sqlite"]),
    ("store-empty-file", {"out.csv": GOOD_OUTPUTS, "store.sqlite": b""},
     ["metrics", "{tmp}/out.csv", "--store", "{tmp}/store.sqlite", "--no-ld"], ["store.sqlite", "empty (0 bytes)"]),
    ("store-migrate-missing-source", {}, ["store", "migrate", "{tmp}/none.sqlite", "{tmp}/copy.sqlite"],
     ["none.sqlite", "no such store"]),
    ("store-migrate-onto-itself", {"s.sqlite": b""}, ["store", "migrate", "{tmp}/s.sqlite", "{tmp}/./s.sqlite"],
     ["the same store"]),
    ("store-migrate-damaged-source", {"s.sqlite": "this is not a database\n" * 100},
     ["store", "migrate", "{tmp}/s.sqlite", "{tmp}/copy.sqlite"], ["s.sqlite", "not an SQLite override store"]),
    ("store-migrate-bad-rename", {}, ["store", "migrate", "{tmp}/a.sqlite", "{tmp}/b.sqlite", "--rename", "x"],
     ["--rename", "OLD=NEW"]),
    ("store-info-missing", {}, ["store", "info", "{tmp}/none.sqlite"], ["none.sqlite", "no such store"]),
    # a random audit (issue 23)
    ("audit-unknown-judge", AUDITED, [*_DRAW, "--judge", "nobody", "--dimension", "ca", "--per-model", "1",
                                      "--seed", "0"], ["judge 'nobody' has no ratings", "raters are 'j'"]),
    ("audit-unknown-dimension", AUDITED, [*_DRAW, "--judge", "j", "--dimension", "e_gen", "--per-model", "1",
                                          "--seed", "0"], ["'j' did not rate dimension 'e_gen'", "it rated 'ca'"]),
    ("audit-larger-than-the-data", AUDITED, [*_DRAW, "--judge", "j", "--dimension", "ca", "--per-model", "3",
                                             "--seed", "0"], ["larger than the data", "model 'a' has 2 output(s)"]),
    ("audit-larger-than-a-task", AUDITED, [*_DRAW, "--judge", "j", "--dimension", "ca", "--per-model", "3",
                                           "--seed", "0", "--stratify-by-task"], ["model 'a' in task 'news'"]),
    ("audit-per-model-zero", AUDITED, [*_DRAW, "--judge", "j", "--dimension", "ca", "--per-model", "0", "--seed", "0"],
     ["--per-model", "at least 1"]),
    ("audit-seed-beyond-64-bits", AUDITED, [*_DRAW, "--judge", "j", "--dimension", "ca", "--per-model", "1",
                                            "--seed", str(2 ** 63)], ["--seed", "out of range"]),
    ("audit-show-damaged-design", {**AUDITED, "store.sqlite": DAMAGED_DESIGN},
     ["audit", "show", "{tmp}/out.csv", "--store", "{tmp}/store.sqlite"],
     ["store.sqlite", "damaged audit design", "does not match its rows"]),
    ("metrics-store-damaged-design", {**AUDITED, "store.sqlite": DAMAGED_DESIGN},
     ["metrics", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--store", "{tmp}/store.sqlite", "--no-ld"],
     ["store.sqlite", "damaged audit design", "does not match its rows"]),
    ("audit-estimate-damaged-design", {**AUDITED, "store.sqlite": DAMAGED_DESIGN},
     ["audit", "estimate", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--store", "{tmp}/store.sqlite"],
     ["store.sqlite", "damaged audit design"]),
    ("audit-unknown-digest", {**AUDITED, "store.sqlite": DAMAGED_DESIGN},
     ["audit", "estimate", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--store", "{tmp}/store.sqlite", "--audit",
      "ffffffff"], ["no audit design 'ffffffff' in data set 'out.csv'"]),
    ("audit-list-missing-store", AUDITED, ["audit", "list", "{tmp}/out.csv", "--store", "{tmp}/none.sqlite"],
     ["none.sqlite", "no such store"]),
    ("audit-estimate-without-design", {**AUDITED, "store.sqlite": b""},
     ["audit", "budget", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--store", "{tmp}/store.sqlite"],
     ["store.sqlite", "empty (0 bytes)"]),
    ("metrics-audit-without-store", AUDITED, ["metrics", "{tmp}/out.csv", "--audit", "abcdef"],
     ["--audit needs --store"]),
    ("metrics-resamples-million", AUDITED, ["metrics", "{tmp}/out.csv", "--resamples", "1000000"],
     ["--resamples", "100,000"]),
    ("store-unparseable-url", {}, ["store", "info", "postgresql://ann:pw99@[bad"], ["postgresql://ann:***@[bad"]),

    ("fragility-no-ratings", {"out.csv": GOOD_OUTPUTS}, ["fragility", "{tmp}/out.csv"],
     ["out.csv", "has no judge ratings"]),
    ("fragility-top-zero", {"out.csv": GOOD_OUTPUTS}, ["fragility", "{tmp}/out.csv", "--top", "0"],
     ["--top", "out of range"]),
    ("fragility-metric-ld", {"out.csv": GOOD_OUTPUTS}, ["fragility", "{tmp}/out.csv", "--metric", "LD"],
     ["--metric", "invalid choice"]),
    ("bootstrap-billion", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["agreement", "{tmp}/r.csv", "--bootstrap", "1000000000"], ["--bootstrap", "100,000"]),
    ("bootstrap-negative", {"r.csv": _ratings("1,a,j,ca,1,llm")}, ["agreement", "{tmp}/r.csv", "--bootstrap", "-5"],
     ["--bootstrap", "out of range"]),
    ("bootstrap-underscore", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["agreement", "{tmp}/r.csv", "--bootstrap", "1_000"], ["--bootstrap", "not a whole number"]),
    ("bootstrap-arabic-digits", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["agreement", "{tmp}/r.csv", "--bootstrap", "\u0661\u0660"], ["--bootstrap", "not a whole number"]),
    ("seed-negative", {"r.csv": _ratings("1,a,j,ca,1,llm")}, ["agreement", "{tmp}/r.csv", "--seed", "-1"],
     ["--seed", "out of range"]),
    ("panels-bootstrap-billion", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["panels", "{tmp}/r.csv", "--bootstrap", "1000000000"], ["--bootstrap", "100,000"]),
    ("panels-bad-panel", {"r.csv": _ratings("1,a,j,ca,1,llm")}, ["panels", "{tmp}/r.csv", "--panel", "experts"],
     ["--panel", "NAME=rater1,rater2"]),
    ("stability-resamples-billion", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["stability", "{tmp}/r.csv", "--dimension", "ca", "--resamples", "1000000000"], ["--resamples", "100,000"]),
    ("stability-resamples-zero", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["stability", "{tmp}/r.csv", "--dimension", "ca", "--resamples", "0"], ["--resamples", "out of range"]),
    ("stability-sizes-underscore", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["stability", "{tmp}/r.csv", "--dimension", "ca", "--sizes", "1_000"], ["--sizes", "'1_000'"]),
    ("stability-sizes-full-width", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["stability", "{tmp}/r.csv", "--dimension", "ca", "--sizes", "\uff11\uff10"], ["--sizes", "not a whole number"]),
    ("stability-sizes-zero", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["stability", "{tmp}/r.csv", "--dimension", "ca", "--sizes", "0"], ["--sizes", "'0'"]),
    ("stability-sizes-fraction", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["stability", "{tmp}/r.csv", "--dimension", "ca", "--sizes", "2.5"], ["--sizes", "'2.5'"]),
    ("stability-sizes-empty", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["stability", "{tmp}/r.csv", "--dimension", "ca", "--sizes", " , "], ["--sizes", "at least one size"]),
    ("stability-metric-on-ratings", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["stability", "{tmp}/r.csv", "--metric", "CA"], ["r.csv", "--metric needs an outputs file"]),
    ("per-item-duplicate", {"p.csv": "item_id,m1,m2\n1,0.5,0.2\n1,0.1,0.3\n"},
     ["stability", "{tmp}/p.csv", "--per-item"], ["p.csv", "row 3", "column 'item_id'", "duplicate item"]),
    ("per-item-not-number", {"p.csv": "item_id,m1,m2\n1,0.5,0.2\n2,high,0.3\n"},
     ["stability", "{tmp}/p.csv", "--per-item"], ["p.csv", "row 3", "column 'm1'", "not a number"]),
    ("per-item-one-column", {"p.csv": "item_id\n1\n"}, ["stability", "{tmp}/p.csv", "--per-item"],
     ["p.csv", "at least one group column"]),
    ("judge-bad-out-suffix", {"out.csv": GOOD_OUTPUTS}, ["judge", "{tmp}/out.csv", "--out", "{tmp}/r.txt"],
     ["r.txt", "unsupported ratings file type"]),
    ("judge-unknown-judge", {"out.csv": GOOD_OUTPUTS},
     ["judge", "{tmp}/out.csv", "--out", "{tmp}/r.csv", "--judge", "nope", "--quiet"], ["unknown judge 'nope'"]),
    ("judge-unknown-protocol", {"out.csv": GOOD_OUTPUTS},
     ["judge", "{tmp}/out.csv", "--out", "{tmp}/r.csv", "--protocols", "vibes", "--quiet"], ["unknown protocol"]),
    ("judge-missing-config", {"out.csv": GOOD_OUTPUTS},
     ["judge", "{tmp}/out.csv", "--out", "{tmp}/r.csv", "--config", "{tmp}/none.toml", "--judge", "x"],
     ["none.toml", "config file not found"]),
    ("judge-without-out", {"out.csv": GOOD_OUTPUTS}, ["judge", "{tmp}/out.csv"], ["--out RATINGS"]),
    ("judge-out-is-folder", {"out.csv": GOOD_OUTPUTS, "r.csv/keep": "x"},
     ["judge", "{tmp}/out.csv", "--out", "{tmp}/r.csv", "--quiet", "--no-cache"], ["r.csv"]),
    ("distancing-missing-file", {}, ["distancing", "{tmp}/nope.txt", "--no-cache"], ["nope.txt", "no such file"]),
    ("distancing-not-utf8", {"t.txt": b"fine\ncaf\xe9\n"}, ["distancing", "{tmp}/t.txt", "--no-cache"],
     ["t.txt:2:", "not valid UTF-8"]),
    ("distancing-folder", {"d/keep": "x"}, ["distancing", "{tmp}/d", "--no-cache"], ["is a directory"]),
    ("distancing-batch-size-zero", {"t.txt": "fine\n"}, ["distancing", "{tmp}/t.txt", "--batch-size", "0"],
     ["--batch-size", "out of range"]),
    ("import-missing-directory", {}, ["import", "kumar2025", "{tmp}/nowhere", "--out", "{tmp}/o"],
     ["nowhere", "not found"]),
    ("slices-unknown-dimension", JUDGED,
     ["slices", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--dimension", "e_gen"],
     ["no ratings of dimension 'e_gen'"]),
    ("slices-unknown-judge", JUDGED,
     ["slices", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--dimension", "ca", "--judge", "zz"],
     ["--judge 'zz'", "did not rate"]),
    ("slices-unknown-feature", JUDGED,
     ["slices", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--dimension", "ca", "--feature", "vibes"],
     ["--feature 'vibes'", "not a feature"]),
    ("slices-bad-cut", JUDGED,
     ["slices", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--dimension", "ca", "--cut", "length_gen=big"],
     ["--cut", "FEATURE=T1,T2"]),
    ("slices-cut-categorical", JUDGED,
     ["slices", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--dimension", "ca", "--feature", "task", "--cut",
      "task=1"], ["--cut 'task'", "categorical"]),
    ("slices-override-without-store", JUDGED,
     ["slices", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--dimension", "ca", "--outcome", "override"],
     ["--overrides"]),
    ("slices-disagree-at-negative", JUDGED,
     ["slices", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--dimension", "ca", "--feature", "task",
      "--disagree-at", "-1"], ["threshold must be a positive number"]),
    ("slices-no-human", {"out.csv": GOOD_OUTPUTS, "r.csv": _ratings("1,a,j,ca,1,llm", "2,a,j,ca,0,llm")},
     ["slices", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--dimension", "ca", "--feature", "task"],
     ["nothing to slice", "human"]),
    ("slices-permutations-billion", JUDGED,
     ["slices", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--dimension", "ca", "--permutations", "1000000000"],
     ["--permutations", "100,000"]),
    ("slices-overrides-not-sqlite", {**JUDGED, "store.sqlite": "this is not a database\n" * 100},
     ["slices", "{tmp}/out.csv", "--ratings", "{tmp}/r.csv", "--dimension", "ca", "--overrides",
      "{tmp}/store.sqlite"], ["store.sqlite"]),
    ("calibration-no-human", {"r.csv": _ratings("1,a,j,ca,1,llm", "2,a,j,ca,0,llm")},
     ["calibration", "{tmp}/r.csv", "--dimension", "ca"], ["no output of 'ca'", "human"]),
    ("calibration-empty-human-kinds", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["calibration", "{tmp}/r.csv", "--dimension", "ca", "--human-kinds", " , "], ["--human-kinds"]),
    ("calibration-bootstrap-billion", {"r.csv": _ratings("1,a,j,ca,1,llm")},
     ["calibration", "{tmp}/r.csv", "--dimension", "ca", "--bootstrap", "1000000000"], ["--bootstrap", "100,000"]),
    ("per-item-boolean", {"p.jsonl": _jsonl({"item_id": "1", "m1": 0.5, "m2": 0.2},
                                            {"item_id": "2", "m1": True, "m2": 0.3})},
     ["stability", "{tmp}/p.jsonl", "--per-item"], ["p.jsonl", "row 2", "column 'm1'", "not a number: True"]),
    # judge configs (issue 27): non-finite and absurd numbers and repeated keys name the file and the key
    *((f"judge-config-{name}", {"out.csv": GOOD_OUTPUTS, "j.toml": JUDGE + setting + "\n"},
       ["judge", "{tmp}/out.csv", "--out", "{tmp}/r.csv", "--config", "{tmp}/j.toml", "--judge", "a", "--quiet"],
       ["j.toml", *fragments]) for name, setting, fragments in (
        ("nan-temperature", "temperature = nan", ["temperature must be a finite number from 0 to 2", "nan"]),
        ("temperature-five", "temperature = 5", ["temperature must be a finite number from 0 to 2"]),
        ("infinite-timeout", "timeout = inf", ["timeout must be a finite number", "inf"]),
        ("zero-timeout", "timeout = 0", ["timeout must be a finite number from 0.001"]),
        ("float-concurrency", "concurrency = 1e17", ["concurrency must be int, got float"]),
        ("huge-concurrency", "concurrency = 100000000000000000", ["concurrency must be a finite number from 1 to "
                                                                   "1,024"]),
        ("huge-retries", "max_retries = 1000000", ["max_retries must be a finite number from 0 to 100"]),
        ("infinite-backoff", "backoff_max = inf", ["backoff_max must be a finite number"]),
        ("huge-max-tokens", "max_tokens = 10000000000", ["max_tokens must be a finite number"]),
    )),
    ("judge-config-json-duplicate-key", {"out.csv": GOOD_OUTPUTS, "j.json": '{"judges": {"a": {"base_url": '
                                         '"https://x/v1", "model": "m", "model": "n"}}}'},
     ["judge", "{tmp}/out.csv", "--out", "{tmp}/r.csv", "--config", "{tmp}/j.json", "--judge", "a", "--quiet"],
     ["j.json", "duplicate key 'model'"]),
    ("judge-config-json-nan-temperature", {"out.csv": GOOD_OUTPUTS, "j.json": '{"judges": {"a": {"base_url": '
                                           '"https://x/v1", "model": "m", "temperature": NaN}}}'},
     ["judge", "{tmp}/out.csv", "--out", "{tmp}/r.csv", "--config", "{tmp}/j.json", "--judge", "a", "--quiet"],
     ["j.json", "temperature must be a finite number"]),
    ("judge-config-zero-width-name", {"out.csv": GOOD_OUTPUTS,
                                      "j.toml": JUDGE.replace("[judges.a]", '[judges."a\u200b"]')},
     ["judge", "{tmp}/out.csv", "--out", "{tmp}/r.csv", "--config", "{tmp}/j.toml", "--judge", "a", "--quiet"],
     ["j.toml", "U+200B"]),
    # an imported ledger's keys and values are checked as a ratings file's (issue 27)
    *((f"ledger-{name}", {file: content}, ["store", "import", f"{{tmp}}/{file}", "--store", "{tmp}/s.sqlite"],
       [file, *fragments]) for name, file, content, fragments in (
        ("underscore-number", "l.csv", LEDGER.replace(",1,alice", ",1_0,alice"), ["row 2", "column 'value'",
                                                                                  "not a number: '1_0'"]),
        ("rounds-onto-a-label", "l.csv", LEDGER.replace(",1,alice", ",0.99999999999999999,alice"),
         ["row 2", "column 'value'", "a float would round it to 1"]),
        ("zero-width-item", "l.csv", LEDGER.replace("\n1,a,", "\n1\u200b,a,"), ["row 2", "column 'item_id'",
                                                                                  "U+200B"]),
        ("near-miss-dimension", "l.csv", LEDGER.replace(",ca,", ",CA,"), ["row 2", "column 'dimension'",
                                                                          "the paper's 'ca'"]),
        ("json-boolean", "l.jsonl", '{"item_id": "1", "model": "a", "rater": "j", "dimension": "ca", "value": true, '
                                    '"annotator": "alice"}\n',
         ["row 1", "column 'value'", "a boolean is not a number"]),
    )),
    # the team store (issue 24): the roles file, a write the role does not allow, a bad assignment design
    ("roles-malformed", {"l.csv": LEDGER, "roles.toml": "[roles\nalice = 'annotator'\n"},
     ["store", "import", "{tmp}/l.csv", "--store", "{tmp}/s.sqlite", "--as", "alice", "--roles", "{tmp}/roles.toml"],
     ["roles.toml", "not valid TOML", "line 1"]),
    ("roles-unknown-role", {"l.csv": LEDGER, "roles.toml": '[roles]\n"alice" = "annotator"\n"dave" = "admin"\n'},
     ["store", "import", "{tmp}/l.csv", "--store", "{tmp}/s.sqlite", "--as", "alice", "--roles", "{tmp}/roles.toml"],
     ["roles.toml", "row 3", "column 'roles.dave'", "unknown role 'admin'"]),
    ("roles-unknown-setting", {"l.csv": LEDGER, "roles.toml": 'admins = ["x"]\n[roles]\n'},
     ["store", "import", "{tmp}/l.csv", "--store", "{tmp}/s.sqlite", "--as", "alice", "--roles", "{tmp}/roles.toml"],
     ["roles.toml", "row 1", "column 'admins'", "unknown setting"]),
    ("roles-missing-file", {"l.csv": LEDGER},
     ["store", "import", "{tmp}/l.csv", "--store", "{tmp}/s.sqlite", "--as", "alice", "--roles", "{tmp}/none.toml"],
     ["none.toml", "roles file not found"]),
    ("roles-viewer-imports", {"l.csv": LEDGER, "roles.toml": ROLES},
     ["store", "import", "{tmp}/l.csv", "--store", "{tmp}/s.sqlite", "--as", "carol", "--roles", "{tmp}/roles.toml"],
     ["carol is a viewer (", "roles.toml)", "may write decisions", "nothing was written"]),
    ("roles-viewer-named-in-the-file", {"l.csv": LEDGER, "roles.toml": ROLES},
     ["store", "import", "{tmp}/l.csv", "--store", "{tmp}/s.sqlite", "--as", "bob", "--roles", "{tmp}/roles.toml",
      "--annotator", "carol", "--dataset", "ds"], ["carol is a viewer", "nothing was written"]),
    ("roles-annotator-imports-adjudications", {"l.csv": LEDGER_ADJUDICATED, "roles.toml": ROLES},
     ["store", "import", "{tmp}/l.csv", "--store", "{tmp}/s.sqlite", "--as", "alice", "--roles", "{tmp}/roles.toml"],
     ["alice is an annotator", "only an adjudicator", "may adjudicate"]),
    ("roles-no-identity", {"l.csv": LEDGER, "roles.toml": ROLES},
     ["store", "import", "{tmp}/l.csv", "--store", "{tmp}/s.sqlite", "--roles", "{tmp}/roles.toml"],
     ["no identity given", "--as"]),
    ("roles-annotator-assigns", {"out.csv": GOOD_OUTPUTS, "roles.toml": ROLES},
     ["store", "assign", "{tmp}/out.csv", "--annotators", "alice,bob", "--as", "alice", "--roles",
      "{tmp}/roles.toml"], ["alice is an annotator", "may assign outputs"]),
    ("assign-overlap-above-one", {"out.csv": GOOD_OUTPUTS},
     ["store", "assign", "{tmp}/out.csv", "--annotators", "alice,bob", "--overlap", "1.5"], ["overlap", "[0, 1]"]),
    ("assign-k-above-annotators", {"out.csv": GOOD_OUTPUTS},
     ["store", "assign", "{tmp}/out.csv", "--annotators", "alice,bob", "--k", "3"], ["k (annotators per"]),
    ("store-export-bad-suffix", {"s.sqlite": b""}, ["store", "export", "{tmp}/s.sqlite", "{tmp}/l.txt"],
     ["l.txt", ".jsonl or .csv"]),
    ("store-info-keyword-dsn-unreachable", {},
     ["store", "info", "host=127.0.0.1 port=1 user=ann password=KwPass-55 connect_timeout=2"],
     ["password=***", "cannot be reached"]),
    ("usage-bad-format", {}, ["metrics", "x.csv", "--format", "yaml"], ["invalid choice"]),
    ("usage-unknown-command", {}, ["frobnicate"], ["invalid choice"]),
    ("usage-ansi-in-choice", {}, ["metrics", "x.csv", "--format", "\x1b[31myaml"], ["\\x1b[31myaml"]),
    ("usage-no-command", {}, [], ["required"]),
    ("usage-stability-no-mode", {}, ["stability", "x.csv"], ["one of the arguments"]),
    # issue 41 items 6 and 7: store locations, endpoints and annotator names that passed before
    ("store-misspelt-scheme-with-password", {"l.csv": LEDGER},
     ["store", "import", "{tmp}/l.csv", "--store", "postgressql://ann:PW-5521@db.lab/team", "--dataset", "ds"],
     ["postgressql://***", "the closest is 'postgresql'", "nothing was created or written"]),
    ("store-url-password-with-slash", {"l.csv": LEDGER},
     ["store", "import", "{tmp}/l.csv", "--store", "postgresql://ann:PW/5521@db.lab/team", "--dataset", "ds"],
     ["postgresql://***", "%2F"]),
    ("store-keyword-dsn-misspelt-first-key", {}, ["store", "info", "hots=db.lab password=KW-5521"],
     ["1st key is not a libpq keyword", "password=***"]),
    ("store-credentials-without-scheme", {"l.csv": LEDGER},
     ["store", "import", "{tmp}/l.csv", "--store", "ann:PW-5521@db.lab/team", "--dataset", "ds"],
     ["without a scheme"]),
    ("judge-endpoint-httpx-scheme", {"out.csv": GOOD_OUTPUTS,
                                     "j.toml": "[judges.a]\nbase_url = 'httpx://127.0.0.1:9/v1'\nmodel = 'm'\n"},
     ["judge", "{tmp}/out.csv", "--out", "{tmp}/r.csv", "--config", "{tmp}/j.toml", "--judge", "a", "--quiet"],
     ["base_url must be an http(s) URL"]),
    ("judge-endpoint-without-host", {"out.csv": GOOD_OUTPUTS,
                                     "j.toml": "[judges.a]\nbase_url = 'http:/v1'\nmodel = 'm'\n"},
     ["judge", "{tmp}/out.csv", "--out", "{tmp}/r.csv", "--config", "{tmp}/j.toml", "--judge", "a", "--quiet"],
     ["with a host"]),
    ("assign-one-person-by-case", {"out.csv": GOOD_OUTPUTS},
     ["store", "assign", "{tmp}/out.csv", "--annotators", "alice,ALICE", "--store", "{tmp}/s.sqlite"],
     ["'ALICE' and 'alice' name one annotator"]),
    ("assign-one-person-by-width", {"out.csv": GOOD_OUTPUTS},
     ["store", "assign", "{tmp}/out.csv", "--annotators", "alice,\uff41lice", "--store", "{tmp}/s.sqlite"],
     ["name one annotator"]),
    ("assign-bidi-override-name", {"out.csv": GOOD_OUTPUTS},
     ["store", "assign", "{tmp}/out.csv", "--annotators", "alice,\u202elorac", "--store", "{tmp}/s.sqlite"],
     ["U+202E", "another name"]),
]

def _cases() -> list[tuple[str, dict[str, str | bytes], list[str], list[str]]]:
    cases = []
    for name, files, fragments in OUTPUT_CASES:
        target = next(iter(files), "out.csv").split("/")[0]
        for command, args in OUTPUT_COMMANDS.items():
            cases.append((f"{command}-{name}", files, [a.replace("{f}", f"{{tmp}}/{target}") for a in args],
                          fragments))
    for name, files, fragments in RATING_CASES:
        target = next(iter(files))
        for command, args in RATING_COMMANDS.items():
            cases.append((f"{command}-{name}", {"out.csv": GOOD_OUTPUTS, **files},
                          [a.replace("{f}", f"{{tmp}}/{target}") for a in args], fragments))
    cases.extend(OTHER_CASES)
    return cases


CATALOGUE = _cases()


def _write_files(tmp: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")


def _run_in_process(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exc:  # argparse usage errors exit from inside parse_args
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _check(code: int, out: str, err: str, fragments: list[str]) -> None:
    assert code == 2, err
    assert out == ""
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and err.endswith("\n"), err
    assert "Traceback" not in err and "\r" not in err and "\x1b" not in err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture(autouse=True, scope="module")
def _earlier_tests_collected():
    # Collect what earlier tests of this worker left behind (an idle PostgreSQL connection of a store test, say)
    # now, quietly: collected during a case, its ResourceWarning would fail the case under filterwarnings("error").
    # Then freeze the heap: each case's collection scans only what the module made since (a whole worker's heap
    # cost 0.1-0.3 s per collection, most of this file's time in the suite).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    with warnings.catch_warnings():  # what an earlier case of this module left, quietly (as above)
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    monkeypatch.delenv("EMPATHY_JUDGES_CONFIG", raising=False)
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # no ./judges.toml from the repository


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize(("files", "args", "fragments"), [c[1:] for c in CATALOGUE], ids=[c[0] for c in CATALOGUE])
def test_bad_input_gets_one_clear_line(tmp_path, capsys, files, args, fragments):
    _write_files(tmp_path, files)
    code, out, err = _run_in_process([a.format(tmp=tmp_path) for a in args], capsys)
    _check(code, out, err, fragments)


def test_catalogue_is_large_enough():
    assert len(CATALOGUE) >= 150
    assert len({case[0] for case in CATALOGUE}) == len(CATALOGUE)


def test_readme_quotes_the_catalogue_size():
    """The README's bad-input contract states how many cases back it: the number is this catalogue's."""
    import re

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"`tests/test_bad_inputs.py`\s+holds\s+the\s+catalogue\s+\((\d[\d,]*)\s+cases\)", readme)
    assert quoted is not None
    assert int(quoted.group(1).replace(",", "")) == len(CATALOGUE)


# A sample through the real entry point: python -m empathy in a fresh interpreter, warnings on.
SUBPROCESS_SAMPLE = ("metrics-missing-file", "metrics-not-utf8-deep", "judge-jsonl-deep-nesting",
                     "standard-short-csv-row", "agreement-ratings-jsonl-huge-integer", "metrics-carriage-return-in-id",
                     "bootstrap-billion", "usage-bad-format", "distancing-not-utf8", "stability-sizes-underscore")


@pytest.mark.parametrize("name", SUBPROCESS_SAMPLE)
def test_sample_through_python_m_empathy(tmp_path, name):
    _, files, args, fragments = next(c for c in CATALOGUE if c[0] == name)
    _write_files(tmp_path, files)
    result = subprocess.run([sys.executable, "-W", "default", "-m", "empathy", *[a.format(tmp=tmp_path) for a in args]],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path,
                            env={**__import__("os").environ, "EMPATHY_CACHE_DIR": str(tmp_path / "cache")})
    _check(result.returncode, result.stdout, result.stderr, fragments)


def test_piping_to_head_exits_quietly(tmp_path):
    """A reader that stops early (``| head -1``) ends the command without a "Broken pipe" message."""
    ratings = tmp_path / "r.csv"
    # 40 raters: 780 pairs, about 0.9 MB of JSON, far more than a pipe buffer holds
    ratings.write_text("item_id,model,rater,dimension,value\n" + "".join(
        f"{i},m,r{r},ca,{(i * 7 + r * 3) % 5 % 2}\n" for r in range(40) for i in range(20)))
    process = subprocess.Popen([sys.executable, "-m", "empathy", "agreement", str(ratings), "--format", "json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline() == b"[\n"
    process.stdout.close()  # as head does after its first line
    err = process.stderr.read().decode()
    code = process.wait(timeout=300)
    assert err == ""
    assert code == 141  # 128 + SIGPIPE, as a shell reports a process that a closed pipe ended


def test_usage_error_is_one_line():
    result = subprocess.run([sys.executable, "-m", "empathy", "metrics", "x.csv", "--format", "yaml"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "invalid choice" in result.stderr


KUMAR = shared_dataset("kumar2025-empathic-communication")


@pytest.mark.skipif(KUMAR is None, reason="shared/datasets/kumar2025-empathic-communication absent")
def test_header_only_kumar_ratings_file_is_a_clear_error(tmp_path, capsys):
    target = tmp_path / "kumar"
    shutil.copytree(KUMAR, target, ignore=shutil.ignore_patterns("combined_*", "perceived_empathy_self_*"))
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    ratings = target / "annotations" / "lend_an_ear" / "claude_ratings.csv"
    ratings.write_text(ratings.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    code, out, err = _run_in_process(["import", "kumar2025", str(target), "--out", str(tmp_path / "o")], capsys)
    _check(code, out, err, ["claude_ratings.csv", "no rating rows"])


# 1,200,000 characters: above spaCy's default parser limit (1,000,000), cut into 24 pieces at word boundaries by
# the analyser. In 1,200 words of 999 letters: the same characters as 240,000 short words, a 200th of the tokens to
# parse (the short words took a minute per test on a slow host). Many tokens, 5 MB, and their time and memory are
# measured in bench/bench_long_text.py (a benchmark, not a timed test).
LONG_TEXT = ("w" * 999 + " ") * 1_200


@pytest.mark.parametrize(("files", "args", "where"), [
    ({"out.csv": "item_id,model,reference,generation\n1,a,short,fine\n2,a,short," + LONG_TEXT + "\n"},
     ["metrics", "{tmp}/out.csv", "--format", "json"], ["out.csv", "row 3", "column 'generation'"]),
    ({"t.txt": "fine\n" + LONG_TEXT + "\n"}, ["distancing", "{tmp}/t.txt", "--no-cache"], ["t.txt:2:"]),
], ids=["metrics", "distancing"])
def test_a_text_over_the_parser_limit_is_analysed_or_located(tmp_path, capsys, files, args, where):
    """A text longer than the parser takes either goes through (when the analyser splits it) or stops the
    run with one line naming its file, row and column, never a position in an internal list."""
    _write_files(tmp_path, files)
    code, out, err = _run_in_process([a.format(tmp=tmp_path) for a in args], capsys)
    if code == 0:
        assert out and err == ""
    else:
        _check(code, out, err, [*where, "1,200,000 characters" if args[0] == "metrics" else "1200000 characters"])


def test_a_viewer_writing_through_the_library_is_refused_and_nothing_is_written(tmp_path):
    from empathy.labels.backends import open_store
    from empathy.labels.roles import AccessDenied, parse_roles
    from empathy.labels.transfer import import_ledger

    store = open_store(tmp_path / "s.sqlite", roles=parse_roles(ROLES, source="roles.toml"))
    with pytest.raises(PermissionError) as caught:
        store.set_override("ds", "1", "a", "j", "ca", 1, annotator="carol")
    assert isinstance(caught.value, AccessDenied)
    assert str(caught.value) == ("carol is a viewer (roles.toml): only an annotator or above may write decisions; "
                                 "nothing was written")
    (tmp_path / "l.csv").write_text(LEDGER.replace("alice", "carol"), encoding="utf-8")
    with pytest.raises(AccessDenied, match="carol is a viewer"):
        import_ledger(store, tmp_path / "l.csv", dataset_id="ds")
    assert store.decisions().empty and store.audit().empty
