"""AppTest: the four mechanisms in the side-by-side text of Inspect and Items (disturbing underlines, the affect
and disturbing counts beside each side, the output's SA/EGM terms, the row's demo_note/source)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from conftest import app_ok as _ok  # noqa: E402
from conftest import open_page  # noqa: E402
from relabel_keys import window  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402
from test_mechanism_marks import _distinct, _parse  # noqa: E402

from empathy.paths import DEMO_DIR  # noqa: E402

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


def _fake_judge_run(tmp_path: Path, monkeypatch, outputs: pd.DataFrame, protocols: str, options: str = ""
                    ) -> tuple[pd.DataFrame, dict]:
    """``outputs`` rated by the fake OpenAI server's judge ``fake`` (``options``: more lines of its config), its
    answers in the test's judge cache and its config named by ``$EMPATHY_JUDGES_CONFIG``; the server is stopped
    before the app reads anything (so the app can only read the cache). Returns the ratings and the data source."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fake_openai_server import FakeOpenAIServer

    from empathy.judges import JudgeCache, available_judges, load_config, run_judge

    folder = tmp_path / "llm"
    folder.mkdir()
    outputs.to_csv(folder / "outputs.csv", index=False)
    monkeypatch.setenv("EMPATHY_CACHE_DIR", str(tmp_path / "cache"))
    with FakeOpenAIServer() as server:
        config = folder / "judges.toml"
        config.write_text(f"[judges.fake]\nbase_url = '{server.base_url}'\nmodel = 'fake-model'\n{options}",
                          encoding="utf-8")
        monkeypatch.setenv("EMPATHY_JUDGES_CONFIG", str(config))
        judge = available_judges(load_config(config))["fake"]
        with JudgeCache(tmp_path / "cache" / "judges.sqlite") as cache:
            run = run_judge(outputs, judge, protocols=protocols, cache=cache)
    run.ratings.to_csv(folder / "ratings_fake.csv", index=False)
    return run.ratings, {"kind": "path", "outputs": str(folder / "outputs.csv"),
                         "ratings": [str(folder / "ratings_fake.csv")]}


def test_llm_judges_counted_sentences_are_marked_from_its_cache(tmp_path, monkeypatch):
    # the fake judge counts "dead", "killed" and "blood" in each sentence
    outputs = pd.DataFrame([{"item_id": "n1", "model": "m1", "task": "news",
                             "reference": "Two men were killed. Blood was everywhere. The road closed.",
                             "generation": "An incident occurred. Nobody was dead."}])
    ratings, source = _fake_judge_run(tmp_path, monkeypatch, outputs, "disturbing")
    assert ratings.set_index("dimension")["value"].to_dict() == {"u_ref": 2.0, "u_gen": 1.0}
    # the server is gone: what follows reads the cache only
    at = _page("app_pages/3_Inspect.py", source)
    reference, generation = _texts(at)
    title = "Judge fake: 1 disturbing element(s) counted in this sentence"
    assert _judged(reference) == (["Two men were killed.", "Blood was everywhere."], {title})
    # "Nobody was dead.": the fake judge counts it (1), the lexicon checklist does not (negated)
    assert _judged(generation) == (["Nobody was dead."], {title})
    assert "egm-disturbing" not in generation
    assert any("Dotted: sentences in which `fake` counted disturbing content" in c for c in _captions(at))
    assert any('class="egm-judged"' in m.value and "ld-legend" in m.value for m in at.markdown)


# ------------------------------------------------------------------ issue 26: SA and CA in the text, every view

def _lexicon(item_id: str, model: str) -> dict[str, float]:
    """The demo's lexicon ratings of one output, as the judge wrote them (full precision)."""
    ratings = pd.read_csv(DEMO_DIR / "ratings_lexicon.csv", dtype={"item_id": str, "model": str})
    mine = ratings[(ratings["item_id"] == item_id) & (ratings["model"] == model)]
    return dict(zip(mine["dimension"], mine["value"].astype(float), strict=True))


def _expected_marks(reference: str, generation: str):
    """The library's marks of a counseling pair on the judges' sentences: what every view must draw."""
    from empathy.judges.segment import sentence_spans
    from empathy.mechanisms import mechanism_marks

    return mechanism_marks(reference, generation, sentence_spans=sentence_spans([reference, generation]))


def _count_sides(sides: list[str], marks) -> None:
    """Each side's marks counted by kind (one per span, ``data-mark``) against the library's, and the SA weights
    summing to the lexicon judge's E of that side."""
    for markup, side in zip(sides, (marks.reference, marks.generation), strict=True):
        parsed = _parse(markup)
        weights = [float(m["data-weight"]) for m in _distinct(parsed.marks, "sa-affect").values()]
        assert len(weights) == len(side.affect.contributions) > 0
        assert sum(weights) == pytest.approx(side.affect.intensity, abs=1e-12)
        assert len(_distinct(parsed.marks, "egm-disturbing")) == len(side.disturbing)
        cue_class = "ca-cue" if side is marks.generation else "ca-tension"
        assert len(_distinct(parsed.marks, cue_class)) == len(side.cues)


def test_inspect_draws_sa_and_ca_in_the_text_adding_up_to_the_lexicon_judge():
    """co-05 / sorrel: the lexicon's CA label 1 from a solution and a reassurance cue, the client's tension on the
    narrative, and the SA marks of each side adding up to the lexicon judge's E in the demo's ratings file."""
    at = _page("app_pages/3_Inspect.py")
    at.selectbox(key="inspect_task").set_value("counseling").run()
    at.selectbox(key="inspect_model").set_value("sorrel").run()
    at.selectbox(key="_w_inspect_pick").set_value("co-05 · sorrel").run()
    _ok(at)
    outputs = pd.read_csv(DEMO_DIR / "outputs.csv", dtype=str, keep_default_na=False)
    row = outputs[(outputs["item_id"] == "co-05") & (outputs["model"] == "sorrel")].iloc[0]
    marks = _expected_marks(row["reference"], row["generation"])
    sides = _texts(at)
    _count_sides(sides, marks)
    lexicon = _lexicon("co-05", "sorrel")
    assert marks.reference.affect.intensity == pytest.approx(lexicon["e_ref"], abs=1e-12)
    assert marks.generation.affect.intensity == pytest.approx(lexicon["e_gen"], abs=1e-12)
    assert len(marks.conflict.cues) >= 2 and len(marks.reference.cues) == 3
    assert marks.conflict.label == lexicon["ca"] == 1
    summary = next(m.value for m in at.markdown if m.value.startswith('<div class="mechanism-summary"'))
    text = html.unescape(re.sub(r"<[^>]+>", " ", summary))
    assert f"E(reference) = {lexicon['e_ref']:.3f}" in text and "lost: " in text
    assert "A = 2 (solution 1, reassurance 1) > X = 0: lexicon CA label 1" in text
    legend = next(m.value for m in at.markdown if "ld-legend" in m.value and "sa-affect" in m.value)
    assert "ca-cue" in legend and "ca-tension" in legend
    assert "not author" not in text  # no LLM judge rated it: no note that the marks are not its


def test_items_and_relabels_views_draw_the_same_marks():
    outputs = pd.read_csv(DEMO_DIR / "outputs.csv", dtype=str, keep_default_na=False)
    at = _page("app_pages/8_Items.py")
    at.selectbox(key="items_pick").set_value("co-05 · sorrel").run()
    _ok(at)
    row = outputs[(outputs["item_id"] == "co-05") & (outputs["model"] == "sorrel")].iloc[0]
    _count_sides(_texts(at), _expected_marks(row["reference"], row["generation"]))

    # Relabel's key queue (CA): the window's entries carry the same markup, the summary and the legend
    at.session_state["annotator"] = "ann"
    at.switch_page("app_pages/4_Relabel.py").run()
    _ok(at)
    sent = window(at)
    first = sent["items"][0]
    shown = outputs[(outputs["item_id"] == first["item"]) & (outputs["model"] == first["model"])].iloc[0]
    marks = _expected_marks(shown["reference"], shown["generation"])
    _count_sides([sent["refs"][first["ref"]], first["gen"]], marks)
    assert "lexicon CA label" in first["sum"] and "E(reference)" in html.unescape(first["sum"])
    assert "sa-affect" in sent["legends"][first["legend"]] and "ca-cue" in sent["legends"][first["legend"]]
    # blind: LD only, no summary (the lexicon's marks carry its labels)
    at.toggle(key="_w_relabel_blind").set_value(True).run()
    _ok(at)
    blind = window(at)
    entry = blind["items"][0]
    assert "sa-affect" not in entry["gen"] and "ca-cue" not in entry["gen"] and "egm-disturbing" not in entry["gen"]
    assert entry["sum"] == "" and "sa-affect" not in blind["legends"][entry["legend"]]
    assert "ld-" in entry["gen"] + blind["refs"][entry["ref"]]


def test_relabels_value_box_draws_them_too(tmp_path):
    """A dimension without levels (e_gen) is decided one output at a time: its texts carry the same marks."""
    at = _page("app_pages/4_Relabel.py")
    at.session_state["annotator"] = "ann"
    at.selectbox(key="relabel_dimension").set_value("e_gen").run()
    _ok(at)
    sides = _texts(at)
    assert len(sides) == 2 and all("sa-affect" in side for side in sides)
    assert any(m.value.startswith('<div class="mechanism-summary"') for m in at.markdown)


def test_an_llm_judges_evidence_quote_and_the_note_that_the_marks_are_the_lexicons(tmp_path, monkeypatch):
    outputs = pd.DataFrame([{"item_id": "c1", "model": "m1", "task": "counseling",
                             "reference": "I feel torn about my sister. I want to call her, but I am scared.",
                             "generation": "You should  call her tonight.\nIt will all work out."}])
    ratings, source = _fake_judge_run(tmp_path, monkeypatch, outputs, "conflict", "conflict_evidence = true\n")
    assert ratings.set_index("dimension")["value"].to_dict() == {"ca": 1.0}
    # the server is gone: the quote comes from the answer cache
    at = _page("app_pages/3_Inspect.py", source)
    _ok(at)
    reference, generation = _texts(at)
    quoted = re.findall(r'<mark class="ca-evidence"[^>]*title="([^"]*)"[^>]*data-mark="(\d+)"', generation)
    assert quoted and len({number for _, number in quoted}) == 1
    assert all(title.startswith("CA evidence quoted by judge fake") for title, _ in quoted)
    boxed = [html.unescape(c) for c in _captions(at) if c.startswith("Boxed: ")]  # as the reader sees it
    assert boxed == ["Boxed: the passage `fake` quoted as the evidence of its CA label (from the judge answer cache): "
                     "“You should  call her tonight.”"], boxed  # the response's own characters
    summary = next(m.value for m in at.markdown if m.value.startswith('<div class="mechanism-summary"'))
    assert "not fake's: an LLM judge gives one number per text" in html.unescape(summary)
    assert any('class="ca-evidence"' in m.value and "ld-legend" in m.value for m in at.markdown)
