"""AppTest: the four mechanisms in the side-by-side text of Inspect and Items (disturbing underlines, the affect
and disturbing counts beside each side, the output's SA/EGM terms, the row's demo_note/source)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import open_page  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

TIMEOUT = 240

pytestmark = pytest.mark.usefixtures("_store")  # an override store of each test's own


def _page(page: str, source: dict | None = None) -> AppTest:
    return open_page(page, source, timeout=TIMEOUT)


def _scores(at: AppTest) -> pd.DataFrame:
    for frame in at.dataframe:
        if {"judge", "SA", "EGM", "SA status"} <= set(frame.value.columns):
            return frame.value.set_index("judge")
    raise AssertionError(f"no scores table; have {[list(f.value.columns) for f in at.dataframe]}")


def _texts(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith('<div class="ld-text"')]


def _judged(markup: str) -> tuple[list[str], set[str]]:
    """The runs of text inside an LLM judge's sentence marks (nested marks split a run: rejoined) and their titles."""
    from html.parser import HTMLParser

    class Reader(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.stack: list[bool] = []
            self.runs: list[str] = []
            self.titles: set[str] = set()
            self.inside = False

        def handle_starttag(self, tag, attrs):
            if tag == "mark":
                values = dict(attrs)
                judged = values.get("class") == "egm-judged"
                self.stack.append(judged)
                if judged:
                    self.titles.add(values.get("title", ""))

        def handle_endtag(self, tag):
            if tag == "mark":
                self.stack.pop()

        def handle_data(self, data):
            now = any(self.stack)
            if now and self.inside:
                self.runs[-1] += data
            elif now:
                self.runs.append(data)
            self.inside = now

    reader = Reader()
    reader.feed(markup)
    return reader.runs, reader.titles


def _captions(at: AppTest) -> list[str]:
    return [str(c.value) for c in at.caption]


def _check_gorse_news01(at: AppTest) -> None:
    """news-01 / gorse of the demo: the author's u_ref 2 vs u_gen 4 (EGM) and e_ref 0.80 vs e_gen 0.95 (SA < 0)."""
    captions = _captions(at)
    assert any(c.startswith("**demo&#95;note**: granularity mismatch") for c in captions), captions
    reference = next(c for c in captions if c.startswith("**e_ref**"))
    generation = next(c for c in captions if c.startswith("**e_gen**"))
    assert "author 0.80" in reference and "**u_ref** (disturbing) author 2 · lexicon 2" in reference
    assert "author 0.95" in generation and "**u_gen** (disturbing) author 4 · lexicon 2" in generation
    assert "d = 6 sentences" in reference and "q = 5 sentences" in generation
    texts = _texts(at)
    assert len(texts) == 2
    # the lexicon judge's u of each side is the number of underlined elements, each with its category tooltip
    for text, side in zip(texts, ("reference", "generation"), strict=True):
        marks = re.findall(r'<mark class="egm-disturbing egm-(\w+)"[^>]*title="([^"]*)"', text)
        assert len(marks) == 2, (side, marks)
        assert all(title.startswith("Disturbing content: ") for _, title in marks)
    assert any("egm-disturbing" in m.value and "LD (distancing)" in m.value for m in at.markdown)  # the legend
    scores = _scores(at)
    assert scores.loc["author", "SA"] == pytest.approx((0.8 - 0.95) / 0.8)
    # a = 2/6, b = 4/5: |a - b| / (a + b) = 7/17
    assert scores.loc["author", "EGM"] == pytest.approx(7 / 17)
    assert scores.loc["lexicon", "u_ref"] == scores.loc["lexicon", "u_gen"] == 2
    assert "ca" not in scores.columns  # no judge labelled ca on a news output: no column of None


def test_inspect_shows_all_four_mechanisms_in_the_text():
    at = _page("app_pages/3_Inspect.py")
    at.selectbox(key="inspect_task").set_value("news").run()
    at.selectbox(key="inspect_model").set_value("gorse").run()
    _ok(at)
    assert at.selectbox(key="_w_inspect_pick").value == "news-01 · gorse"
    _check_gorse_news01(at)
    # LD: the distancing highlights are still there
    assert any("ld-" in text for text in _texts(at))
    # CA: a counseling output shows each judge's label
    at.selectbox(key="inspect_task").set_value("counseling").run()
    at.selectbox(key="inspect_model").set_value("fennel").run()
    _ok(at)
    assert at.selectbox(key="_w_inspect_pick").value == "co-01 · fennel"
    assert _scores(at)["ca"].to_dict() == {"author": 1.0, "lexicon": 1.0}


def test_items_row_view_shows_the_same():
    at = _page("app_pages/8_Items.py")
    at.selectbox(key="items_pick").set_value("news-01 · gorse").run()
    _ok(at)
    _check_gorse_news01(at)


def test_notes_and_scores_escaped_and_absent_columns_tolerated(tmp_path):
    folder = tmp_path / "payload"
    folder.mkdir()
    note = "**bold** <script>alert(1)</script> [x](http://e.test) $x$"
    pd.DataFrame([
        {"item_id": "i1", "model": "m<b>", "task": "news", "reference": "Two people were killed. <img src=x>",
         "generation": "An incident occurred.", "demo_note": note, "source": ""},
        {"item_id": "i2", "model": "m<b>", "task": "news", "reference": "Calm day.", "generation": "Calm.",
         "demo_note": "", "source": ""},
    ]).to_csv(folder / "outputs.csv", index=False)
    pd.DataFrame([
        {"item_id": "i1", "model": "m<b>", "rater": "j*1*", "dimension": d, "value": v}
        for d, v in (("e_ref", 0.5), ("e_gen", 0.0), ("u_ref", 1), ("u_gen", 0))
    ]).to_csv(folder / "ratings_j.csv", index=False)
    at = _page("app_pages/3_Inspect.py", {"kind": "path", "outputs": str(folder / "outputs.csv"),
                                          "ratings": [str(folder / "ratings_j.csv")]})
    captions = _captions(at)
    shown = next(c for c in captions if c.startswith("**demo&#95;note**"))
    assert "<script>" not in shown and "**bold**" not in shown and "](" not in shown and "$x$" not in shown
    assert not any(c.startswith("**source**") for c in captions)  # blank cell: not shown
    reference = next(c for c in captions if c.startswith("**e_ref**"))
    assert "j\\*1\\*" in reference or "j&#42;1&#42;" in reference, reference
    assert "underlined 1 (death 1)" in reference
    text = _texts(at)[0]
    assert "<img" not in text and "&lt;img" in text
    scores = _scores(at)
    assert scores.loc["j*1*", "SA"] == pytest.approx(1.0) and scores.loc["j*1*", "EGM"] == pytest.approx(1.0)
    # the second output has no note, no rating: no note caption, no scores table, counts still shown
    at.button(key="inspect_next").click().run()
    _ok(at)
    assert not any(c.startswith("**demo&#95;note**") for c in _captions(at))
    assert not [f for f in at.dataframe if "SA status" in f.value.columns]
    assert any(c.startswith("underlined 0") for c in _captions(at))


def test_llm_judges_counted_sentences_are_marked_from_its_cache(tmp_path, monkeypatch):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fake_openai_server import FakeOpenAIServer

    from empathy.judges import JudgeCache, available_judges, load_config, run_judge

    folder = tmp_path / "llm"
    folder.mkdir()
    # the fake judge counts "dead", "killed" and "blood" in each sentence
    outputs = pd.DataFrame([{"item_id": "n1", "model": "m1", "task": "news",
                             "reference": "Two men were killed. Blood was everywhere. The road closed.",
                             "generation": "An incident occurred. Nobody was dead."}])
    outputs.to_csv(folder / "outputs.csv", index=False)
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    with FakeOpenAIServer() as server:
        config = folder / "judges.toml"
        config.write_text(f"[judges.fake]\nbase_url = '{server.base_url}'\nmodel = 'fake-model'\n", encoding="utf-8")
        monkeypatch.setenv("EMPATHY_JUDGES_CONFIG", str(config))
        judge = available_judges(load_config(config))["fake"]
        with JudgeCache(tmp_path / "cache" / "judges.sqlite") as cache:
            run = run_judge(outputs, judge, protocols="disturbing", cache=cache)
    run.ratings.to_csv(folder / "ratings_fake.csv", index=False)
    assert run.ratings.set_index("dimension")["value"].to_dict() == {"u_ref": 2.0, "u_gen": 1.0}
    # the server is gone: what follows reads the cache only
    at = _page("app_pages/3_Inspect.py", {"kind": "path", "outputs": str(folder / "outputs.csv"),
                                          "ratings": [str(folder / "ratings_fake.csv")]})
    reference, generation = _texts(at)
    title = "Judge fake: 1 disturbing element(s) counted in this sentence"
    assert _judged(reference) == (["Two men were killed.", "Blood was everywhere."], {title})
    # "Nobody was dead.": the fake judge counts it (1), the lexicon checklist does not (negated)
    assert _judged(generation) == (["Nobody was dead."], {title})
    assert "egm-disturbing" not in generation
    assert any("Dotted: sentences in which `fake` counted disturbing content" in c for c in _captions(at))
    assert any('class="egm-judged"' in m.value and "ld-legend" in m.value for m in at.markdown)
