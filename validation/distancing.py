"""Validation of the distancing detectors against external gold data (run: ``python -m validation.distancing``).

* UD English EWT dev (gold trees): sentence-level precision / recall / F1 of *passive*, *agentless passive*
  and *expletive*, for our rules and for plain spaCy dependency labels, on the same parses.
* PassivePy crowd-sourced sentences: precision / recall of "has a passive".
* PassivePy's own rules (the ``passivepy`` package, a development dependency) run on the same parses as the
  plain-spaCy baseline, as a reference implementation, when installed. Baselines parse the raw text; our
  rules parse it after :func:`~empathy.distancing.rules.parse_text` (typographic apostrophes made straight),
  which is part of our detector; the parses differ only for texts with such an apostrophe.
* Paired bootstrap confidence intervals (resampling sentences, seeded) for the F1 difference between our
  rules and each baseline, so that "better" is read against sampling noise.
* Hand-labelled sentences of the Kumar et al. (2025) support conversations (in-domain, labelled after the
  rules were frozen): passive, agentless passive, expletive and impersonal subject, same comparisons.
* Hand-labelled EWT nouns (``tests/data/nominalization_labels.tsv``): nominalization precision / recall,
  against a plain suffix rule.

Gold definitions (UD): a passive predicate is the head of ``aux:pass``, ``nsubj:pass`` or ``csubj:pass``
(clausal passive); it is agentless without an ``obl:agent`` dependent; an expletive is any ``expl``. The
"extended" passive gold also counts participles with ``Voice=Pass`` outside attributive (``amod``) and
fixed (``case``/``mark``) uses -- reduced relatives, participle clauses, coordinated participles -- and is
compared with all our passive rules.
"""

from __future__ import annotations

import csv
import hashlib
import json
import sys
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from spacy.language import Language
from spacy.matcher import Matcher
from spacy.tokens import Doc

from empathy.distancing.model import base_vocabularies, load_model
from empathy.distancing.rules import find_impersonal, find_nominalizations, find_passives, parse_text
from empathy.paths import PROJECT_ROOT, shared_dataset

#: Our clause-level passive rules (what the UD ``aux:pass``/``nsubj:pass`` gold annotates).
CLAUSAL_RULES = frozenset({"be-passive", "get-passive", "coordinated-passive"})
EXPLETIVE_RULES = frozenset({"expletive-there", "expletive-it"})
GENERIC_RULES = frozenset({"generic-one", "generic-indefinite", "generic-people"})
#: Biber's nominalization suffixes (as in pybiber), the plain baseline for nominalizations.
PLAIN_SUFFIXES: tuple[str, ...] = ("tion", "tions", "ment", "ments", "ness", "nesses", "ity", "ities")
NOMINALIZATION_LABELS = PROJECT_ROOT / "tests" / "data" / "nominalization_labels.tsv"
#: Hand labels of the Kumar et al. (2025) conversation sentences (guide: tests/data/distancing_sentence_guide.md):
#: the annotator of each chunk, and the second annotator of the 160 double-labelled sentences.
CONVERSATION_LABELS = PROJECT_ROOT / "tests" / "data" / "kumar2025_distancing_labels.tsv"
CONVERSATION_SECOND_LABELS = PROJECT_ROOT / "tests" / "data" / "kumar2025_distancing_labels_second.tsv"
CONVERSATION_FLAGS: tuple[str, ...] = ("passive", "agentless", "reduced", "expletive", "generic")
#: Paired bootstrap of F1 differences: resamples, two-sided confidence level, seed (recorded in the output).
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_CONFIDENCE = 0.95
BOOTSTRAP_SEED = 0


@dataclass(frozen=True)
class UDToken:
    """One CoNLL-U word line (multi-word ranges and empty nodes dropped)."""

    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    head: int
    deprel: str
    misc: str


@dataclass(frozen=True)
class UDSentence:
    """A gold sentence: id, text and words."""

    sent_id: str
    text: str
    tokens: tuple[UDToken, ...]


def read_conllu(path: str | Path) -> Iterator[UDSentence]:
    """Sentences of a CoNLL-U file."""
    sent_id, text, tokens = "", "", []
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if line.startswith("# sent_id = "):
                sent_id = line[len("# sent_id = "):]
            elif line.startswith("# text = "):
                text = line[len("# text = "):]
            elif line.startswith("#"):
                continue
            elif not line:
                if tokens:
                    yield UDSentence(sent_id, text, tuple(tokens))
                sent_id, text, tokens = "", "", []
            else:
                cols = line.split("\t")
                if "-" in cols[0] or "." in cols[0]:
                    continue
                tokens.append(UDToken(int(cols[0]), cols[1], cols[2], cols[3], cols[4], cols[5], int(cols[6]),
                                      cols[7], cols[9]))
    if tokens:
        yield UDSentence(sent_id, text, tuple(tokens))


def token_offsets(sentence: UDSentence) -> list[int]:
    """Character offset of each word in ``sentence.text`` (words are matched left to right)."""
    offsets, cursor = [], 0
    for token in sentence.tokens:
        found = sentence.text.find(token.form, cursor)
        if found < 0:
            offsets.append(-1)
            continue
        offsets.append(found)
        cursor = found + len(token.form)
    return offsets


def ud_gold(sentence: UDSentence) -> dict[str, bool]:
    """Sentence-level gold flags: passive, agentless, expletive and their extended variants."""
    clausal, extended, agents, expl = set(), set(), set(), False
    for token in sentence.tokens:
        if token.deprel in ("aux:pass", "nsubj:pass", "csubj:pass"):
            clausal.add(token.head)
        if "Voice=Pass" in token.feats and token.deprel not in ("amod", "case", "mark", "fixed"):
            extended.add(token.id)
        if token.deprel == "obl:agent":
            agents.add(token.head)
        if token.deprel == "expl":
            expl = True
    extended |= clausal
    return {"passive": bool(clausal), "agentless": bool(clausal - agents), "expletive": expl,
            "passive_ext": bool(extended), "agentless_ext": bool(extended - agents)}


def spacy_baseline(doc: Doc) -> dict[str, bool]:
    """Plain spaCy labels: passive = a head of auxpass/nsubjpass/csubjpass; agent = ``agent``; ``expl``."""
    predicates, agents, expl = set(), set(), False
    for token in doc:
        if token.dep_ in ("auxpass", "nsubjpass", "csubjpass"):
            predicates.add(token.head.i)
        elif token.dep_ == "agent":
            agents.add(token.head.i)
        elif token.dep_ == "expl":
            expl = True
    return {"passive": bool(predicates), "agentless": bool(predicates - agents), "expletive": expl}


def our_flags(doc: Doc, verbs: frozenset[str], adjectives: frozenset[str]) -> dict[str, bool]:
    """Our detector's sentence flags (clausal rules for the UD gold, all rules for the extended gold)."""
    passives = find_passives(doc, verbs, adjectives)
    clausal = [p for p in passives if p.rule in CLAUSAL_RULES]
    expletive = any(hit.rule in EXPLETIVE_RULES for hit in find_impersonal(doc))
    return {"passive": bool(clausal), "agentless": any(not p.agent for p in clausal), "expletive": expletive,
            "passive_ext": bool(passives), "agentless_ext": any(not p.agent for p in passives)}


def prf(gold: Sequence[bool], predicted: Sequence[bool]) -> dict[str, float]:
    """Precision, recall, F1 and counts of a binary prediction."""
    if len(gold) != len(predicted):
        raise ValueError(f"gold has {len(gold)} items but predicted has {len(predicted)}")
    tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g and p)
    fp = sum(1 for g, p in zip(gold, predicted, strict=True) if p and not g)
    fn = sum(1 for g, p in zip(gold, predicted, strict=True) if g and not p)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4), "tp": tp, "fp": fp,
            "fn": fn, "gold": tp + fn}


def paired_bootstrap_f1(
    gold: Sequence[bool],
    first: Sequence[bool],
    second: Sequence[bool],
    *,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = BOOTSTRAP_CONFIDENCE,
    seed: int = BOOTSTRAP_SEED,
    groups: Sequence[Hashable] | None = None,
) -> dict[str, float]:
    """F1(first) - F1(second) on the same items, with a paired percentile bootstrap interval.

    Items (sentences) are resampled with replacement; both detectors are scored on the same resample, so the
    interval reflects how much the difference depends on which sentences happen to be in the data set.
    F1 is ``2 tp / (2 tp + fp + fn)`` (0 when a resample has no positive in gold or prediction).

    With ``groups`` (one label per item: the document or conversation a sentence comes from) whole groups are
    resampled instead (a cluster bootstrap): sentences of one document share topic, writer and style, so an
    unseen test set of other documents varies more than a resample of sentences says.
    """
    g, a, b = (np.asarray(v, dtype=bool) for v in (gold, first, second))
    if not (g.shape == a.shape == b.shape) or g.ndim != 1:
        raise ValueError(f"gold, first and second must be equally long 1-d sequences, got {g.shape}, "
                         f"{a.shape}, {b.shape}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n = g.size
    if n == 0:
        raise ValueError("no items to resample")

    def f1(weights: np.ndarray, predicted: np.ndarray) -> np.ndarray:
        tp = weights @ (g & predicted)
        wrong = weights @ (g != predicted)
        denominator = 2 * tp + wrong
        return np.where(denominator > 0, 2 * tp / np.maximum(denominator, 1), 0.0)

    ones = np.ones(n, dtype=np.int64)
    point = float(f1(ones, a) - f1(ones, b))
    rng = np.random.default_rng(seed)
    if groups is None:
        # How often each item is drawn in each resample: one multinomial row per resample (vectorised).
        weights = rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples)
    else:
        if len(groups) != n:
            raise ValueError(f"groups has {len(groups)} labels for {n} items")
        _, member = np.unique(np.asarray([str(g) for g in groups]), return_inverse=True)
        k = int(member.max()) + 1
        # Draw groups; each item is weighted by the number of times its group was drawn.
        weights = rng.multinomial(k, np.full(k, 1.0 / k), size=n_resamples)[:, member]
    differences = f1(weights, a) - f1(weights, b)
    tail = (1 - confidence) / 2
    low, high = np.quantile(differences, [tail, 1 - tail])
    return {"difference": round(point, 4), "low": round(float(low), 4), "high": round(float(high), 4),
            "p_not_better": round(float(np.mean(differences <= 0)), 4), "resamples": n_resamples,
            "confidence": confidence, "seed": seed, "unit": "item" if groups is None else "group"}


#: PassivePy's rule names (``rules_for_all_passives``; the truncated matcher has the first three).
PASSIVEPY_RULES = tuple(f"passive_rule_{i}" for i in range(1, 6))
#: PassivePy's rule that fires only for the verbs of its own list followed by "by".
PASSIVEPY_LIST_RULE = "passive_rule_5"


def passivepy_matchers(nlp: Language, *, verb_list: bool = True) -> tuple[Matcher, Matcher] | None:
    """PassivePy's own matchers (all passives; truncated = agentless) built on our pipeline, or ``None``.

    The reference implementation is the ``passivepy`` package (Mirshafiee et al.; MIT), a development
    dependency, imported here and never copied: its Matcher patterns run over the same parses as our rules,
    so the comparison isolates the rules from the parser (the authors used ``en_core_web_lg``).

    ``verb_list=False`` is an ablation: PassivePy excludes the participles of a list of verbs "whose
    adjective form is sometimes mistaken as a verb" (fill, stun, screw, overrate ...), collected on its own
    crowd-sourced data set; without it, the same patterns are kept with that exclusion removed, and the rule
    that exists only for those verbs (list verb + "by") is dropped.
    """
    try:
        from PassivePySrc.rules_for_all_passives import create_matcher
        from PassivePySrc.rules_for_truncated_passives import create_matcher_truncated
    except ImportError:
        return None
    _, all_passives = create_matcher(nlp=nlp)
    truncated = create_matcher_truncated(nlp)
    if verb_list:
        return all_passives, truncated
    _, (list_pattern, *_) = all_passives.get(PASSIVEPY_LIST_RULE)
    listed = set(list_pattern[0]["LEMMA"]["IN"])
    return _strip_verb_list(nlp, all_passives, listed), _strip_verb_list(nlp, truncated, listed)


def _strip_verb_list(nlp: Language, matcher: Matcher, listed: set[str]) -> Matcher:
    stripped = Matcher(nlp.vocab)
    for name in PASSIVEPY_RULES:
        if name not in matcher or name == PASSIVEPY_LIST_RULE:
            continue
        _, patterns = matcher.get(name)
        rebuilt = []
        for pattern in patterns:
            tokens = []
            for spec in pattern:
                spec = dict(spec)
                lemma = spec.get("LEMMA")
                if isinstance(lemma, dict) and "NOT_IN" in lemma:
                    kept = [word for word in lemma["NOT_IN"] if word not in listed]
                    if kept:
                        spec["LEMMA"] = {"NOT_IN": kept}
                    else:
                        del spec["LEMMA"]
                tokens.append(spec)
            rebuilt.append(tokens)
        stripped.add(name, rebuilt, greedy="LONGEST")
    return stripped


def _passivepy_flags(matchers: tuple[Matcher, Matcher], doc: Doc) -> dict[str, bool]:
    all_passives, truncated = matchers
    return {"passive": bool(all_passives(doc)), "agentless": bool(truncated(doc))}


def _parse_pairs(nlp: Language, texts: Iterable[str], batch_size: int = 256) -> Iterator[tuple[Doc, Doc]]:
    """(our parse, raw parse) per text: ours reads the text after :func:`parse_text` (part of our detector);
    the baselines (plain spaCy labels, PassivePy) read the raw text, as they would on their own. The two
    are the same ``Doc`` unless the text has a typographic apostrophe."""
    texts = list(texts)
    normalised = [parse_text(text) for text in texts]
    changed = [i for i, (a, b) in enumerate(zip(texts, normalised, strict=True)) if a != b]
    raw = dict(zip(changed, nlp.pipe((texts[i] for i in changed), batch_size=batch_size), strict=True))
    for i, doc in enumerate(nlp.pipe(normalised, batch_size=batch_size)):
        yield doc, raw.get(i, doc)


def validate_ewt(
    path: str | Path, *, batch_size: int = 256, half: str = "all"
) -> dict[str, dict[str, dict[str, float]]]:
    """Sentence-level scores on UD EWT: ``{"ours"|"spacy": {flag: prf}}`` plus ``sentences``.

    ``half`` selects ``"all"`` sentences, the ``"even"`` ones (0-based position; the only ones whose errors
    were read while writing the rules) or the ``"odd"`` ones (held out).
    """
    if half not in ("all", "even", "odd"):
        raise ValueError(f"half must be 'all', 'even' or 'odd', got {half!r}")
    nlp = load_model()
    verbs, adjectives = base_vocabularies(nlp)
    sentences = list(read_conllu(path))
    if half != "all":
        sentences = sentences[(0 if half == "even" else 1)::2]
    gold = [ud_gold(s) for s in sentences]
    matchers = passivepy_matchers(nlp)
    ours, base, reference = [], [], []
    for doc, raw in _parse_pairs(nlp, (s.text for s in sentences), batch_size):
        ours.append(our_flags(doc, verbs, adjectives))
        base.append(spacy_baseline(raw))
        if matchers is not None:
            reference.append(_passivepy_flags(matchers, raw))
    report: dict[str, dict] = {"ours": {}, "spacy": {}, "sentences": {"n": len(sentences)},
                               "difference_vs_spacy": {}}
    if matchers is not None:
        report["passivepy"], report["difference_vs_passivepy"] = {}, {}
    for flag in ("passive", "agentless", "expletive", "passive_ext", "agentless_ext"):
        plain = flag.removesuffix("_ext")
        golds = [g[flag] for g in gold]
        mine = [o[flag] for o in ours]
        spacy_flags = [b[plain] for b in base]
        report["ours"][flag] = prf(golds, mine)
        report["spacy"][flag] = prf(golds, spacy_flags)
        report["difference_vs_spacy"][flag] = paired_bootstrap_f1(golds, mine, spacy_flags)
        if matchers is not None and plain != "expletive":
            theirs = [r[plain] for r in reference]
            report["passivepy"][flag] = prf(golds, theirs)
            report["difference_vs_passivepy"][flag] = paired_bootstrap_f1(golds, mine, theirs)
    return report


def read_passivepy(path: str | Path) -> list[tuple[str, bool]]:
    """(sentence, human says passive) pairs of the PassivePy crowd-sourced CSV."""
    with Path(path).open(encoding="utf-8", newline="") as handle:
        return [(row["Sentence"], row["human_coding"].strip() == "1") for row in csv.DictReader(handle)]


def validate_passivepy(path: str | Path) -> dict[str, dict[str, float]]:
    """Precision / recall of "has a passive" (any passive rule, with or without agent) on PassivePy."""
    nlp = load_model()
    verbs, adjectives = base_vocabularies(nlp)
    rows = read_passivepy(path)
    gold = [g for _, g in rows]
    matchers = passivepy_matchers(nlp)
    unlisted = passivepy_matchers(nlp, verb_list=False)
    ours_all, ours_clausal, base, reference, reference_unlisted = [], [], [], [], []
    for doc, raw in _parse_pairs(nlp, (text for text, _ in rows)):
        passives = find_passives(doc, verbs, adjectives)
        ours_all.append(bool(passives))
        ours_clausal.append(any(p.rule in CLAUSAL_RULES for p in passives))
        base.append(spacy_baseline(raw)["passive"])
        if matchers is not None and unlisted is not None:
            reference.append(_passivepy_flags(matchers, raw)["passive"])
            reference_unlisted.append(_passivepy_flags(unlisted, raw)["passive"])
    report: dict[str, dict] = {
        "ours": prf(gold, ours_all), "ours_clausal": prf(gold, ours_clausal), "spacy": prf(gold, base),
        "sentences": {"n": len(rows)},
        "difference_vs_spacy": paired_bootstrap_f1(gold, ours_clausal, base)}
    for half, start in (("even", 0), ("odd", 1)):
        report[f"ours_clausal_{half}"] = prf(gold[start::2], ours_clausal[start::2])
        report[f"spacy_{half}"] = prf(gold[start::2], base[start::2])
    if matchers is not None:
        report["passivepy"] = prf(gold, reference)
        report["passivepy_without_verb_list"] = prf(gold, reference_unlisted)
        report["difference_vs_passivepy"] = paired_bootstrap_f1(gold, ours_clausal, reference)
        report["difference_vs_passivepy_without_verb_list"] = paired_bootstrap_f1(gold, ours_clausal,
                                                                                  reference_unlisted)
        for half, start in (("even", 0), ("odd", 1)):
            report[f"passivepy_{half}"] = prf(gold[start::2], reference[start::2])
    return report


def read_conversation_labels(path: str | Path) -> dict[str, dict[str, str]]:
    """Rows of a conversation-label TSV keyed by ``item_id|field|line|start|end`` (``#`` comments allowed)."""
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as handle:
        lines = [line for line in handle if not line.startswith("#")]
    rows: dict[str, dict[str, str]] = {}
    for number, row in enumerate(csv.DictReader(lines, delimiter="\t"), start=2):
        for flag in CONVERSATION_FLAGS:
            if row.get(flag) not in ("0", "1"):
                raise ValueError(f"{path}: row {number}, column {flag}: expected 0 or 1, got {row.get(flag)!r}")
        if row["agentless"] == "1" and row["passive"] == "0":
            raise ValueError(f"{path}: row {number}, column agentless: 1 without passive")
        if row["key"] in rows:
            raise ValueError(f"{path}: row {number}, column key: {row['key']!r} appears twice")
        rows[row["key"]] = row
    return rows


def conversation_sentence(outputs: dict[tuple[str, str], str], key: str) -> str:
    """The sentence a label key names, cut from the imported conversation text."""
    try:
        item_id, field, line, start, end = key.rsplit("|", 4)
        text = outputs[(item_id, field)].split("\n")[int(line)]
        first, last = int(start), int(end)
    except (KeyError, IndexError, ValueError) as error:
        raise ValueError(f"label key {key!r} names no sentence of the data set ({error})") from None
    if not 0 <= first < last <= len(text):
        raise ValueError(f"label key {key!r}: offsets outside its line of {len(text)} characters")
    return text[first:last]


def conversation_half(item_id: str) -> str:
    """``"dev"`` or ``"test"``: a fixed split of the conversations by the parity of the item id's sha256.

    Rule work after version 7 reads errors on the ``dev`` conversations only; ``test`` stays held out.
    """
    return "dev" if hashlib.sha256(item_id.encode("utf-8")).digest()[-1] % 2 == 0 else "test"


def _conversation_sentences(
    root: str | Path, rows: dict[str, dict[str, str]], half: str = "all"
) -> tuple[list[str], list[str]]:
    """The label keys of ``half`` ("all", "dev", "test") and their sentences, cut from the imported data set."""
    from empathy.datasets.kumar2025 import import_kumar2025

    frame = import_kumar2025(root).outputs
    outputs = {(item, field): str(text) for item, ref, gen in
               zip(frame["item_id"], frame["reference"], frame["generation"], strict=True)
               for field, text in (("reference", ref), ("generation", gen))}
    keys = [key for key in rows if half == "all" or conversation_half(key.rsplit("|", 4)[0]) == half]
    return keys, [conversation_sentence(outputs, key) for key in keys]


def _conversation_gold(rows: dict[str, dict[str, str]], keys: Sequence[str]) -> dict[str, list[bool]]:
    """Gold flags of the conversation sentences (see :func:`validate_conversations`)."""
    gold = {flag: [rows[k][flag] == "1" for k in keys] for flag in ("passive", "agentless", "expletive")}
    gold["passive_ext"] = [rows[k]["passive"] == "1" or rows[k]["reduced"] == "1" for k in keys]
    gold["impersonal"] = [rows[k]["expletive"] == "1" or rows[k]["generic"] == "1" for k in keys]
    gold["generic"] = [rows[k]["generic"] == "1" for k in keys]
    return gold


def _conversation_flags(doc: Doc, verbs: frozenset[str], adjectives: frozenset[str]) -> dict[str, bool]:
    """Our flags for the conversation gold: the UD ones, ``impersonal`` (any impersonal span), ``generic``
    (a generic-subject rule) and ``generic_indefinite`` (the generic-indefinite rule alone)."""
    flags = our_flags(doc, verbs, adjectives)
    impersonal = find_impersonal(doc)
    flags["impersonal"] = bool(impersonal)
    flags["generic"] = any(hit.rule in GENERIC_RULES for hit in impersonal)
    flags["generic_indefinite"] = any(hit.rule == "generic-indefinite" for hit in impersonal)
    return flags


def validate_conversations(
    root: str | Path,
    labels: str | Path = CONVERSATION_LABELS,
    second: str | Path | None = CONVERSATION_SECOND_LABELS,
    *,
    half: str = "all",
) -> dict[str, dict]:
    """Sentence-level scores on the hand-labelled Kumar et al. (2025) conversation sentences.

    Gold flags: ``passive``, ``agentless``, ``expletive`` as on UD; ``passive_ext`` = passive or a reduced
    (auxiliary-less) passive participle; ``generic`` = a generic person subject (our ``generic-*`` rules);
    ``impersonal`` = expletive or generic subject (our ``impersonal`` label). ``generic_indefinite_rule`` is
    the sentence-level precision of the ``generic-indefinite`` rule alone. Baselines as on UD (plain spaCy
    has no generic-subject label: its ``impersonal`` is ``expl``, its ``generic`` never set).
    With ``second`` (the double-labelled sentences), Cohen's kappa between the two annotators per flag.
    ``half`` keeps ``"all"`` sentences or those of the ``"dev"`` or ``"test"`` conversations
    (:func:`conversation_half`).
    """
    if half not in ("all", "dev", "test"):
        raise ValueError(f"half must be 'all', 'dev' or 'test', got {half!r}")
    from empathy.agreement import cohen_kappa

    rows = read_conversation_labels(labels)
    keys, texts = _conversation_sentences(root, rows, half)
    gold = _conversation_gold(rows, keys)
    nlp = load_model()
    verbs, adjectives = base_vocabularies(nlp)
    matchers = passivepy_matchers(nlp)
    ours: dict[str, list[bool]] = {flag: [] for flag in gold}
    base: dict[str, list[bool]] = {flag: [] for flag in gold}
    reference: dict[str, list[bool]] = {"passive": [], "agentless": [], "passive_ext": []}
    indefinite: list[bool] = []
    for doc, raw in _parse_pairs(nlp, texts):
        flags = _conversation_flags(doc, verbs, adjectives)
        for flag in gold:
            ours[flag].append(flags[flag])
        indefinite.append(flags["generic_indefinite"])
        plain = spacy_baseline(raw)
        for flag in gold:
            # Plain spaCy has no generic-subject label: its "generic" is never set.
            base[flag].append(False if flag == "generic" else
                              plain[{"passive_ext": "passive", "impersonal": "expletive"}.get(flag, flag)])
        if matchers is not None:
            theirs = _passivepy_flags(matchers, raw)
            reference["passive"].append(theirs["passive"])
            reference["passive_ext"].append(theirs["passive"])
            reference["agentless"].append(theirs["agentless"])
    report: dict[str, dict] = {"ours": {}, "spacy": {}, "difference_vs_spacy": {},
                               "sentences": {"n": len(keys)}}
    if matchers is not None:
        report["passivepy"], report["difference_vs_passivepy"] = {}, {}
    for flag, golds in gold.items():
        report["ours"][flag] = prf(golds, ours[flag])
        report["spacy"][flag] = prf(golds, base[flag])
        report["difference_vs_spacy"][flag] = paired_bootstrap_f1(golds, ours[flag], base[flag])
        if matchers is not None and flag in reference:
            report["passivepy"][flag] = prf(golds, reference[flag])
            report["difference_vs_passivepy"][flag] = paired_bootstrap_f1(golds, ours[flag], reference[flag])
    # Precision of the generic-indefinite rule alone: sentences where it fires whose gold has a generic subject.
    fired = [g for g, hit in zip(gold["generic"], indefinite, strict=True) if hit]
    report["generic_indefinite_rule"] = {"sentences": len(fired), "correct": sum(fired),
                                         "precision": round(sum(fired) / len(fired), 4) if fired else 0.0}
    if second is not None and Path(second).exists():
        double = read_conversation_labels(second)
        unknown = sorted(set(double) - set(rows))
        if unknown:
            raise ValueError(f"{second}: keys not in {labels}: {unknown[:3]}")
        kept = set(keys)
        shared = [key for key in double if key in kept]
        report["agreement"] = {"sentences": len(shared)}
        for flag in CONVERSATION_FLAGS:
            first_labels = [int(rows[k][flag]) for k in shared]
            second_labels = [int(double[k][flag]) for k in shared]
            report["agreement"][flag] = {
                "kappa": cohen_kappa(first_labels, second_labels),
                "agree": sum(a == b for a, b in zip(first_labels, second_labels, strict=True)),
                "positives": [sum(first_labels), sum(second_labels)]}
    return report


def read_nominalization_labels(path: str | Path = NOMINALIZATION_LABELS) -> list[dict[str, str]]:
    """Rows of the hand-labelled noun file (tab-separated, ``#`` comment lines allowed)."""
    with Path(path).open(encoding="utf-8", newline="") as handle:
        lines = [line for line in handle if not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def validate_nominalizations(
    conllu: str | Path, labels: str | Path = NOMINALIZATION_LABELS
) -> dict[str, dict[str, float]]:
    """Precision / recall of our nominalization rule and of the plain suffix rule on hand-labelled nouns.

    Each labelled noun is located in spaCy's parse of its gold sentence by character offset; a noun that
    spaCy does not tag as a noun counts as "not a nominalization" for our detector.
    """
    rows = read_nominalization_labels(labels)
    sentences = {s.sent_id: s for s in read_conllu(conllu)}
    missing = sorted({r["sent_id"] for r in rows} - set(sentences))
    if missing:
        raise ValueError(f"{labels}: sentence ids not in {conllu}: {missing[:5]}")
    nlp = load_model()
    verbs, adjectives = base_vocabularies(nlp)
    memo: dict[str, str | None] = {}
    ids = list(dict.fromkeys(r["sent_id"] for r in rows))
    predicted_offsets: dict[str, set[int]] = {}
    for sent_id, doc in zip(ids, nlp.pipe(parse_text(sentences[i].text) for i in ids), strict=True):
        hits = find_nominalizations(doc, verbs, adjectives, memo)
        predicted_offsets[sent_id] = {doc[h.start].idx for h in hits}
    gold, ours, plain, strata = [], [], [], []
    for row in rows:
        sentence = sentences[row["sent_id"]]
        index = int(row["token_id"]) - 1
        token = sentence.tokens[index]
        if token.form != row["form"]:
            raise ValueError(f"{labels}: {row['sent_id']} token {row['token_id']} is {token.form!r}, "
                             f"not {row['form']!r}")
        offset = token_offsets(sentence)[index]
        gold.append(row["label"].strip() == "1")
        ours.append(offset in predicted_offsets[row["sent_id"]])
        plain.append(token.form.lower().endswith(PLAIN_SUFFIXES))
        strata.append(row.get("stratum", ""))
    report: dict[str, dict] = {"ours": prf(gold, ours), "plain_suffix": prf(gold, plain),
                               "tokens": {"n": len(rows)}}
    for stratum in sorted(set(strata) - {""}):
        keep = [i for i, s in enumerate(strata) if s == stratum]
        report[f"ours_{stratum}"] = prf([gold[i] for i in keep], [ours[i] for i in keep])
        report[f"plain_suffix_{stratum}"] = prf([gold[i] for i in keep], [plain[i] for i in keep])
        report["tokens"][stratum] = len(keep)
    return report


# --- Rule changes, measured on held-out halves ------------------------------------------------------------------
#: The flags a rule change is judged on, per data set: the UD flags of the treebank goal (clausal agentless passive,
#: expletive) and the extended passive; PassivePy's "has a passive"; the conversation flags, incl. ``impersonal``.
CHANGE_FLAGS: dict[str, tuple[str, ...]] = {
    "ewt": ("agentless", "expletive", "passive", "agentless_ext"),
    "passivepy": ("passive",),
    "conversations": ("agentless", "expletive", "impersonal", "generic"),
}
#: Half names per data set: the development half (errors may be read) first, the held-out half second.
CHANGE_HALVES: dict[str, tuple[str, str]] = {
    "ewt": ("even", "odd"), "passivepy": ("even", "odd"), "conversations": ("dev", "test")}


def ewt_document(sent_id: str) -> str:
    """The document of a UD EWT sentence id ("answers-20111108084227AAtbjAp_ans-0005" -> its prefix)."""
    return sent_id.rsplit("-", 1)[0]


def sentence_flags(parts: Iterable[str] = tuple(CHANGE_FLAGS)) -> dict[str, dict]:
    """Per-sentence gold and our flags on every data set present, to compare two rule versions.

    ``{name: {"ids", "halves", "groups", "gold": {flag: [...]}, "ours": {flag: [...]}}}`` with ``name`` in
    :data:`CHANGE_FLAGS`. ``halves`` names each sentence's half (:data:`CHANGE_HALVES`: EWT and PassivePy by the
    parity of the position, conversations by :func:`conversation_half`); ``groups`` is the resampling unit of
    :func:`compare_flags` (EWT document, conversation, PassivePy row). Plain lists, so the result can be saved
    as JSON and compared with the flags of the next rule version (``--save-flags`` / ``--against``).
    """
    parts = set(parts)
    nlp = load_model()
    verbs, adjectives = base_vocabularies(nlp)
    out: dict[str, dict] = {}
    ewt = shared_dataset("ud-english-ewt")
    if "ewt" in parts and ewt:
        sentences = list(read_conllu(ewt / "en_ewt-ud-dev.conllu"))
        flags = [our_flags(doc, verbs, adjectives) for doc in nlp.pipe(parse_text(s.text) for s in sentences)]
        gold = [ud_gold(s) for s in sentences]
        out["ewt"] = _flag_record(
            [s.sent_id for s in sentences], ["odd" if i % 2 else "even" for i in range(len(sentences))],
            [ewt_document(s.sent_id) for s in sentences], gold, flags, CHANGE_FLAGS["ewt"])
    ppy = shared_dataset("passivepy-crowdsource")
    if "passivepy" in parts and ppy:
        rows = read_passivepy(ppy / "crowd_source_dataset.csv")
        flags = [{"passive": any(p.rule in CLAUSAL_RULES for p in find_passives(doc, verbs, adjectives))}
                 for doc in nlp.pipe(parse_text(text) for text, _ in rows)]
        ids = [str(i) for i in range(len(rows))]
        out["passivepy"] = _flag_record(ids, ["odd" if i % 2 else "even" for i in range(len(rows))], ids,
                                        [{"passive": g} for _, g in rows], flags, CHANGE_FLAGS["passivepy"])
    kumar = shared_dataset("kumar2025-empathic-communication")
    if "conversations" in parts and kumar and CONVERSATION_LABELS.exists():
        labels = read_conversation_labels(CONVERSATION_LABELS)
        keys, texts = _conversation_sentences(kumar, labels)
        gold_columns = _conversation_gold(labels, keys)
        gold = [{flag: gold_columns[flag][i] for flag in gold_columns} for i in range(len(keys))]
        flags = [_conversation_flags(doc, verbs, adjectives) for doc in nlp.pipe(parse_text(t) for t in texts)]
        items = [key.rsplit("|", 4)[0] for key in keys]
        out["conversations"] = _flag_record(keys, [conversation_half(item) for item in items], items, gold,
                                            flags, CHANGE_FLAGS["conversations"])
    return out


def _flag_record(ids: list[str], halves: list[str], groups: list[str], gold: Sequence[dict[str, bool]],
                 ours: Sequence[dict[str, bool]], flags: Sequence[str]) -> dict:
    return {"ids": ids, "halves": halves, "groups": groups,
            "gold": {flag: [g[flag] for g in gold] for flag in flags},
            "ours": {flag: [o[flag] for o in ours] for flag in flags}}


def compare_flags(old: dict[str, dict], new: dict[str, dict], *, seed: int = BOOTSTRAP_SEED) -> dict[str, dict]:
    """What a rule change did, per data set, half and flag: P / R / F1 before and after, the sentences whose
    flag changed (right / wrong after the change) and F1(new) - F1(old) with a paired cluster bootstrap
    interval (whole documents or conversations resampled; :func:`paired_bootstrap_f1`).

    ``old`` and ``new`` are :func:`sentence_flags` results on the same sentences (a ``ValueError`` names the
    data set when they are not).
    """
    report: dict[str, dict] = {}
    for name in CHANGE_FLAGS:
        if name not in old or name not in new:
            continue
        before, after = old[name], new[name]
        if before["ids"] != after["ids"] or before["gold"] != after["gold"]:
            raise ValueError(f"{name}: the two flag sets cover different sentences or gold labels")
        report[name] = {}
        for half in CHANGE_HALVES[name]:
            keep = [i for i, h in enumerate(after["halves"]) if h == half]
            groups = [after["groups"][i] for i in keep]
            report[name][half] = {}
            for flag in CHANGE_FLAGS[name]:
                gold = [after["gold"][flag][i] for i in keep]
                was = [before["ours"][flag][i] for i in keep]
                now = [after["ours"][flag][i] for i in keep]
                moved = [(g, n) for g, w, n in zip(gold, was, now, strict=True) if w != n]
                report[name][half][flag] = {
                    "old": prf(gold, was), "new": prf(gold, now),
                    "changed": {"right": sum(g == n for g, n in moved), "wrong": sum(g != n for g, n in moved)},
                    "difference": paired_bootstrap_f1(gold, now, was, groups=groups, seed=seed)}
    return report


def change_markdown(report: dict[str, dict]) -> str:
    """:func:`compare_flags` as one Markdown table (held-out halves are the ones whose errors were not read)."""
    out = ["| data set, half | flag | before P / R / F1 | after P / R / F1 | sentences changed (now right / "
           "now wrong) | F1 after - before [95 % CI, documents resampled] |", "| --- | --- | --- | --- | --- | --- |"]
    for name, halves in report.items():
        for half, flags in halves.items():
            held = " (held out)" if half == CHANGE_HALVES[name][1] else ""
            for flag, cell in flags.items():
                old, new, diff = cell["old"], cell["new"], cell["difference"]
                out.append(f"| {name} {half}{held} | {flag} | {_prf_cell(old)} | {_prf_cell(new)} | "
                           f"{cell['changed']['right']} / {cell['changed']['wrong']} | {diff['difference']:+.3f} "
                           f"[{diff['low']:+.3f}, {diff['high']:+.3f}] |")
    return "\n".join(out) + "\n"


def _prf_cell(scores: dict[str, float]) -> str:
    return f"{scores['precision']:.3f} / {scores['recall']:.3f} / {scores['f1']:.3f}"


def _row(name: str, scores: dict[str, float]) -> str:
    return (f"| {name} | {scores['precision']:.3f} | {scores['recall']:.3f} | {scores['f1']:.3f} | "
            f"{scores['tp']} / {scores['fp']} / {scores['fn']} |")


def _difference(name: str, diff: dict[str, float]) -> str:
    return (f"| F1 {name} | {diff['difference']:+.3f} | [{diff['low']:+.3f}, {diff['high']:+.3f}] "
            f"({diff['confidence']:.0%} paired bootstrap) | P(not better) {diff['p_not_better']:.3f} | |")


def _flag_tables(report: dict[str, dict], flags: Sequence[str], header: list[str]) -> list[str]:
    """One table per flag: ours, plain spaCy, PassivePy's rules (when run) and the F1 differences."""
    out: list[str] = []
    for flag in flags:
        out.append(f"\n*{flag}* (gold sentences: {report['ours'][flag]['gold']})\n")
        out.extend(header)
        out.append(_row("ours", report["ours"][flag]))
        out.append(_row("plain spaCy labels", report["spacy"][flag]))
        if flag in report.get("passivepy", {}):
            out.append(_row("PassivePy's rules, same parse", report["passivepy"][flag]))
        out.append(_difference("ours - plain spaCy", report["difference_vs_spacy"][flag]))
        if flag in report.get("difference_vs_passivepy", {}):
            out.append(_difference("ours - PassivePy", report["difference_vs_passivepy"][flag]))
    return out


_EWT_FLAGS = ("passive", "agentless", "expletive", "passive_ext", "agentless_ext")
_CONVERSATION_REPORT_FLAGS = ("passive", "agentless", "expletive", "passive_ext", "generic", "impersonal")
#: result key -> (title, flags) of the per-flag report sections.
_SECTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ewt": ("UD EWT dev", _EWT_FLAGS),
    "ewt_even": ("UD EWT dev, even-numbered half (errors read here)", _EWT_FLAGS),
    "ewt_odd": ("UD EWT dev, odd-numbered (held-out) half", _EWT_FLAGS),
    "conversations": ("Kumar et al. (2025) conversation sentences, all", _CONVERSATION_REPORT_FLAGS),
    "conversations_dev": ("Kumar et al. (2025) conversation sentences, dev conversations (errors read here)",
                          _CONVERSATION_REPORT_FLAGS),
    "conversations_test": ("Kumar et al. (2025) conversation sentences, test conversations (held out)",
                           _CONVERSATION_REPORT_FLAGS),
}


def _sections(results: dict[str, dict], header: list[str], keys: Sequence[str]) -> list[str]:
    out: list[str] = []
    for key in keys:
        if key in results:
            title, flags = _SECTIONS[key]
            out.append(f"\n{title}, {results[key]['sentences']['n']} sentences, sentence level:\n")
            out.extend(_flag_tables(results[key], flags, header))
            rule = results[key].get("generic_indefinite_rule")
            if rule is not None:
                out.append(f"\n*generic-indefinite rule alone*: fires in {rule['sentences']} sentences, "
                           f"{rule['correct']} with a gold generic subject (precision {rule['precision']:.3f})\n")
    return out


def markdown(results: dict[str, dict]) -> str:
    """The validation tables as Markdown (for ``docs/detectors.md``)."""
    out: list[str] = []
    header = ["| detector | precision | recall | F1 | TP / FP / FN |", "| --- | --- | --- | --- | --- |"]
    out.extend(_sections(results, header, ("ewt", "ewt_even", "ewt_odd")))
    if "passivepy" in results:
        ppy = results["passivepy"]
        out.append(f"\nPassivePy crowd-sourced, {ppy['sentences']['n']} sentences, has a passive:\n")
        out.extend(header)
        out.append(_row("ours (all passive rules)", ppy["ours"]))
        out.append(_row("ours (clausal rules only)", ppy["ours_clausal"]))
        out.append(_row("plain spaCy labels", ppy["spacy"]))
        if "passivepy" in ppy:
            out.append(_row("PassivePy's rules, same parse", ppy["passivepy"]))
            out.append(_row("PassivePy's rules without its verb list, same parse",
                            ppy["passivepy_without_verb_list"]))
        out.append(_difference("ours (clausal) - plain spaCy", ppy["difference_vs_spacy"]))
        if "difference_vs_passivepy" in ppy:
            out.append(_difference("ours (clausal) - PassivePy", ppy["difference_vs_passivepy"]))
            out.append(_difference("ours (clausal) - PassivePy without its verb list",
                                   ppy["difference_vs_passivepy_without_verb_list"]))
    out.extend(_sections(results, header, ("conversations", "conversations_dev", "conversations_test")))
    if "conversations" in results:
        conv = results["conversations"]
        if "agreement" in conv:
            agreement = conv["agreement"]
            out.append(f"\nTwo annotators on {agreement['sentences']} sentences:\n")
            out.append("| flag | Cohen's kappa | agreement | positives (first / second) |")
            out.append("| --- | --- | --- | --- |")
            for flag in CONVERSATION_FLAGS:
                cell = agreement[flag]
                kappa = "n/a" if cell["kappa"] is None else f"{cell['kappa']:.3f}"
                out.append(f"| {flag} | {kappa} | {cell['agree']} / {agreement['sentences']} | "
                           f"{cell['positives'][0]} / {cell['positives'][1]} |")
    if "nominalization" in results:
        nom = results["nominalization"]
        out.append(f"\nHand-labelled EWT dev nouns, {nom['tokens']['n']} tokens:\n")
        out.extend(header)
        strata = (("", "all"), ("_random", "random stratum"), ("_suffix", "suffix stratum"),
                  ("_heldout_random", "held-out random stratum"), ("_heldout_suffix", "held-out suffix stratum"))
        for suffix, title in strata:
            if f"ours{suffix}" in nom:
                out.append(_row(f"ours, {title}", nom[f"ours{suffix}"]))
                out.append(_row(f"plain suffix rule (-tion/-ment/-ness/-ity), {title}", nom[f"plain_suffix{suffix}"]))
    return "\n".join(out) + "\n"


def run_all(parts: Iterable[str] = ("ewt", "passivepy", "conversations", "nominalization")) -> dict[str, dict]:
    """Every validation whose data is present (``../shared`` may be absent)."""
    results: dict[str, dict] = {}
    ewt = shared_dataset("ud-english-ewt")
    ppy = shared_dataset("passivepy-crowdsource")
    conllu = ewt / "en_ewt-ud-dev.conllu" if ewt else None
    if "ewt" in parts and conllu:
        results["ewt"] = validate_ewt(conllu)
        results["ewt_even"] = validate_ewt(conllu, half="even")
        results["ewt_odd"] = validate_ewt(conllu, half="odd")
    if "passivepy" in parts and ppy:
        results["passivepy"] = validate_passivepy(ppy / "crowd_source_dataset.csv")
    kumar = shared_dataset("kumar2025-empathic-communication")
    if "conversations" in parts and kumar and CONVERSATION_LABELS.exists():
        results["conversations"] = validate_conversations(kumar)
        results["conversations_dev"] = validate_conversations(kumar, half="dev", second=None)
        results["conversations_test"] = validate_conversations(kumar, half="test", second=None)
    if "nominalization" in parts and conllu and NOMINALIZATION_LABELS.exists():
        results["nominalization"] = validate_nominalizations(conllu)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Print the validation figures (``--json`` for machine-readable output).

    ``--save-flags FILE`` writes the per-sentence flags of the current rules (:func:`sentence_flags`) and
    ``--against FILE`` prints what the current rules changed against such a file (:func:`compare_flags`).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    for option in ("--save-flags", "--against"):
        if option in argv:
            position = argv.index(option)
            if position + 1 >= len(argv):
                print(f"validate: {option} needs a file name", file=sys.stderr)
                return 2
            return _flag_command(option, Path(argv[position + 1]), "--json" in argv)
    results = run_all()
    if not results:
        print("validate: ../shared datasets not found", file=sys.stderr)
        return 2
    print(json.dumps(results, indent=2) if "--json" in argv else markdown(results))
    return 0


def _flag_command(option: str, path: Path, as_json: bool) -> int:
    """``--save-flags FILE`` or ``--against FILE`` (see :func:`main`)."""
    if option == "--against":
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            print(f"validate: cannot read {path}: {error}", file=sys.stderr)
            return 2
    flags = sentence_flags()
    if not flags:
        print("validate: ../shared datasets not found", file=sys.stderr)
        return 2
    if option == "--save-flags":
        path.write_text(json.dumps(flags), encoding="utf-8")
        return 0
    report = compare_flags(old, flags)
    print(json.dumps(report, indent=2) if as_json else change_markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
