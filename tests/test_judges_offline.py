"""Offline parts of the judges: protocols and parsing, config, sentence splitter, lexicon judges."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest

from empathy.distancing import analyze, analyze_text, load_model
from empathy.io import load_outputs, validate_ratings
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
from empathy.judges.prompts import (
    AFFECT,
    AFFECT_COUNSELING,
    AFFECT_COUNSELING_RESPONSE_FIRST,
    AFFECT_GENERATION_FIRST,
    CONFLICT_VARIANTS,
    DISTURBING,
    Protocol,
    affect_protocol,
)
from empathy.judges.run import affect_orders
from empathy.judges.segment import (
    clear_memo,
    segmentation_signature,
    sentence_spans,
    spacy_sentences,
)
from empathy.paths import DEMO_DIR, shared_dir


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
    assert len(affect.hash) == 12 and affect.tag == f"affect-intensity@2#{affect.hash}"
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
    # a question that proposes a solution is a solution cue, not exploration (the paper asks for open ones)
    ("What happened next? Have you tried telling him how you feel?", (1, 0, 1, 0), 0),
    ("Would it help to take a break? Why not ask her directly?", (3, 0, 0, 0), 1),  # + "take a break"
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


# ------------------------------------------------------------------------- protocol versions and variants
#: The paper's CA criteria (Appendix D, "Metrics"), which the default prompt must state word for word.
PAPER_CA_LABEL_1 = ("the client information is clearly insufficient, but the response mainly provides solutions "
                    "or positive closure with little substantive exploration of the underlying conflict")
PAPER_CA_LABEL_0 = ("the response focuses on clarification and understanding, using multiple open-ended questions "
                    "and avoiding premature resolution")


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_default_conflict_protocol_states_the_papers_criteria():
    conflict = PROTOCOLS["conflict"]
    assert conflict is CONFLICT_VARIANTS["paper"] and conflict.version == "2"
    user = _flat(conflict.render(reference="N", generation="R")[1]["content"])
    assert f"Label 1 (conflict avoidance): {PAPER_CA_LABEL_1}." in user
    assert f"Label 0 (engagement): {PAPER_CA_LABEL_0}." in user
    assert user.endswith('Answer with only this JSON object: {"conflict_avoidance": <0 or 1>}')
    assert conflict.schema["properties"] == {"conflict_avoidance": {"type": "integer", "enum": [0, 1]}}
    # the first text lacks the paper's condition and its "multiple" questions, and had a leniency rule
    old = _flat(CONFLICT_VARIANTS["engagement-v1"].render(reference="N", generation="R")[1]["content"])
    assert "clearly insufficient" not in old and "multiple" not in old and "do not by themselves" in old
    assert "do not by themselves" not in user


# ------------------------------------------------------------------- prompt texts against the paper's phrases
#: Section 2.2 (SA) and Appendix B: what E measures; the prompts must say it, not narrow it.
PAPER_E_DEFINITION = "the strength, vividness, and immediacy of affective expression"
PAPER_E_OPERATIONALISED = ("urgency", "moral weight", "emotional force")
#: Appendix B: the anchored rubric's ends and its four cues.
PAPER_E_ANCHORS = ("emotionally flat and clinical", "maximally intense and unfiltered")
PAPER_E_CUES = ("visceral and sensory wording", "emotional directness versus clinical distancing",
                "explicit emotion terms", "acknowledgment versus sanitization of pain or conflict")
#: Appendix D: what the counseling SA judge is shown.
PAPER_COUNSELING_TEXTS = ("client utterance", "model-generated response")
#: Appendix B: the EGM checklist and its counting rules.
PAPER_EGM_CHECKLIST = ("death", "violence", "injury", "graphic detail", "abuse or torture")
PAPER_EGM_RULES = ("multiword phrase", "in one sentence", "generic or vague terms")
AFFECT_TEXTS = (AFFECT, AFFECT_GENERATION_FIRST, AFFECT_COUNSELING, AFFECT_COUNSELING_RESPONSE_FIRST)


def _whole_prompt(protocol: Protocol) -> str:
    messages = protocol.render(**{name: f"TEXT{number}" for number, name in enumerate(protocol.fields)})
    return _flat(" ".join(m["content"] for m in messages)).lower()


def test_the_quoted_phrases_are_the_papers():
    folder = shared_dir()
    paper = folder / "paper" / "empathy-mechanisms-paper.txt" if folder else None
    if paper is None or not paper.is_file():
        pytest.skip("the paper is not in ../shared")
    text = _flat(paper.read_text(encoding="utf-8")).lower()
    for phrase in (PAPER_E_DEFINITION, *PAPER_E_OPERATIONALISED, *PAPER_E_ANCHORS, *PAPER_E_CUES,
                   *PAPER_COUNSELING_TEXTS, "death, violence, injury, graphic details, and abuse or torture",
                   "multiword phrases", "multiple elements in one sentence", "generic or vague terms",
                   "aversive count", "t=0.01"):
        assert phrase in text.replace("$", ""), phrase


@pytest.mark.parametrize("protocol", AFFECT_TEXTS, ids=lambda p: p.version)
def test_affect_prompt_defines_e_as_the_paper_does(protocol):
    prompt = _whole_prompt(protocol)
    assert PAPER_E_DEFINITION in prompt
    for phrase in (*PAPER_E_OPERATIONALISED, *PAPER_E_ANCHORS, *PAPER_E_CUES):
        assert phrase in prompt, phrase
    # issue 27: the first text told the judge to leave gravity out, which removes moral weight and urgency
    assert "how grave" not in prompt and "how the text is written" not in prompt and "grav" not in prompt
    assert protocol.version.startswith("2")


def test_counseling_affect_prompt_frames_a_client_utterance_and_a_model_response():
    for protocol in (AFFECT_COUNSELING, AFFECT_COUNSELING_RESPONSE_FIRST):
        prompt = _whole_prompt(protocol)
        for phrase in PAPER_COUNSELING_TEXTS:
            assert phrase in prompt
        assert "reference" not in prompt and "generated text" not in prompt
        assert set(protocol.keys) == {"client", "response"}
    first = _flat(AFFECT_COUNSELING.render(reference="CLIENT SAYS", generation="MODEL SAYS")[1]["content"])
    assert "Text A is the client utterance and Text B the model-generated response" in first
    assert "<<<TEXT A>>> CLIENT SAYS <<<END TEXT A>>>" in first
    assert first.endswith('{"client": <score of Text A>, "response": <score of Text B>}')
    assert AFFECT_COUNSELING.parse('{"client": 0.9, "response": 0.3}') == {"e_ref": 0.9, "e_gen": 0.3}
    assert AFFECT_COUNSELING_RESPONSE_FIRST.parse('{"response": 0.3, "client": 0.9}') == {"e_ref": 0.9, "e_gen": 0.3}
    # the other tasks keep a reference and a generated text
    assert "Text A is the reference and Text B the generated text" in _flat(AFFECT.user_template)
    assert affect_protocol("counseling", False) is AFFECT_COUNSELING
    assert affect_protocol("counseling", True) is AFFECT_COUNSELING_RESPONSE_FIRST
    assert affect_protocol("news", True) is AFFECT_GENERATION_FIRST and affect_protocol("", False) is AFFECT


def test_every_affect_text_asks_in_the_order_it_shows_the_texts():
    """The schema (and so a structured answer) lists Text A's key first, whichever text that is."""
    for protocol in AFFECT_TEXTS:
        user = protocol.render(reference="REF", generation="GEN")[1]["content"]
        first_text = "GEN" if protocol.dimensions[0] == "e_gen" else "REF"
        assert f"<<<TEXT A>>>\n{first_text}\n" in user
        assert list(protocol.schema["properties"]) == list(protocol.keys) == protocol.schema["required"]
        assert f'{{"{protocol.keys[0]}": <score of Text A>, "{protocol.keys[1]}": <score of Text B>}}' in user
    assert len({protocol.hash for protocol in AFFECT_TEXTS}) == 4


def test_disturbing_prompt_holds_the_papers_checklist_and_counting_rules():
    prompt = _whole_prompt(DISTURBING)
    for phrase in (*PAPER_EGM_CHECKLIST, *PAPER_EGM_RULES):
        assert phrase in prompt, phrase
    assert DISTURBING.keys == ("aversive_count",)  # the paper's "Aversive Count"


def test_protocol_versions_and_hashes_are_pinned():
    # Unchanged texts keep their hash (and so their cached answers); the new CA text has a new version and hash.
    # affect-intensity@1 (#f3a89efa7975) told the judge to ignore how grave the events are (issue 27); @2 defines
    # E over urgency, moral weight and emotional force, so its answers are cached apart.
    assert PROTOCOLS["affect"].tag == "affect-intensity@2#b4e26c4686f1"
    assert PROTOCOLS["disturbing"].tag == "disturbing-count@1#37d58c5dc23c"
    assert CONFLICT_VARIANTS["engagement-v1"].tag == "conflict-avoidance@1#e7eea46d96a4"
    assert PROTOCOLS["conflict"].tag.startswith("conflict-avoidance@2#")
    assert PROTOCOLS["conflict"].hash != CONFLICT_VARIANTS["engagement-v1"].hash
    assert AFFECT_GENERATION_FIRST.tag.startswith("affect-intensity@2-generation-first#")
    assert len({AFFECT_GENERATION_FIRST.hash, PROTOCOLS["affect"].hash}) == 2


def test_generation_first_affect_swaps_the_texts_and_names_the_roles():
    user = AFFECT_GENERATION_FIRST.render(reference="REF TEXT", generation="GEN TEXT")[1]["content"]
    assert "<<<TEXT A>>>\nGEN TEXT\n<<<END TEXT A>>>" in user and "<<<TEXT B>>>\nREF TEXT\n<<<END TEXT B>>>" in user
    assert "Text A is the generated text and Text B the reference" in user
    assert '{"generation": <score of Text A>, "reference": <score of Text B>}' in user
    # the same rubric otherwise: only the swapped parts differ from the reference-first text
    default = PROTOCOLS["affect"].render(reference="REF TEXT", generation="GEN TEXT")[1]["content"]
    assert user.split("Text A is")[0] == default.split("Text A is")[0]
    # the answer names its keys, so values map to e_ref / e_gen whatever the order
    assert AFFECT_GENERATION_FIRST.parse('{"generation": 0.2, "reference": 0.9}') == {"e_ref": 0.9, "e_gen": 0.2}


def _generation_first(judge: JudgeConfig, item: str, model: str) -> bool:
    """Whether the affect text of (item, model) shows the generation first (``model`` cannot matter: the order is
    drawn per item, tested below)."""
    return affect_orders(judge, item) == (True,)


def test_random_affect_order_is_seeded_per_item_and_model():
    judge = JudgeConfig(name="j", base_url="http://127.0.0.1:1/v1", model="m", affect_order="random",
                        affect_order_seed=7)
    pairs = [(str(i), model) for i in range(200) for model in ("a", "b")]
    flips = [_generation_first(judge, item, model) for item, model in pairs]
    assert flips == [_generation_first(judge, item, model) for item, model in pairs]  # reproducible
    assert 160 <= sum(flips) <= 240  # a fair coin over 400 pairs (binomial sd 10)
    other = [_generation_first(judge.replace(affect_order_seed=8), item, model) for item, model in pairs]
    assert other != flips
    assert not any(_generation_first(judge.replace(affect_order="reference-first"), i, m) for i, m in pairs)
    assert all(_generation_first(judge.replace(affect_order="generation-first"), i, m) for i, m in pairs)


JUDGE_TOML = """
[judges.paper]
base_url = "https://api.example.org/v1"
model = "gpt-5.2"

[judges.old-ca]
base_url = "https://api.example.org/v1"
model = "gpt-5.2"
conflict_protocol = "engagement-v1"
affect_order = "random"
affect_order_seed = 3
segmentation = "regex"
"""


def test_variants_are_selected_in_the_config_file(tmp_path):
    path = tmp_path / "judges.toml"
    path.write_text(JUDGE_TOML)
    judges = load_config(path).judges
    paper, old = judges["paper"], judges["old-ca"]
    assert (paper.conflict_protocol, paper.affect_order, paper.segmentation) == ("paper", "random", "spacy")
    assert (old.conflict_protocol, old.affect_order, old.affect_order_seed, old.segmentation) == (
        "engagement-v1", "random", 3, "regex")
    assert "conflict protocol engagement-v1" in old.description


def test_an_unreadable_base_url_is_refused_without_its_password(tmp_path):
    path = tmp_path / "judges.toml"
    path.write_text('[judges.a]\nbase_url = "http://ann:Wq7/Zq9xK@host/v1"\nmodel = "m"\n')
    with pytest.raises(JudgeConfigError, match="base_url must be an http") as caught:
        load_config(path)
    assert "Wq7" not in str(caught.value) and "Zq9xK" not in str(caught.value)
    path.write_text('[judges.a]\nbase_url = "HTTP://ann:p%2FZq9xK@host:8000/v1"\nmodel = "m"\n')
    assert load_config(path).judges["a"].endpoint == "http://host:8000/v1"


@pytest.mark.parametrize(("toml", "message"), [
    ("judges = 3", "'judges' must be a table of named judges ([judges.NAME] sections), got int '3'"),
    ('judges = "gpt"', "'judges' must be a table of named judges"),
    ("embeddings = [1, 2]", "'embeddings' must be a table of named embeddings"),
    ("[judges]\ngpt = 3", "[judges.gpt] must be a table of settings, got int '3'"),
    ('[judges.a]\nbase_url = "https://x/v1"\nmodel = "m"\nconflict_protocol = "lenient"',
     "conflict_protocol must be one of paper, engagement-v1, got 'lenient'"),
    ('[judges.a]\nbase_url = "https://x/v1"\nmodel = "m"\naffect_order = "shuffled"', "affect_order must be one of"),
    ('[judges.a]\nbase_url = "https://x/v1"\nmodel = "m"\naffect_order_seed = -1', "affect_order_seed"),
    ('[judges.a]\nbase_url = "https://x/v1"\nmodel = "m"\nsegmentation = "nltk"', "segmentation must be one of"),
    ("[judges.a]\nbase_url = 3\nmodel = \"m\"", "base_url must be str, got int '3'"),
    # a scheme that only starts with http would send every request nowhere and rate nothing
    ('[judges.a]\nbase_url = "httpx://x/v1"\nmodel = "m"', "base_url must be an http(s) URL, not httpx://"),
    ('[judges.a]\nbase_url = "http:///v1"\nmodel = "m"', "base_url must be an http(s) URL with a host"),
    ('[judges.a]\nbase_url = "http://x:abc/v1"\nmodel = "m"', "base_url must be an http(s) URL: it cannot be read"),
    ('[embeddings.e]\nbase_url = "httpx://x/v1"\nmodel = "m"', "base_url must be an http(s) URL, not httpx://"),
    ('[judges.a]\nbase_url = "https://x/v1"\nmodel = 5', "model must be str, got int '5'"),
    ('[judges.a]\nbase_url = "https://x/v1"\nmodel = "m"\nmax_tokens = "many"', "max_tokens must be int or none"),
    ('[judges.a]\nbase_url = "https://x/v1"\nmodel = "m"\ntemperature = true', "temperature must be int or float"),
    ('[judges.a]\nbase_url = "https://x/v1"\nmodel = "m"\nextra_body = 3', "extra_body must be a table"),
    ('[embeddings.e]\nbase_url = "https://x/v1"\nmodel = "m"\ntimeout = "x"', "timeout must be int or float"),
])
def test_malformed_config_names_the_file_and_key(tmp_path, toml, message):
    path = tmp_path / "judges.toml"
    path.write_text(toml + "\n")
    with pytest.raises(JudgeConfigError, match=re.escape(message)) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: ")


# ------------------------------------------------------------------------------------------ segmentation
def _demo_texts() -> list[str]:
    outputs, _ = load_outputs(DEMO_DIR / "outputs.csv")
    return list(outputs["reference"]) + list(outputs["generation"])


def test_judges_count_on_the_sentences_of_eq2s_denominator():
    texts = _demo_texts()
    assert len(texts) == 242
    d_and_q = [result.sentences for result in analyze(texts, cache=False)]
    spacy_counts = [len(spans) for spans in sentence_spans(texts)]
    assert spacy_counts == d_and_q  # every demo text: the judges' sentences are the ones Eq. 2 divides by
    regex_counts = [len(split_sentences(text)) for text in texts]
    # why the regex splitter is no longer the default: it disagrees with d and q on 12 of the 242 texts
    assert sum(a != b for a, b in zip(regex_counts, d_and_q, strict=True)) == 12


def test_lexicon_run_sentences_equal_d_and_q_and_signature_names_the_parse():
    outputs, _ = load_outputs(DEMO_DIR / "outputs.csv")
    run = run_judge(outputs, "lexicon", protocols="disturbing", cache=False)
    d_and_q = [result.sentences for result in analyze(list(outputs["reference"]) + list(outputs["generation"]),
                                                      cache=False)]
    assert list(run.sentences["n_sent_ref"]) + list(run.sentences["n_sent_gen"]) == d_and_q
    assert f"split={segmentation_signature()}" in run.signature and "split=spacy:" in run.signature
    regex = run_judge(outputs, "lexicon", protocols="disturbing", cache=False, segmentation="regex")
    assert regex.signature.endswith("split=regex-v1")
    with pytest.raises(JudgeConfigError, match="segmentation must be one of"):
        run_judge(outputs, "lexicon", cache=False, segmentation="words")


def test_spacy_sentences_collapse_whitespace_and_skip_blank_ones():
    assert spacy_sentences(["", "   \n ", "He left.\n\nShe  stayed\nhome."]) == [
        [], [], ["He left.", "She stayed home."]]
    with pytest.raises(TypeError, match="text #1 must be a string"):
        sentence_spans(["ok", 3])


def test_texts_longer_than_the_parser_limit_are_parsed_in_pieces(monkeypatch):
    nlp = load_model()
    paragraph = "The storm hit the coast. Two people died in the flood. "
    text = "\n\n".join([paragraph.strip()] * 6)
    clear_memo()
    whole = sentence_spans([text])[0]
    clear_memo()
    monkeypatch.setattr(nlp, "max_length", 120)  # the pieces are those of empathy.distancing.split_long_text
    pieces = sentence_spans([text])[0]
    clear_memo()
    assert pieces == whole and len(pieces) == 12  # cut at paragraph breaks: the same sentences and offsets
    result = analyze_text(text, cache=False)
    assert result.sentences == len(pieces) == 12  # and the analyser, cut the same way, counts the same
    assert [text[a:b] for a, b in pieces[:2]] == ["The storm hit the coast.", "Two people died in the flood."]


# ------------------------------------------------------------------------------------ linear splitter
def test_splitter_on_long_runs_of_marks_and_abbreviations():
    # inputs that made the old splitter quadratic; the output is unchanged
    assert split_sentences("Stop" + "!" * 5000 + " Now.") == ["Stop" + "!" * 5000, "Now."]
    many = "Dr. Smith met J. Doe e.g. at No. 5. " * 300
    assert len(split_sentences(many)) == 300


# --------------------------------------------------------------------------- conflict avoidance, lexicon
NARRATIVE = ("My sister and I haven't spoken since the funeral. She says I abandoned Mum, and part of me "
             "thinks she's right. I don't even know what I want from her any more.")
#: Hand-made responses of each kind under the paper's criteria (the narrative leaves a lot unclear).
AVOIDANT = ("I'm sorry for your loss. It's common to feel this way after a death in the family. You should "
            "reach out to your sister and suggest meeting for coffee. Try to see things from her perspective, "
            "and remember that everything will work out with time. I hope this helps!")
EXPLORING = ("It sounds like the silence with your sister has been weighing on you since the funeral. What "
             "happened between you two in the time around your mum's death? When she says you abandoned "
             "your mum, what does that stir up in you? And what would you want her to understand?")

#: One question, but a closed one that proposes a solution, then advice: not "multiple open-ended questions".
SUGGESTING = ("That sounds painful. Have you thought about writing her a letter? You could set a time to talk "
              "and keep it calm.")


@pytest.mark.parametrize(("response", "label"), [(AVOIDANT, 1), (EXPLORING, 0), (SUGGESTING, 1)])
def test_lexicon_conflict_avoidance_on_hand_made_responses(response, label):
    frame = pd.DataFrame({"item_id": ["1"], "model": ["m"], "reference": [NARRATIVE], "generation": [response]})
    run = run_judge(frame, "lexicon", protocols="conflict", cache=False)
    assert run.ratings["value"].tolist() == [label]
    assert lexicon.conflict_avoidance(response) == label


def test_lexicon_description_says_it_does_not_track_experts():
    assert LEXICON_JUDGE.description == lexicon.DESCRIPTION
    assert "does not track experts" in lexicon.DESCRIPTION and "0.03-0.30" in lexicon.DESCRIPTION
