"""Files that used to stop a reader with a traceback: one clear error in the command line and on the Data page.

A CSV header cell over the ``csv`` module's 131,072-character field limit (outputs and ledger), a ledger cell that
long (data: imported whole), Parquet pandas metadata naming a missing index column or of the wrong shape, and a
JSONL ledger holding a lone surrogate. The command line gets exit code 2 and one stderr line naming the file (and
row and column where there is one); the app's upload and ledger import an error box, never an exception.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import app_texts as _texts

from empathy.cli import main
from empathy.labels.sqlite import OverrideStore

LONG = "x" * 140_000  # over the csv module's 131,072-character field limit
OUTPUTS = "item_id,model,reference,generation\n1,a,r,g\n"
LEDGER_HEADER = "item_id,model,rater,dimension,value,annotator"


def _table() -> pa.Table:
    return pa.table({"item_id": ["1"], "model": ["a"], "reference": ["r"], "generation": ["g"]})


def _with_pandas_metadata(meta: object) -> bytes:
    """A valid outputs table whose schema's ``pandas`` key is ``meta`` (JSON-encoded)."""
    sink = pa.BufferOutputStream()
    pq.write_table(_table().replace_schema_metadata({b"pandas": json.dumps(meta).encode()}), sink)
    return sink.getvalue().to_pybytes()


MISSING_INDEX = _with_pandas_metadata({
    "index_columns": ["__index_level_0__"], "column_indexes": [], "pandas_version": "2.0",
    "columns": [{"name": c, "field_name": c, "pandas_type": "unicode", "numpy_type": "object", "metadata": None}
                for c in ("item_id", "model", "reference", "generation")]})
WRONG_SHAPE = _with_pandas_metadata({"index_columns": 5, "columns": "x"})
NO_INDEX_KEY = _with_pandas_metadata({"columns": [{"name": "item_id", "metadata": 3}], "column_indexes": [{"x": 1}]})
SURROGATE_LEDGER = json.dumps({"item_id": "1", "model": "a", "rater": "j", "dimension": "ca", "value": 1,
                               "annotator": "alice", "reason": "cut \ud800 here"}) + "\n"

# (file name, content, fragments of the one stderr line / of the app's error)
OUTPUT_FILES = [
    ("long_header.csv", f"item_id,model,reference,generation,{LONG}\n1,a,r,g,v\n",
     ["long_header.csv", "row 1", "column '#5'", "140,000 characters"]),
    ("missing_index.parquet", MISSING_INDEX,
     ["missing_index.parquet", "column '__index_level_0__'", "names the index column"]),
    ("wrong_shape.parquet", WRONG_SHAPE, ["wrong_shape.parquet", "'index_columns' of type int, not a list"]),
    ("no_index_key.parquet", NO_INDEX_KEY, ["no_index_key.parquet", "pandas metadata", "cannot be applied"]),
]
LEDGER_FILES = [
    ("long_header.csv", f"{LEDGER_HEADER},{LONG}\n1,a,j,ca,1,alice,x\n",
     ["long_header.csv", "row 1", "column '#7'", "140,000 characters"]),
    ("surrogate.jsonl", SURROGATE_LEDGER, ["surrogate.jsonl", "row 1", "column 'reason'", "lone surrogate \\ud800"]),
]


def _write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", errors="surrogatepass", newline="")
    return path


def _one_line(code: int, err: str, fragments: list[str]) -> None:
    assert code == 2, err
    lines = err.rstrip("\n").split("\n")
    assert len(lines) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0][:300])


@pytest.mark.parametrize(("name", "content", "fragments"), OUTPUT_FILES, ids=[c[0] for c in OUTPUT_FILES])
def test_an_outputs_file_is_one_clear_line(tmp_path, capsys, monkeypatch, name, content, fragments):
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    code = main(["metrics", str(_write(tmp_path / name, content)), "--no-ld", "--resamples", "0"])
    _one_line(code, capsys.readouterr().err, fragments)


@pytest.mark.parametrize(("name", "content", "fragments"), LEDGER_FILES, ids=[c[0] for c in LEDGER_FILES])
def test_a_ledger_is_one_clear_line_and_nothing_is_written(tmp_path, capsys, name, content, fragments):
    store = tmp_path / "s.sqlite"
    code = main(["store", "import", str(_write(tmp_path / name, content)), "--store", str(store), "--dataset", "ds"])
    _one_line(code, capsys.readouterr().err, fragments)
    assert not store.exists() or OverrideStore(store).decisions("ds").empty


def test_a_ledger_cell_longer_than_the_csv_limit_is_imported_whole(tmp_path, capsys):
    ledger = _write(tmp_path / "l.csv", f"{LEDGER_HEADER},text_hash,reason\n1,a,j,ca,1,alice,0123456789abcdef,{LONG}\n")
    assert main(["store", "import", str(ledger), "--store", str(tmp_path / "s.sqlite"), "--dataset", "ds"]) == 0
    audit = OverrideStore(tmp_path / "s.sqlite").audit("ds")
    assert audit["reason"].tolist() == [LONG]


# ------------------------------------------------------------------------------- the app: upload, ledger import

class _Uploaded:
    """What ``st.file_uploader`` returns: a name and the bytes."""

    def __init__(self, name: str, content: str | bytes) -> None:
        self.name = name
        self._data = content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass")

    def getvalue(self) -> bytes:
        return self._data


def _uploader(files: dict[str, _Uploaded]):
    """A stand-in for ``st.file_uploader`` holding ``files`` by widget key (the browser's part of an upload)."""

    def file_uploader(label: str, *args: object, key: str | None = None, accept_multiple_files: bool = False,
                      **kwargs: object) -> object:
        chosen = files.get(str(key))
        if accept_multiple_files:
            return [] if chosen is None else [chosen]
        return chosen

    return file_uploader


@pytest.fixture()
def app(tmp_path, monkeypatch):
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EMPATHY_STORE", str(tmp_path / "overrides.sqlite"))
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=240)
    at.session_state["annotator"] = "tester"
    return at.run()


@pytest.mark.parametrize(("name", "content", "fragments"), OUTPUT_FILES, ids=[c[0] for c in OUTPUT_FILES])
def test_an_upload_is_an_error_box_not_an_exception(app, monkeypatch, name, content, fragments):
    import streamlit

    monkeypatch.setattr(streamlit, "file_uploader", _uploader({"data_upload_outputs": _Uploaded(name, content)}))
    app.switch_page("app_pages/1_Data.py").run()
    app.radio(key="data_source_kind").set_value("upload").run()
    app.button(key="data_load_upload").click().run()
    assert not app.exception, [e.value for e in app.exception]
    errors = [e for e in _texts(app.error) if "Not loaded." in e]
    assert len(errors) == 1, _texts(app.error)
    for fragment in fragments:
        assert fragment in errors[0], (fragment, errors[0][:300])


@pytest.mark.parametrize(("name", "content", "fragments"), LEDGER_FILES, ids=[c[0] for c in LEDGER_FILES])
def test_a_ledger_import_is_an_error_box_not_an_exception(app, monkeypatch, name, content, fragments):
    import streamlit

    monkeypatch.setattr(streamlit, "file_uploader", _uploader({"data_import_ledger": _Uploaded(name, content)}))
    app.switch_page("app_pages/1_Data.py").run()
    app.button(key="data_import_button").click().run()
    assert not app.exception, [e.value for e in app.exception]
    errors = [e for e in _texts(app.error) if "Not imported." in e]
    assert len(errors) == 1, _texts(app.error)
    assert name in errors[0] and ("lone surrogate" in errors[0] or "140,000 characters" in errors[0]), errors[0]


def test_the_wide_metadata_upload_reads_every_column(tmp_path):
    """A 2-row upload with many metadata columns loads, its columns kept (the app's reader is the library's)."""
    from empathy_app import loading

    width = 2_000
    header = ["item_id", "model", "reference", "generation", *(f"meta{k}" for k in range(width))]
    rows = [["1", "a", "r", "g", *map(str, range(width))], ["2", "a", "r2", "g2", *map(str, range(width))]]
    content = "\n".join(",".join(r) for r in [header, *rows]).encode()
    dataset = loading.load_from_uploads(("wide.csv", content), [])
    outputs = dataset.all_data.outputs if hasattr(dataset, "all_data") else dataset.outputs
    assert isinstance(outputs, pd.DataFrame) and len(outputs) == 2
    assert outputs["meta1999"].astype(str).tolist() == ["1999", "1999"]
