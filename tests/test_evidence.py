"""The CA evidence quote of an LLM judge (issue 26 item 2): a named text that departs from Appendix D, off by
default, whose quote is kept only where it occurs in the response."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from fake_openai_server import FakeOpenAIServer
from test_judges_llm import judge, outputs

from empathy.judges import JudgeCache, JudgeConfigError, load_config, run_judge
from empathy.judges.evidence import Evidence, answer_evidence, find_quote
from empathy.judges.prompts import (
    CONFLICT,
    CONFLICT_EVIDENCE_VARIANTS,
    CONFLICT_VARIANTS,
    DISTURBING,
    conflict_text,
    with_evidence,
)
from empathy.judges.run import cached_evidence
from empathy.mechanisms import evidence_highlights, mechanism_marks, side_html

RESPONSE = "You should  talk to him.\nIt’s common to feel \"stuck\". What do you want?"


@pytest.mark.parametrize(("quote", "expected"), [
    ("You should talk to him.", (0, 24)),  # whitespace runs may differ
    ("It's common to feel", (25, 44)),  # a plain apostrophe matches the typographic one
    ('"It’s common to feel “stuck”."', (25, 53)),  # quotation marks around the quote are not part of it
    ("What do you want?...", (54, 71)),
    ("you should talk to him.", None),  # case counts
    ("You should talk to her.", None),  # every other character counts
    ("", None), ("  ", None),
])
def test_find_quote(quote, expected):
    assert find_quote(quote, RESPONSE) == expected


@pytest.mark.parametrize(("answer", "status", "quote"), [
    ('{"conflict_avoidance": 1, "evidence": "You should talk to him."}', "quoted", "You should  talk to him."),
    ('{"conflict_avoidance": 1, "evidence": "Leave him at once."}', "not in the response", None),
    ('{"conflict_avoidance": 1, "evidence": ""}', "no quote", None),
    ('{"conflict_avoidance": 1, "evidence": 3}', "no quote", None),
    ('{"conflict_avoidance": 1}', "no quote", None),
    ("not json", "no quote", None),
    (None, "no answer", None),
])
def test_answer_evidence_keeps_only_what_is_in_the_response(answer, status, quote):
    found = answer_evidence(CONFLICT_EVIDENCE_VARIANTS["paper"], answer, RESPONSE)
    assert (found.status, found.quote) == (status, quote)
    if status == "quoted":
        assert RESPONSE[found.start:found.end] == found.quote and found.given == "You should talk to him."
    if status == "not in the response":
        assert found.given == "Leave him at once." and found.start is None
    assert answer_evidence(CONFLICT, answer, RESPONSE) == Evidence("not asked")


def test_evidence_text_is_the_papers_plus_a_quote_and_named_apart():
    plain, quoting = CONFLICT_VARIANTS["paper"], CONFLICT_EVIDENCE_VARIANTS["paper"]
    assert quoting.tag.startswith("conflict-avoidance@2-evidence#") and quoting.hash != plain.hash
    assert CONFLICT_EVIDENCE_VARIANTS["engagement-v1"].version == "1-evidence"
    assert quoting.user_template.startswith(plain.user_template.rpartition("Answer with only")[0])
    assert "quote, verbatim" in quoting.user_template and '"evidence"' in quoting.user_template
    assert quoting.schema["required"] == ["conflict_avoidance", "evidence"]
    assert quoting.schema["additionalProperties"] is False
    assert quoting.parse('{"conflict_avoidance": 0, "evidence": "x"}') == {"ca": 0.0}
    assert plain.tag == "conflict-avoidance@2#bca38fe4d30d"  # the default text and its cached answers unchanged
    assert conflict_text("paper") is plain and conflict_text("paper", evidence=True) is quoting
    with pytest.raises(ValueError, match="not a conflict-avoidance text"):
        with_evidence(DISTURBING)


def test_evidence_is_off_by_default_and_set_in_the_config(tmp_path):
    path = tmp_path / "judges.toml"
    path.write_text('[judges.a]\nbase_url = "https://x/v1"\nmodel = "m"\n\n'
                    '[judges.b]\nbase_url = "https://x/v1"\nmodel = "m"\nconflict_evidence = true\n')
    judges = load_config(path).judges
    assert judges["a"].conflict_evidence is False and judges["b"].conflict_evidence is True
    assert "with evidence quote" in judges["b"].description and "evidence" not in judges["a"].description
    path.write_text('[judges.a]\nbase_url = "https://x/v1"\nmodel = "m"\nconflict_evidence = "yes"\n')
    with pytest.raises(JudgeConfigError, match="conflict_evidence must be bool"):
        load_config(path)


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer() as running:
        yield running


def test_a_run_with_the_evidence_text_records_checked_quotes(server, tmp_path):
    frame = outputs([("1", "m1", "I feel torn.", "You should  call her.\nShe may listen."),
                     ("2", "m1", "He left. QUOTE: You must leave him.", "What happened then? Tell me."),
                     ("3", "m1", "Client.", "")])
    cache = tmp_path / "c.sqlite"
    quoting = judge(server, conflict_evidence=True)
    run = run_judge(frame, quoting, protocols="conflict", cache=cache)
    plain = run_judge(frame, judge(server), protocols="conflict", cache=None)
    pd.testing.assert_series_equal(run.ratings["value"], plain.ratings["value"])  # the labels are the same
    assert ";departures=ca-evidence-quote;" in run.signature and "conflict-avoidance@2-evidence#" in run.signature
    assert "departures" not in plain.signature and plain.evidence.empty
    evidence = run.evidence.set_index("item_id")
    assert len(evidence) == 2  # the empty response is not rated, so it has no evidence
    assert evidence.loc["1", "status"] == "quoted" and evidence.loc["1", "quote"] == "You should  call her."
    assert (evidence.loc["1", "start"], evidence.loc["1", "end"]) == (0, 21)
    assert evidence.loc["2", "status"] == "not in the response" and pd.isna(evidence.loc["2", "quote"])
    assert evidence.loc["2", "given"] == "You must leave him."
    assert all('"evidence"' in request["messages"][1]["content"] for request in server.requests[-6:-3])
    with JudgeCache(cache) as store:  # the app reads the same from the cache, without a call
        calls = server.calls
        found = cached_evidence(frame.loc[0, "reference"], frame.loc[0, "generation"], quoting, store)
        assert (found.status, found.start, found.end) == ("quoted", 0, 21) and server.calls == calls
        assert cached_evidence("x", "y", quoting, store).status == "no answer"
        assert cached_evidence("x", "y", judge(server), store).status == "not asked"


def test_evidence_is_drawn_on_the_response_only_where_it_was_found():
    quoted = answer_evidence(CONFLICT_EVIDENCE_VARIANTS["paper"],
                             '{"conflict_avoidance": 1, "evidence": "You should talk to him."}', RESPONSE)
    spans = evidence_highlights(quoted, "gpt<5>", 1.0)
    assert spans == [{"start": 0, "end": 24, "label": "evidence:gpt<5>", "rule": "label 1"}]
    assert evidence_highlights(Evidence("not in the response", given="x"), "gpt") == []
    marks = mechanism_marks("I feel torn.", RESPONSE, sentence_spans=([(0, 12)], [(0, 24), (25, 53), (54, 71)]),
                            judged=([], spans))
    markup = side_html(marks.generation)
    pieces = re.findall(r'<mark class="ca-evidence"[^>]*data-mark="(\d+)"', markup)
    assert len(pieces) > 1 and len(set(pieces)) == 1  # one span, split where the cue "You should" nests in it
    assert "judge gpt&lt;5&gt;: label 1" in markup
    assert re.search(r"<[^>]*gpt<5>", markup) is None
