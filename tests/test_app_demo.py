"""The demo the app ships (``data/``, written by ``scripts/make_demo.py``): big enough to practise on, and every
page of the app's navigation draws on it (issue 26 item 8).

The rest of the suite opens the first demo (``tests/demo_v1/data/``, ``tests/conftest.py``); these tests point
the app's demo at the shipped folder (``$EMPATHY_DEMO_DIR``, which ``empathy.paths.demo_dir`` reads on every
call) and read its files through ``SHIPPED_DEMO_DIR``.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import ROOT  # noqa: E402
from conftest import app_ok as _ok  # noqa: E402
from conftest import app_texts as _texts  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from empathy.exhibits import MECHANISMS, read_curated  # noqa: E402
from empathy.io import load_dataset  # noqa: E402
from empathy.paths import DEMO_DIR, SHIPPED_DEMO_DIR, demo_dir  # noqa: E402
from empathy_app import frame  # noqa: E402

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own
TIMEOUT = 300
#: Every page of the app's navigation after Home (``app.py`` builds ``st.navigation`` from the same list).
NAVIGATION = [path for path, _, _ in frame.navigation(ROOT)]


@pytest.fixture()
def shipped(monkeypatch: pytest.MonkeyPatch):
    """The app's demo is the shipped ``data/`` for this test."""
    monkeypatch.setenv("EMPATHY_DEMO_DIR", str(SHIPPED_DEMO_DIR))
    assert demo_dir() == SHIPPED_DEMO_DIR
    return SHIPPED_DEMO_DIR


@pytest.fixture(scope="module")
def dataset():
    return load_dataset(SHIPPED_DEMO_DIR / "outputs.csv", sorted(SHIPPED_DEMO_DIR.glob("ratings*.csv")))


def _app(annotator: str = "tester") -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.session_state["annotator"] = annotator
    return at.run()


# --------------------------------------------------------------------------------------------- the files
def test_the_suite_and_the_app_open_different_demos():
    """The suite's demo is the first one, and the app (no override) opens the shipped one."""
    assert DEMO_DIR != SHIPPED_DEMO_DIR and len(pd.read_csv(DEMO_DIR / "outputs.csv")) == 121
    assert SHIPPED_DEMO_DIR == ROOT / "data"


def test_at_least_300_outputs_with_ca_labels_across_the_three_tasks(dataset):
    outputs, ratings = dataset.outputs, dataset.ratings
    assert set(outputs["task"]) == {"news", "translation", "counseling"}
    assert outputs.groupby("task").size().min() >= 40  # every task has something to show
    labelled = ratings[(ratings["dimension"] == "ca") & ratings["value"].notna()]
    author = labelled[labelled["rater"] == "author"]
    assert len(author) >= 300 and set(author["value"]) == {0.0, 1.0}
    assert author["value"].mean() == pytest.approx(0.5, abs=0.1)  # a practice run meets both labels
    assert set(labelled["rater"]) == {"author", "lexicon"}  # two judges to compare, and to disagree
    both = labelled.pivot_table(index=["item_id", "model"], columns="rater", values="value").dropna()
    assert (both["author"] != both["lexicon"]).sum() >= 30  # enough disagreements to relabel


def test_every_mechanism_is_planted_and_named_in_demo_note(dataset):
    """Every row says what it illustrates, and each of the four mechanisms is named on dozens of rows (the
    generated rows by their tag, the hand-written ones in words)."""
    notes = dataset.outputs["demo_note"]
    assert (notes.str.strip() != "").all()
    named = {"SA": r"\bSA\b|sentiment attenuation", "EGM": r"\bEGM\b|granularity mismatch",
             "CA": r"\bCA\b|conflict avoidance", "LD": r"\bLD\b|linguistic distancing"}
    counts = {mechanism: int(notes.str.contains(pattern).sum()) for mechanism, pattern in named.items()}
    assert min(counts.values()) >= 50, counts
    assert notes.str.contains("faithful").sum() >= 50  # and replies that do it right, to compare with


def test_the_curated_exhibits_are_on_the_shipped_demo(dataset):
    curated = read_curated(SHIPPED_DEMO_DIR / "exhibits.csv", dataset.outputs)
    assert curated["mechanism"].tolist() == list(MECHANISMS)


def test_the_readme_counts_what_is_shipped(dataset):
    text = (SHIPPED_DEMO_DIR / "README.md").read_text(encoding="utf-8")
    assert f"<!-- fig:rows-outputs -->{len(dataset.outputs)}<!-- /fig --> outputs" in text
    assert "`demo_note`" in text and "python scripts/make_demo.py" in text


# ------------------------------------------------------------------------------------------------- the app
def test_home_opens_on_the_shipped_demo(shipped):
    at = _app()
    _ok(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Models"] == "5"
    assert int(metrics["Items"]) == pd.read_csv(shipped / "outputs.csv")["item_id"].nunique() == 88


@pytest.mark.parametrize("page", NAVIGATION)
def test_every_page_draws_on_the_shipped_demo(shipped, page):
    at = _app()
    _ok(at)
    at.switch_page(page).run()
    _ok(at)
    assert not at.error, _texts(at.error)


def test_relabel_ca_queue_holds_at_least_100_outputs(shipped, dataset):
    at = _app()
    at.switch_page("app_pages/4_Relabel.py").run()
    _ok(at)
    assert at.selectbox(key="relabel_dimension").value == "ca"
    text = at.get("progress")[0].proto.text
    found = re.fullmatch(r"0 of (\d+) decided by you.*", text)
    assert found, text
    rated = dataset.ratings[dataset.ratings["dimension"] == "ca"][["item_id", "model"]].drop_duplicates()
    assert int(found.group(1)) == len(rated) >= 100


# --------------------------------------------------------------------- the checklist's "scream" on the demo
#: Every sentence of the shipped demo with "scream" in it, and whether the lexicon checklist should count the
#: word as disturbing content (hand-labelled): a scream of pain or terror counts; an expressive frame (what the
#: speaker feels like doing, a speech act aimed at someone, issue 26's "I also want to scream") does not.
#: ``KNOWN`` marks the uses that should not count but still do: docs/detectors.md lists them as known.
SCREAMS = [
    ("I am grateful, and that's the worst part, because I also want to scream.", False),
    ("I sat in the car and screamed into my scarf.", False),
    ("Screaming into a scarf in the car is what people do just before they snap completely.", False),
    ("and then our daughter screams at me when I say no.", False),
    ("Your father screamed at you to get out of his own house", False),
    ("The headaches you invent are your body screaming at you to get out.", False),
    ("I heard my neighbours screaming and I couldn't reach them", True),
    ("I could hear my neighbours screaming and I couldn't get to them", True),
    ("screaming from his balcony with his clothes alight", True),
    ("he screamed for an hour clutching his own intestines", True),
    ("a man on the third floor screaming from a balcony with his clothes on fire", True),
    ("I cannot tell her that her son screamed for an hour", True),
    ("Screams filled the Helmsworth workshop on Friday night", True),
    ("as she sank screaming into the dark.", True),
]
KNOWN = [
    ("the wind was screaming", "the wind was screaming"),
    ("Bastien, screams when a plate is late", "screams when a plate is late"),
    ("Mother screamed, and she smashed the rice bowl", "Mother screamed"),
    ("I chased the carriage screaming her name into the scalding steam", "screaming her name"),
    ("Standoffs like this end with screaming matches, slammed doors", "screaming matches"),
]


def _demo_sentence(dataset, fragment: str) -> str:
    texts = pd.concat([dataset.outputs["reference"], dataset.outputs["generation"]])
    for text in texts[texts.str.contains(fragment, regex=False)]:
        for sentence in re.split(r"(?<=[.?!])\s+", text):
            if fragment in sentence:
                return sentence
    raise AssertionError(f"not in the shipped demo: {fragment!r}")


def _counts_scream(sentence: str) -> bool:
    from empathy.judges.lexicon import disturbing_matches

    return any("scream" in word.lower() for _, word in disturbing_matches(sentence))


@pytest.mark.parametrize(("fragment", "counted"), SCREAMS)
def test_expressive_screams_on_the_demo_are_not_disturbing_content(dataset, fragment, counted):
    assert _counts_scream(_demo_sentence(dataset, fragment)) is counted


def test_every_scream_of_the_demo_is_labelled_here(dataset):
    texts = pd.concat([dataset.outputs["reference"], dataset.outputs["generation"]])
    sentences = {s for text in texts for s in re.split(r"(?<=[.?!])\s+", text) if re.search("scream", s, re.I)}
    labelled = [fragment for fragment, _ in SCREAMS] + [fragment for fragment, _ in KNOWN]
    unlabelled = [s for s in sentences if not any(fragment in s for fragment in labelled)]
    assert unlabelled == []


@pytest.mark.parametrize(("fragment", "documented"), KNOWN)
def test_the_remaining_scream_false_positives_are_listed_as_known(dataset, fragment, documented):
    """Still counted (a phrase list cannot tell these senses apart): docs/detectors.md says so, by example."""
    assert _counts_scream(_demo_sentence(dataset, fragment))
    known = (ROOT / "docs" / "detectors.md").read_text(encoding="utf-8")
    assert f'"{documented}"' in known
