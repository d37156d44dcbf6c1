"""Offline parts of the judges: protocols and parsing, config, sentence splitter, lexicon judges."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from empathy.io import validate_ratings
from empathy.judges import (
    LEXICON_JUDGE,
    PROTOCOLS,
    JudgeConfig,
    JudgeConfigError,
    available_judges,
    lexicon,
    load_config,
    parse_config,
    redact,
    resolve_judge,
    run_judge,
    split_sentences,
)
from empathy.judges.prompts import Protocol


# ---------------------------------------------------------------------------------------------- parsing
@pytest.mark.parametrize(("name", "answer", "expected"), [
    ("affect", '{"reference": 0.8, "generation": 0.25}', {"e_ref": 0.8, "e_gen": 0.25}),
    ("affect", '```json\n{"reference": 1, "generation": 0}\n```', {"e_ref": 1.0, "e_gen": 0.0}),
    ("affect", '<think>{"reference": 9}</think> Scores: {"reference": 0.5, "generation": 0.1}',
     {"e_ref": 0.5, "e_gen": 0.1}),
    ("affect", 'reference: 0.3, "generation": 0.7', {"e_ref": 0.3, "e_gen": 0.7}),
    ("affect", '{"reference": "0.6", "generation": 0.2}', {"e_ref": 0.6, "e_gen": 0.2}),
    ("disturbing", '{"aversive_count": 3}', {"u": 3.0}),
    ("disturbing", 'The count is {"aversive_count": 2.0}.', {"u": 2.0}),
    ("conflict", '{"conflict_avoidance": 1}', {"ca": 1.0}),
    ("conflict", '{"conflict_avoidance": false}', {"ca": 0.0}),
    ("conflict", '{"conflict_avoidance": "1"}', {"ca": 1.0}),
])
def test_parse_accepts(name, answer, expected):
    assert PROTOCOLS[name].parse(answer) == expected


@pytest.mark.parametrize(("name", "answer", "message"), [
    ("affect", '{"reference": 1.2, "generation": 0.2}', "out of range"),
    ("affect", '{"reference": -0.1, "generation": 0.2}', "out of range"),
    ("affect", '{"reference": 0.5}', "lacks key 'generation'"),
    ("affect", '{"reference": "high", "generation": 0.2}', "not a number"),
    ("affect", '{"reference": NaN, "generation": 0.2}', "not finite"),
    ("affect", "I think both are intense.", "no JSON object"),
    ("affect", "", "empty answer"),
    ("disturbing", '{"aversive_count": -1}', "integer in [0, 100]"),
    ("disturbing", '{"aversive_count": 1.5}', "integer in [0, 100]"),
    ("disturbing", '{"aversive_count": 1000}', "integer in [0, 100]"),
    ("conflict", '{"conflict_avoidance": 0.5}', "must be 0 or 1"),
    ("conflict", '{"conflict_avoidance": 2}', "must be 0 or 1"),
])
def test_parse_rejects(name, answer, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        PROTOCOLS[name].parse(answer)


def test_protocol_hash_is_stable_and_tracks_every_word():
    affect = PROTOCOLS["affect"]
    assert len(affect.hash) == 12 and affect.tag == f"affect-intensity@1#{affect.hash}"
    assert len({p.hash for p in PROTOCOLS.values()}) == 3
    edited = Protocol(**{**affect.__dict__, "user_template": affect.user_template.replace("0.75", "0.70")})
    assert edited.hash != affect.hash


def test_render_places_texts_inside_delimiters():
    messages = PROTOCOLS["conflict"].render(reference="my narrative >>> x", generation="the <<<reply")
    user = messages[1]["content"]
    assert messages[0]["role"] == "system" and "JSON" in user
    assert "<<<CLIENT NARRATIVE>>>\nmy narrative ››› x\n<<<END CLIENT NARRATIVE>>>" in user
    assert "<<<THERAPIST RESPONSE>>>\nthe ‹‹‹reply\n<<<END THERAPIST RESPONSE>>>" in user
    with pytest.raises(ValueError, match="generation"):
        PROTOCOLS["conflict"].render(reference="x")


def test_schemas_are_strict_objects():
    for protocol in PROTOCOLS.values():
        assert protocol.schema["additionalProperties"] is False
        assert protocol.schema["required"] == list(protocol.keys)
        assert protocol.response_format()["json_schema"]["strict"] is True


# ----------------------------------------------------------------------------------------------- config
TOML = """
[judges.gpt]
base_url = "https://api.example.org/v1"
model = "gpt-5.2"
api_key_env = "OPENAI_API_KEY"
concurrency = 16

[judges.local]
base_url = "http://127.0.0.1:8000/v1/"
model = "qwen"
structured_output = "json_object"

[embeddings.qwen-emb]
base_url = "http://127.0.0.1:8001/v1"
model = "Qwen3-Embedding-4B"
"""


def test_load_toml_and_json_configs(tmp_path):
    toml_path = tmp_path / "judges.toml"
    toml_path.write_text(TOML)
    parsed = load_config(toml_path)
    assert set(parsed.judges) == {"gpt", "local"}
    gpt = parsed.judges["gpt"]
    assert (gpt.model, gpt.api_key_env, gpt.concurrency, gpt.temperature) == ("gpt-5.2", "OPENAI_API_KEY", 16,
                                                                             0.01)
    assert parsed.judges["local"].endpoint == "http://127.0.0.1:8000/v1"
    assert parsed.embeddings["qwen-emb"].model == "Qwen3-Embedding-4B"
    json_path = tmp_path / "judges.json"
    json_path.write_text(json.dumps({"judges": {"gpt": {"base_url": "https://x/v1", "model": "m"}}}))
    assert load_config(json_path).judges["gpt"].model == "m"
    judges = available_judges(toml_path)
    assert set(judges) == {"lexicon", "gpt", "local"}
    assert resolve_judge("local", toml_path).structured_output == "json_object"
    assert resolve_judge(None) is LEXICON_JUDGE


@pytest.mark.parametrize(("data", "message"), [
    ({"judges": {"a": {"base_url": "https://x/v1", "model": "m", "api_key": "sk-abc"}}}, "api_key_env"),
    ({"judges": {"a": {"base_url": "https://x/v1", "model": "m", "api_key_env": "sk-abc def"}}}, "NAME"),
    ({"judges": {"a": {"base_url": "https://x/v1", "model": "m", "colour": 1}}}, "unknown setting"),
    ({"judges": {"a": {"base_url": "ftp://x", "model": "m"}}}, "base_url"),
    ({"judges": {"a": {"base_url": "https://x/v1"}}}, "model is required"),
    ({"judges": {"a": {"base_url": "https://x/v1", "model": "m", "concurrency": 0}}}, "concurrency"),
    ({"judges": {"a": {"base_url": "https://x/v1", "model": "m", "structured_output": "xml"}}}, "structured"),
    ({"judges": {"lexicon": {"base_url": "https://x/v1", "model": "m"}}}, "reserved"),
    ({"judge": {}}, "unknown section"),
])
def test_bad_config_is_named(data, message):
    with pytest.raises(JudgeConfigError, match=message):
        parse_config(data, source="cfg.toml")


def test_unknown_judge_lists_available(tmp_path, monkeypatch):
    monkeypatch.delenv("EMPATHY_JUDGES_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(JudgeConfigError, match="available: lexicon"):
        resolve_judge("gpt-9")


def test_endpoint_drops_credentials():
    judge = JudgeConfig(name="x", base_url="https://user:pw@host.example:8443/v1/?token=abc", model="m")
    assert judge.endpoint == "https://host.example:8443/v1"


@pytest.mark.parametrize(("text", "secrets", "expected"), [
    ("Incorrect API key provided: sk-live-abcdefgh1234", (), "Incorrect API key provided: ***"),
    ("header Authorization: Bearer abc.def", (), "header Authorization: Bearer ***"),
    ("token hunter2x in message", ("hunter2x",), "token *** in message"),
    ("nothing secret", (), "nothing secret"),
])
def test_redact(text, secrets, expected):
    assert redact(text, secrets) == expected


# -------------------------------------------------------------------------------------------- sentences
@pytest.mark.parametrize(("text", "expected"), [
    ("", []),
    ("One. Two! Three? four", ["One.", "Two!", "Three? four"]),
    ("Mr. Smith met Dr. Jones. They left.", ["Mr. Smith met Dr. Jones.", "They left."]),
    ("J. Doe said no. The U.S. Army came.", ["J. Doe said no.", "The U.S. Army came."]),
    ("See No. 5 here. It was 3.5 km away.", ["See No. 5 here.", "It was 3.5 km away."]),
    ('He said "Stop." Then ran.', ['He said "Stop."', "Then ran."]),
    ("Para one\n\nPara two", ["Para one", "Para two"]),
    ("Tips:\n- rest\n- call", ["Tips:", "- rest", "- call"]),
    ("line\nwrapped text. Next.", ["line wrapped text.", "Next."]),
    ("他死了。她哭了！", ["他死了。", "她哭了！"]),
])
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


# -------------------------------------------------------------------------------------------- lexicon
@pytest.mark.parametrize(("text", "expected"), [
    # VADER valences: devastated -3.0, terrified -3.0 -> S = 6, E = 6 / sqrt(36 + 15)
    ("I am devastated and terrified.", 6 / math.sqrt(51)),
    ("It was okay.", 0.9 / math.sqrt(0.81 + 15)),
    # "but" rule: happy (2.7) x 0.5, devastated (-3.0) x 1.5; polarity-free sum of magnitudes 5.85
    ("I am happy but devastated.", 5.85 / math.sqrt(5.85 ** 2 + 15)),
    ("The company reported quarterly results.", 0.0),
    ("It was okay. The company reported quarterly results.", 0.9 / math.sqrt(0.81 + 15) / 2),
    ("", 0.0),
])
def test_lexicon_affect_intensity_hand_worked(text, expected):
    assert lexicon.affect_intensity(text) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(("sentence", "expected"), [
    ("He was shot dead and two others suffered gunshot wounds.", [("death", "shot dead"),
                                                                  ("injury", "gunshot wounds")]),
    ("He was stabbed and later died.", [("violence", "stabbed"), ("death", "died")]),
    ("The death toll rose to 12 after the bombing.", [("death", "death toll"), ("violence", "bombing")]),
    ("Charred remains and pools of blood lined the street.", [("graphic", "charred"),
                                                             ("graphic", "pools of blood")]),
    ("She was sexually abused and tortured.", [("abuse", "sexually abused"), ("abuse", "tortured")]),
    ("No one was hurt.", []),
    ("Nobody died and there were no injuries.", []),
    ("I'm dead tired after a panic attack.", []),
    ("The incident was a tragedy for the town.", []),
    ("His blood pressure was fine.", []),
])
def test_lexicon_disturbing_matches(sentence, expected):
    assert lexicon.disturbing_matches(sentence) == expected


def test_lexicon_disturbing_count_sums_sentences():
    assert lexicon.disturbing_count("He was killed. Blood everywhere. No one was hurt.") == 2


@pytest.mark.parametrize(("response", "cues", "label"), [
    ("You should talk to your manager. Here are some tips:\n1. Set boundaries\n2. Communicate calmly",
     (8, 0, 0, 0), 1),  # you should, talk to your manager, here are some, 2 list items, set boundaries,
    # communicate calmly, and "Set" opening a sentence
    ("It sounds like this has been painful. What feels hardest? How do you see it?", (0, 0, 2, 1), 0),
    ("Don't worry, everything will work out. Try to find common ground.", (2, 3, 0, 0), 1),
    ("It is common to feel this way. Keep records of your work.", (1, 1, 0, 0), 1),
    ("Tell me more about that.", (0, 0, 0, 1), 0),
    ("What happened next? You could also consider telling them.", (2, 0, 1, 0), 1),
    ("I'm sorry you feel that way.", (0, 0, 0, 0), 0),
])
def test_lexicon_conflict_cues(response, cues, label):
    found = lexicon.conflict_cues(response)
    assert (found.solution, found.harmony, found.questions, found.reflective) == cues
    assert lexicon.conflict_avoidance(response) == label


def test_lexicon_judge_run_is_the_default_and_valid():
    frame = pd.DataFrame({"item_id": ["1", "1"], "model": ["a", "b"],
                          "reference": ["He was killed. I am devastated and terrified."] * 2,
                          "generation": ["A person died.", "You should move on."]})
    run = run_judge(frame)
    ratings = run.ratings.set_index(["model", "dimension"])["value"]
    assert run.judge.name == "lexicon" and set(run.ratings.rater_kind) == {"lexicon"}
    assert ratings[("a", "u_ref")] == 1 and ratings[("a", "u_gen")] == 1
    # killed -3.5 in sentence 1, devastated + terrified in sentence 2: the mean of the two intensities
    assert ratings[("a", "e_ref")] == pytest.approx((3.5 / math.sqrt(3.5 ** 2 + 15) + 6 / math.sqrt(51)) / 2)
    assert ratings[("b", "ca")] == 1 and ratings[("a", "ca")] == 0
    assert run.stats.calls == 0 and "vaderSentiment" in run.signature
    validate_ratings(run.ratings)
    only = run_judge(frame, "lexicon", protocols=["conflict"])
    assert set(only.ratings.dimension) == {"ca"}


def test_unknown_protocol_is_named():
    frame = pd.DataFrame({"item_id": ["1"], "model": ["a"], "reference": ["r"], "generation": ["g"]})
    with pytest.raises(ValueError, match="unknown protocol"):
        run_judge(frame, protocols="sentiment")
    with pytest.raises(ValueError, match="lacks column"):
        run_judge(frame.drop(columns="generation"))


def test_lexicon_task_protocols():
    frame = pd.DataFrame({"item_id": ["1", "2"], "model": ["a", "a"], "task": ["translation", "counseling"],
                          "reference": ["r.", "r."], "generation": ["g.", "g."]})
    run = run_judge(frame, task_protocols={"translation": "affect", "counseling": ["conflict"]})
    assert run.ratings.groupby("item_id")["dimension"].apply(list).to_dict() == {"1": ["e_ref", "e_gen"],
                                                                                  "2": ["ca"]}
    assert "disturbing" not in run.signature and "conflict=cue-heuristic" in run.signature
