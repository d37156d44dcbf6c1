"""AppTest of the newcomer fixes (issue 16): the Overview's narrow metrics table, "how to read this" captions,
the reference-standardised LD option, Workbench without tables of None, Inspect's denominators, the key help."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import open_page  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.paths import DEMO_DIR  # noqa: E402

TIMEOUT = 240

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _page(page: str, *, pooled: bool = False) -> AppTest:
    # pooled: one row per model over the demo's three tasks (the hand values below are pooled)
    return open_page(page, session={"pooled_tasks": True} if pooled else None, timeout=TIMEOUT)


def _captions(at: AppTest) -> str:
    return "\n".join(str(c.value) for c in at.caption)


def _frame(at: AppTest, first_column: str, contains: str) -> pd.DataFrame:
    for frame in at.dataframe:
        columns = list(frame.value.columns)
        if columns and columns[0] == first_column and any(contains in str(c) for c in columns):
            return frame.value
    raise AssertionError([list(f.value.columns) for f in at.dataframe])


def test_overview_table_has_values_only_and_counts_apart():
    at = _page("app_pages/2_Overview.py", pooled=True)
    pivot = _frame(at, "model", "SA (")
    # every metric visible, no n column beside them (they doubled the width and hid CA and LD at 1400 px)
    assert [c for c in pivot.columns if c != "model"] == [
        "SA (author)", "SA (lexicon)", "EGM (author)", "EGM (lexicon)", "CA (author)", "CA (lexicon)",
        "LD (spacy-distancing)"]
    counts = next(f.value for f in at.dataframe if list(f.value.columns) == list(pivot.columns)
                  and f.value["SA (author)"].dtype.kind in "iu")
    # the n's: 24 SA terms of fennel under the author (demo), 8 counseling outputs with a CA label
    fennel = counts.set_index("model").loc["fennel"]
    assert (fennel["SA (author)"], fennel["CA (author)"]) == (24, 8)
    assert any("How many outputs" in e.proto.label for e in at.expander)


def test_overview_how_to_read_captions():
    at = _page("app_pages/2_Overview.py")
    text = _captions(at)
    assert "**negative SA** is not an error" in text
    assert "LD ranks the pattern of distancing, not the number of highlights" in text
    for metric in ("SA", "EGM", "CA", "LD"):  # one caption under each chart
        assert sum(c.value.startswith(start) for c in at.caption for start in {
            "SA": ["Above 0: affect flattened"], "EGM": ["0: the same density"], "CA": ["The share of outputs"],
            "LD": ["The mean distance between"]}[metric]) == 1, metric


def test_overview_reference_standardised_ld():
    at = _page("app_pages/2_Overview.py", pooled=True)
    separate = _frame(at, "model", "LD (").set_index("model")["LD (spacy-distancing)"]
    signature = at.code[-1].value
    assert "ld-std" not in signature
    at.radio(key="overview_ld_standardization").set_value("reference").run()
    _ok(at)
    reference = _frame(at, "model", "LD (").set_index("model")["LD (spacy-distancing)"]
    assert "ld-std:reference" in at.code[-1].value
    # the distanced demo model larch: unremarkable pattern, by far the largest level shift
    assert reference.idxmax() == "larch" and reference["larch"] > 2 * reference.drop("larch").max()
    assert reference["larch"] > separate["larch"]
    # the other metrics do not depend on the LD reading
    before = _frame(at, "model", "SA (")
    assert before["SA (author)"].round(3).tolist() == [0.775, 0.043, 0.105, 0.638, 0.565]


def test_agreement_how_to_read_captions():
    at = _page("app_pages/5_Agreement.py")
    text = _captions(at)
    assert "Spearman's rho compares two judges' *rankings*" in text
    assert "**below 0 = they disagree more than chance would**" in text


def test_workbench_with_two_raters_shows_no_table_of_none():
    at = _page("app_pages/6_Workbench.py")
    for frame in at.dataframe:
        value = frame.value
        assert not any(value[c].isna().all() for c in value.columns if len(value)), list(value.columns)
    assert any("a rank correlation needs at least three" in str(i.value) for i in at.info)
    at.selectbox(key="wb_dimension").set_value("e_ref").run()
    _ok(at)
    # e_ref is continuous: the kappa columns are hidden and the reason named
    assert "Not shown, empty for every row: kappa, kappa_quadratic (Cohen's kappa needs whole-number labels)" \
        in _captions(at)
    pairs = _frame(at, "dimension", "spearman")
    assert "kappa" not in pairs.columns and pairs["spearman"].notna().all()


def test_inspect_denominator_counts_outputs_that_exist():
    ratings = pd.concat([pd.read_csv(DEMO_DIR / f) for f in ("ratings_author.csv", "ratings_lexicon.csv")])
    ca = ratings[ratings["dimension"] == "ca"]
    existing = len(ca[["item_id", "model"]].drop_duplicates())
    grid = ca["item_id"].nunique() * ca["model"].nunique()
    assert (existing, grid) == (41, 45)  # the demo: some models lack some counseling items
    at = _page("app_pages/3_Inspect.py")
    line = next(c for c in _captions(at).splitlines() if c.startswith("Judges disagree on ca"))
    assert line == "Judges disagree on ca for 10 of 41 outputs (24%)."


def _key_table(at: AppTest) -> str:
    tables = [m.value for m in at.markdown if m.value.startswith("| key | what it does |")]
    assert len(tables) == 1, [m.value[:40] for m in at.markdown]
    return tables[0]


def test_keys_help_on_inspect():
    at = _page("app_pages/3_Inspect.py")
    assert not [m for m in at.markdown if m.value.startswith("| key |")]  # closed until asked
    script = at.get("html")
    assert script and "__empathyKeysHelp" in script[0].proto.body  # "?" clicks the button
    at.button(key="keys_help").click().run()
    _ok(at)
    assert "| **← / →** | previous / next output of the filtered list |" in _key_table(at)


def test_keys_help_on_relabel_lists_its_shortcuts():
    at = _page("app_pages/4_Relabel.py")
    at.text_input(key="_w_annotator").input("ann")  # the sidebar's name box, a form: sent with its button
    at.button(key="identity_commit").click().run()
    _ok(at)
    at.button(key="keys_help").click().run()
    _ok(at)
    table = _key_table(at)
    for key in ("0 / 1", "0-9", "Enter", "S", "U"):
        assert f"| **{key}** |" in table


def test_keys_help_rejects_an_unknown_page():
    from empathy_app.frame import keys_help

    with pytest.raises(ValueError, match="no key list for page 'items'"):
        keys_help("items")
