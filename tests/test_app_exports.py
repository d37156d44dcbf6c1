"""AppTest: Overview offers the results in the paper's Table 6 layout and Agreement the agreement table (their
contents are tested in tests/test_exports.py and downloaded in tests/test_browser_jobs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("EMPATHY_STORE", str(tmp_path / "overrides.sqlite"))


@pytest.mark.parametrize(("page", "key", "label", "file_suffix"), [
    ("app_pages/2_Overview.py", "overview_download_table6", "Download as the paper's Table 6 (CSV)", ".csv"),
    ("app_pages/2_Overview.py", "overview_download_intervals", "Download the values with intervals (CSV)", ".csv"),
    ("app_pages/5_Agreement.py", "agreement_download", "Download the agreement table (CSV)", ".csv"),
])
def test_the_export_is_offered(page, key, label, file_suffix):
    at = AppTest.from_file(APP, default_timeout=240).run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    buttons = [b for b in at.get("download_button") if b.proto.id.endswith(key)]
    assert len(buttons) == 1
    assert buttons[0].proto.label == label
    assert buttons[0].proto.url.endswith(file_suffix)
