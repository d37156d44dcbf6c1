"""Offline, lexicon-based versions of the three judges (rater ``lexicon``, rater_kind ``lexicon``).

They make the demo and the tests run without a network. They are *not* the paper's judges: they are
transparent baselines whose limits are listed in ``docs/judges.md``.

Affect intensity ``E`` (``e_ref``, ``e_gen``)
    VADER (Hutto & Gilbert 2014; the ``vaderSentiment`` package, MIT licence, lexicon shipped inside the
    package). VADER gives each word a rule-adjusted valence (negation, boosters such as "extremely", ALL
    CAPS, the "but" shift). Affect intensity ignores polarity, so per sentence we take the *absolute*
    valences ``v_w`` and map them to [0, 1] with VADER's own compound normalisation:
    ``E_s = S / sqrt(S**2 + 15)`` with ``S = sum_w |v_w| + punctuation emphasis`` (exclamation and
    question marks, as in VADER). ``E(text)`` is the mean of ``E_s`` over the sentences (0 for an empty
    text). "I am devastated and terrified." gives 0.84, "It was okay." 0.23, a neutral sentence 0.

Disturbing-content count ``U`` (``u_ref``, ``u_gen``)
    A checklist lexicon (:data:`CHECKLIST`) in the paper's five categories: death, violence, injury,
    graphic detail, abuse or torture, applied per sentence with the protocol's counting rules: a multiword
    phrase counts once (longest match first, no overlaps: "shot dead" is 1, "gunshot wound" is 1); several
    elements in one sentence count separately; metaphors and vague terms are not on the list or are
    consumed by :data:`EXCLUSIONS` ("dead tired", "panic attack"); a mention within three words after a
    negator ("no", "not", "never", "without", "nobody", "no one") is not counted. ``U(text)`` is the sum
    over sentences.

Conflict avoidance ``ca``
    A cue heuristic on the response: ``A`` counts solution-giving cues (advice phrases, list items,
    sentences opening with an advice verb such as "Keep ...", "Try ...") and harmony/closure cues
    (compromise, reassurance, normalising: "it is common to", "many couples"); ``X`` counts exploration cues
    (open questions, and reflective openers such as "it sounds like", "tell me more", counted 1/2). A question
    that puts a solution to the client ("Have you tried ...?", "Would it help to ...?") is a solution cue, since
    the paper's label 0 asks for open-ended questions. ``ca = 1`` iff ``A > X``. The client narrative is not
    used, so the paper's condition "the client information is clearly insufficient" is not checked.
"""

from __future__ import annotations

import hashlib
import math
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata

from .sentences import SPLITTER_VERSION, split_sentences

LEXICON_VERSION = "2"

#: What the lexicon judge is, shown wherever it is offered (``judge --list``, judge pickers). The figures are
#: measured by ``bench/kumar2025_lexicon_judge.py`` on the Kumar et al. (2025) import (150 conversations with
#: public text, 12 dimensions): the larger |rho| of e_gen and ca with the mean of the three experts.
DESCRIPTION = ("offline lexicon baseline (VADER, checklist, cue counts), not a substitute for an LLM judge: "
               "it does not track experts (Spearman with the Kumar et al. expert panel 0.03-0.30, median 0.16, "
               "where the crowd reaches 0.18-0.73, median 0.48); for demos and tests")


# ----------------------------------------------------------------------------------------------- affect
@lru_cache(maxsize=1)
def _analyzer():  # noqa: ANN202 - the VADER class is untyped
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    class _ValenceAnalyzer(SentimentIntensityAnalyzer):
        """VADER that also returns what its compound score is made of: each token's rule-adjusted valence and
        the punctuation emphasis, split into its exclamation and question-mark parts."""

        def score_valence(self, sentiments, text):  # noqa: ANN001, ANN201 - VADER's signature
            scores = super().score_valence(sentiments, text)
            scores["sentiments"] = list(sentiments)
            scores["emphasis"] = (self._amplify_ep(text), self._amplify_qm(text))
            return scores

    return _ValenceAnalyzer()


def vader_version() -> str:
    """The installed vaderSentiment version (part of the lexicon judge's signature)."""
    try:
        return metadata.version("vaderSentiment")
    except metadata.PackageNotFoundError:
        return "unknown"


#: VADER's valence scale: a word's valence lies in [-4, 4] (rules can push it a little beyond).
VALENCE_SCALE = 4.0


@dataclass(frozen=True)
class AffectContribution:
    """One mark of the lexicon judge's affect intensity: a word (or an emoji) or an emphasising ``!``/``?``.

    ``start``, ``end``: character offsets in the text; ``kind``: ``"word"`` or ``"emphasis"``; ``valence``: the
    word's VADER valence after VADER's rules (negation, boosters, ALL CAPS, the "but" shift; 0 for emphasis);
    ``magnitude``: what it adds to its sentence's ``S`` (``|valence|``, or its share of the punctuation
    emphasis); ``weight``: its share of ``E(text)``, ``E_s * magnitude / S / n`` (see :func:`affect_breakdown`).
    """

    start: int
    end: int
    text: str
    kind: str
    valence: float
    magnitude: float
    weight: float


@dataclass(frozen=True)
class TextAffect:
    """The lexicon judge's affect intensity ``E`` of a text and the contributions it is made of.

    ``intensity`` is ``E(text)``; ``contributions`` are in text order and their ``weight`` s add up to it
    (exactly in arithmetic; to rounding in floating point). ``marks_by`` says whose marks these are: always
    the offline lexicon judge's (VADER), also when the ``E`` shown beside the text is an LLM judge's, which
    gives one number per text and no words.
    """

    intensity: float
    sentences: int
    contributions: tuple[AffectContribution, ...]
    marks_by: str = "lexicon"


@dataclass(frozen=True)
class _SentenceAffect:
    """One sentence scored: its contributions (offsets into the sentence, weight not yet set), ``S``, ``E_s``."""

    parts: tuple[AffectContribution, ...]
    magnitude: float
    intensity: float


def _without_emoji(sentence: str) -> tuple[str, list[int]]:
    """VADER's first step, each emoji replaced by its description, with the offset in ``sentence`` of every
    character of the result (a description's characters point at their emoji), so that tokens can be located."""
    emojis = _analyzer().emojis
    chars: list[str] = []
    where: list[int] = []
    previous_space = True
    for position, character in enumerate(sentence):
        if character in emojis:
            description = (" " if not previous_space else "") + emojis[character]
            chars.extend(description)
            where.extend([position] * len(description))
            previous_space = False
        else:
            chars.append(character)
            where.append(position)
            previous_space = character == " "
    return "".join(chars), where


def _token_spans(text: str) -> list[tuple[int, int]]:
    """Offsets in ``text`` of VADER's tokens: whitespace-separated, outer punctuation stripped unless that
    leaves two characters or fewer (VADER keeps those whole, as emoticons)."""
    spans = []
    position = 0
    for raw in text.split():
        start = text.index(raw, position)
        position = start + len(raw)
        stripped = raw.strip(string.punctuation)
        if len(stripped) <= 2:
            spans.append((start, position))
        else:
            lead = len(raw) - len(raw.lstrip(string.punctuation))
            spans.append((start + lead, start + lead + len(stripped)))
    return spans


def _sentence_affect(sentence: str) -> _SentenceAffect:
    """The contributions of one sentence and the ``S`` and ``E_s`` computed from them (the one implementation).

    ``S`` is the sum of the words' ``|valence|`` (in token order, as VADER sums) plus, when that is above 0,
    the punctuation emphasis, shared among the ``!`` (their part) and the ``?`` (theirs) that caused it;
    ``E_s = S / sqrt(S**2 + 15)``. The tokens of an emoji's description share the emoji's one mark.
    """
    translated, where = _without_emoji(sentence)
    scores = _analyzer().polarity_scores(translated)
    valences = scores.get("sentiments", [])
    tokens = _token_spans(translated.strip())
    offset = len(translated) - len(translated.lstrip())
    if len(tokens) != len(valences):  # VADER's tokens are whitespace-split: this cannot differ
        raise RuntimeError(f"VADER rated {len(valences)} tokens of a sentence with {len(tokens)}")
    words: dict[tuple[int, int], list[float]] = {}
    for (start, end), valence in zip(tokens, valences, strict=True):
        if valence:
            span = (where[offset + start], where[offset + end - 1] + 1)
            words.setdefault(span, []).append(float(valence))
    parts = [AffectContribution(a, b, sentence[a:b], "word", sum(v), sum(abs(x) for x in v), 0.0)
             for (a, b), v in words.items()]
    magnitude = float(sum(part.magnitude for part in parts))  # in token order, as VADER sums
    exclamation, question = scores.get("emphasis", (0.0, 0.0))
    if magnitude > 0 and exclamation + question > 0:
        magnitude += exclamation + question
        for mark, amount in (("!", exclamation), ("?", question)):
            found = [where[k] for k, character in enumerate(translated) if character == mark]
            parts.extend(AffectContribution(p, p + 1, sentence[p:p + 1], "emphasis", 0.0, amount / len(found), 0.0)
                         for p in found if amount)
    parts.sort(key=lambda part: (part.start, part.end))
    intensity = magnitude / math.sqrt(magnitude * magnitude + 15.0) if magnitude > 0 else 0.0
    return _SentenceAffect(tuple(parts), magnitude, intensity)


def sentence_intensity(sentence: str) -> float:
    """Affect intensity of one sentence in [0, 1] (see the module docstring)."""
    return _sentence_affect(sentence).intensity


def affect_intensity(text: str, sentences: Sequence[str] | None = None) -> float:
    """Affect intensity ``E(text)`` in [0, 1]: the mean sentence intensity (0 for an empty text).

    ``sentences`` are the text's sentences when the caller has them (a judge run passes those of its
    segmentation); by default the regex splitter's. The same number as :func:`affect_breakdown` 's
    ``intensity`` on the same sentences.
    """
    if sentences is None:
        sentences = split_sentences(text)
    if not sentences:
        return 0.0
    return float(sum(sentence_intensity(s) for s in sentences) / len(sentences))


def affect_breakdown(text: str, sentence_spans: Sequence[tuple[int, int]] | None = None) -> TextAffect:
    """``E(text)`` with the words, emoji and emphasising marks that make it, located in ``text``.

    ``E(text) = sum_s E_s / n`` over the ``n`` sentences, ``E_s = S_s / sqrt(S_s**2 + 15)`` with ``S_s`` the sum of
    the magnitudes of the sentence's contributions (:func:`_sentence_affect`, which :func:`affect_intensity`
    uses too). ``E_s`` is not additive in the words, so each contribution gets the share of ``E_s`` its magnitude
    has in ``S_s``: ``weight = E_s * magnitude / S_s / n``. The weights of a text add up to ``E(text)``.

    ``sentence_spans``: the ``(start, end)`` offsets of the sentences the judge rated (a run's default is the
    spaCy parse, :func:`empathy.judges.segment.sentence_spans`); by default the regex splitter's, located in
    the text. Raises TypeError for a text that is not a string and ValueError for a span outside the text.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if sentence_spans is None:
        sentence_spans = locate_sentences(text, split_sentences(text))
    scored = []
    for start, end in sentence_spans:
        if not 0 <= start <= end <= len(text):
            raise ValueError(f"sentence span ({start}, {end}) is outside the text of length {len(text)}")
        scored.append((start, _sentence_affect(text[start:end])))
    n = len(scored)
    if not n:
        return TextAffect(0.0, 0, ())
    contributions = [AffectContribution(start + part.start, start + part.end, part.text, part.kind, part.valence,
                                        part.magnitude, sentence.intensity * part.magnitude / sentence.magnitude / n)
                     for start, sentence in scored for part in sentence.parts]
    intensity = float(sum(sentence.intensity for _, sentence in scored) / n)
    return TextAffect(intensity, n, tuple(contributions))


def lost_affect(reference: TextAffect, generation: TextAffect) -> list[str]:
    """The affect words the reference carries and the generation does not (case-insensitive), heaviest first.

    A word's weight is the sum of its contributions' weights in the reference; ties keep text order. Emphasis
    marks are not words and are left out.
    """
    kept = {part.text.lower() for part in generation.contributions if part.kind == "word"}
    weights: dict[str, float] = {}
    for part in reference.contributions:
        word = part.text.lower()
        if part.kind == "word" and word not in kept:
            weights[word] = weights.get(word, 0.0) + part.weight
    return sorted(weights, key=lambda word: -weights[word])


def lost_summary(reference: TextAffect, generation: TextAffect, limit: int = 6) -> str:
    """One line: ``"lost: devastated, furious"`` (at most ``limit`` words, then ``"+N more"``), ``"lost: none"``."""
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    words = lost_affect(reference, generation)
    if not words:
        return "lost: none"
    more = f" (+{len(words) - limit} more)" if len(words) > limit else ""
    return "lost: " + ", ".join(words[:limit]) + more


# -------------------------------------------------------------------------------------- disturbing count
#: The checklist: category -> phrases; each phrase is a space-separated sequence of token regexes.
CHECKLIST: dict[str, tuple[str, ...]] = {
    "death": (
        "death tolls?", "deaths?", "dead", "dies|died|die|dying", "kill|kills|killed|killing|killings",
        "killers?", "fatal|fatally|fatalit(?:y|ies)", "murder(?:s|ed|ing|ers?)?", "homicides?",
        "corpses?", "dead bod(?:y|ies)", "body bags?", "slain", "massacre[sd]?", "suicides?",
        "drown(?:s|ed|ing)?", "perish(?:ed|es|ing)?", "casualt(?:y|ies)", "shot dead",
        "lost (?:his|her|their|its) li(?:fe|ves)", "human remains", "executions?", "funerals?",
    ),
    "violence": (
        "shoot|shoots|shooting|shootings", "shot", "gunfire", "gun(?:man|men)", "stab|stabs|stabbed|stabbing",
        "stabbings", "bomb(?:s|ed|ing|ings)?", "explosions?", "attack(?:s|ed|ing|ers?)?",
        "assault(?:s|ed|ing)?", "beaten|beating|beatings", "punch(?:ed|ing)", "violence|violent",
        "riots?", "airstrikes?|air strikes?", "shelling", "strangl(?:e|ed|ing)", "choked", "gunpoint",
        "terror(?:ist)? attacks?", "opened fire", "mass shootings?", "hostages?",
    ),
    "injury": (
        "injur(?:y|ies|ed|ing)", "wound(?:s|ed)?", "gunshot wounds?", "bleed(?:s|ing)?", "bled",
        "fracture[sd]?", "broken bones?", "hospitali[sz]ed", "maimed", "amputat(?:ed|ion|ions)",
        "bruis(?:e|es|ed)", "concussions?", "paraly[sz]ed", "critical condition", "burns?|burned",
        "heart attacks?", "hurt",
    ),
    "graphic": (
        "blood-soaked|blood-stained|bloodstained|bloodied|bloody", "pools? of blood", "blood", "gore|gory",
        "charred", "dismember(?:ed|ment)", "decapitat(?:ed|ion)", "behead(?:ed|ing|ings)?", "entrails",
        "severed", "disembowel(?:ed|led)?", "mangled", "burned alive", "brain matter", "flesh", "guts",
        "splatter(?:ed)?", "rotting", "decompos(?:ed|ing)", "screams?|screaming|screamed",
    ),
    "abuse": (
        "abuse[sdr]?|abusers|abusing|abusive", "sexual(?:ly)? (?:abused?|assault(?:ed)?)", "child abuse",
        "domestic violence", "tortur(?:e|ed|es|ing)", "rape[sd]?|raping|rapists?", "molest(?:ed|ation|ing)?",
        "trafficked|trafficking", "enslaved", "waterboard(?:ed|ing)", "held captive",
    ),
}
#: Phrases that are consumed without counting: uses of a checklist word that name no concrete harm. Three kinds
#: (:data:`FIGURATIVE_USES` names them; each tested with literal uses that still count):
#:
#: * *expressive frames*: the word names what the speaker feels like doing, or a speech act, not an event:
#:   "I want to scream", "I could scream", "felt like screaming", "screaming at me", "makes me scream";
#: * *hyperbole*: intensifiers and idioms: "scared to death", "this is killing me", "dying of embarrassment",
#:   "dead tired", "dead serious", "killing time", "my phone died";
#: * *other senses*: fixed phrases in which the word is not about harm: "give it a shot", "flu shot", "photo
#:   shoot", "bad blood", "blood relatives", "abuse of power", "fatal error", "panic attack", "blood pressure".
#:
#: A desire frame is *not* an exclusion for harm itself: "I want to die", "he wanted to kill her" still count.
EXCLUSIONS: tuple[str, ...] = (
    "dead tired", "dead end", "dead set", "killing it", "dying to", "to die for", "panic attacks?",
    "shot at (?:the|a) (?:title|record|win)", "bloody mary", "blood pressure", "blood tests?", "blood sugar",
    "burn out|burnout|burned out", "hurt feelings", "feel(?:s|ing)? hurt",
    # expressive frames
    "(?:want|wants|wanted|wanting|need|needs|needed|going|about|ready) to scream",
    "(?:could|would|might|i'd|i'll|gonna) scream", "(?:feel|feels|felt|feeling) like (?:screaming|scream)",
    "(?:scream|screams|screamed|screaming) at (?:me|you|him|her|us|them|each)",
    "(?:scream|screams|screamed|screaming) into (?:my|his|her|their|your|our|a) (?:pillow|scarf|sleeve|hands|towel)",
    "(?:make|makes|made|making) (?:me|you) scream",
    "(?:feel|feels|felt|feeling) like dying", "(?:feel|feels|felt|feeling) like i'm dying",
    "(?:feel|feels|felt|feeling) like i (?:was|am) dying",
    # hyperbole
    "(?:bored|scared|frightened|terrified|worried|sick|tired|stressed|embarrassed|annoyed) to death",
    "(?:is|it's|that's|this|was) killing me", "(?:dying|died) (?:of|from) (?:embarrassment|laughter|boredom|"
    "curiosity|shame)", "(?:dying|died) laughing", "(?:kill|killing) time", "(?:i'd|would|could) kill for",
    "dead (?:serious|wrong|last|quiet|silent|silence|heat|ringer|giveaway|center|centre)",
    "(?:phone|battery|laptop|engine|car|computer) (?:died|dies|dying|dead)",
    "(?:phone|battery|laptop|engine|car|computer) (?:is|was) dead",
    # other senses
    "give (?:it|this|that) a shot", "worth a shot", "long shot", "big shots?", "(?:flu|booster|vaccine) shots?",
    "photo shoots?", "shooting stars?",
    "(?:shoot|shoots|shooting|shot) (?:a|the) (?:film|movie|video|scene|documentary|photo|photos|commercial)",
    "bad blood", "blood (?:relatives?|brothers?|ties|type|donors?|donation|bank)", "blood (?:boil|boils|boiled|"
    "boiling)", "bleeding hearts?", "abuse of (?:power|trust|authority|office|process|discretion)",
    "(?:substance|drug|alcohol) abuse", "fatal (?:error|flaw|mistake)",
    "attack (?:the|this|that) (?:problem|issue|question|task)", "(?:anxiety|asthma) attacks?",
    "hurts? (?:my|his|her|their|our|your) feelings", "(?:deeply|so) hurt",
)
#: The kinds of non-harm use :data:`EXCLUSIONS` covers (documented in docs/detectors.md with what remains).
FIGURATIVE_USES: tuple[str, ...] = ("expressive frame", "hyperbole", "other sense")
_NEGATORS: frozenset[str] = frozenset({"no", "not", "never", "without", "nobody", "none", "neither", "nor",
                                       "n't"})
_TOKEN = re.compile(r"[a-z]+(?:[-'][a-z]+)*|n't")


@dataclass(frozen=True)
class _Pattern:
    category: str | None  # None: an exclusion
    parts: tuple[re.Pattern[str], ...]


@lru_cache(maxsize=1)
def _patterns() -> tuple[_Pattern, ...]:
    patterns = [_Pattern(category, tuple(re.compile(part) for part in phrase.split(" ")))
                for category, phrases in CHECKLIST.items() for phrase in phrases]
    patterns += [_Pattern(None, tuple(re.compile(part) for part in phrase.split(" "))) for phrase in EXCLUSIONS]
    # Longest first so that a phrase wins over its words; exclusions win ties (they are more specific).
    return tuple(sorted(patterns, key=lambda p: (-len(p.parts), p.category is not None)))


@lru_cache(maxsize=65536)
def _candidates(token: str) -> tuple[_Pattern, ...]:
    """Patterns whose first part matches ``token`` (memoised: the vocabulary of a corpus is small)."""
    return tuple(p for p in _patterns() if p.parts[0].fullmatch(token))


def checklist_hash() -> str:
    """First 12 hex digits of the SHA-256 of the checklist, exclusions and negators."""
    payload = repr((sorted(CHECKLIST.items()), EXCLUSIONS, sorted(_NEGATORS), LEXICON_VERSION))
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


def _normalised(sentence: str) -> tuple[str, list[int]]:
    """The sentence as the checklist reads it, with the offset in ``sentence`` of each of its characters.

    Lower case, curly apostrophes straight, whitespace runs as one space (the judges see sentences so
    collapsed), "no one" as "nobody" (same length) and "n't" split off as " n't" (the inserted space maps to
    the "n"). Positions let :func:`disturbing_spans` point at the very characters a match was read from.
    """
    chars: list[str] = []
    where: list[int] = []
    space = True  # drop leading whitespace and collapse runs
    for position, character in enumerate(sentence):
        if character.isspace():
            if not space:
                chars.append(" ")
                where.append(position)
                space = True
            continue
        space = False
        for lowered in character.lower().replace("\u2019", "'"):
            chars.append(lowered)
            where.append(position)
    text = "".join(chars).replace("no one", "nobody")  # same length: positions unchanged
    if "n't" not in text:
        return text, where
    out: list[str] = []
    out_where: list[int] = []
    start = 0
    for match in re.finditer("n't", text):
        out.append(text[start:match.start()] + " ")
        out_where.extend(where[start:match.start()])
        out_where.append(where[match.start()])
        start = match.start()
    out.append(text[start:])
    out_where.extend(where[start:])
    return "".join(out), out_where


def _located_tokens(sentence: str) -> list[tuple[str, int, int]]:
    """``(token, start, end)`` of the checklist's tokens, with character offsets into ``sentence``."""
    text, where = _normalised(sentence)
    return [(match.group(), where[match.start()], where[match.end() - 1] + 1) for match in _TOKEN.finditer(text)]


def _tokens(sentence: str) -> list[str]:
    return [token for token, _, _ in _located_tokens(sentence)]


@dataclass(frozen=True)
class DisturbingMatch:
    """One counted checklist element: characters ``[start, end)`` of the text, its category and phrase."""

    start: int
    end: int
    category: str
    phrase: str


def _matches(sentence: str) -> list[DisturbingMatch]:
    """The counted matches of one sentence with offsets into it (the one implementation of the counting rules)."""
    located = _located_tokens(sentence)
    tokens = [token for token, _, _ in located]
    found: list[DisturbingMatch] = []
    i = 0
    while i < len(tokens):
        for pattern in _candidates(tokens[i]):
            n = len(pattern.parts)
            if i + n <= len(tokens) and all(p.fullmatch(t) for p, t in zip(pattern.parts[1:], tokens[i + 1:i + n],
                                                                              strict=True)):
                negated = any(t in _NEGATORS for t in tokens[max(0, i - 3):i])
                if pattern.category is not None and not negated:
                    found.append(DisturbingMatch(located[i][1], located[i + n - 1][2], pattern.category,
                                                 " ".join(tokens[i:i + n])))
                i += n
                break
        else:
            i += 1
    return found


def disturbing_matches(sentence: str) -> list[tuple[str, str]]:
    """The counted ``(category, phrase)`` matches of one sentence, in order."""
    return [(match.category, match.phrase) for match in _matches(sentence)]


def disturbing_spans(text: str, sentence_spans: Sequence[tuple[int, int]] | None = None) -> list[DisturbingMatch]:
    """Every counted checklist element of ``text`` with its character offsets in ``text``.

    ``sentence_spans`` are the ``(start, end)`` offsets of the sentences the count was made on (the judges'
    default, :func:`empathy.judges.segment.sentence_spans`); by default the regex splitter's sentences, located
    in the text. The number of matches is :func:`disturbing_count` of the same sentences, by construction: both
    read :func:`_matches`. Raises TypeError for a text that is not a string and ValueError for a sentence span
    outside the text.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if sentence_spans is None:
        sentence_spans = locate_sentences(text, split_sentences(text))
    found: list[DisturbingMatch] = []
    for start, end in sentence_spans:
        if not 0 <= start <= end <= len(text):
            raise ValueError(f"sentence span ({start}, {end}) is outside the text of length {len(text)}")
        found.extend(DisturbingMatch(start + m.start, start + m.end, m.category, m.phrase)
                     for m in _matches(text[start:end]))
    return found


def locate_sentences(text: str, sentences: Sequence[str]) -> list[tuple[int, int]]:
    """Offsets in ``text`` of whitespace-collapsed ``sentences`` taken from it in order (the regex splitter's).

    Each sentence is matched character by character from where the previous one ended, any run of whitespace
    in the text matching one space of the sentence: linear in the text's length. Raises ValueError when a
    sentence is not found there (the sentences are not this text's).
    """
    spans: list[tuple[int, int]] = []
    position = 0
    for sentence in sentences:
        words = sentence.split()
        if not words:
            continue
        pattern = r"\s+".join(re.escape(word) for word in words)
        match = re.compile(pattern).search(text, position)
        if match is None:
            raise ValueError(f"sentence {sentence[:60]!r} is not in the text after offset {position}")
        spans.append((match.start(), match.end()))
        position = match.end()
    return spans


def sentence_count(sentence: str) -> int:
    """Aversive count of one sentence under the checklist and counting rules."""
    return len(disturbing_matches(sentence))


def disturbing_count(text: str, sentences: Sequence[str] | None = None) -> int:
    """``U(text)``: the aversive counts summed over the text's sentences (``sentences``: as for affect)."""
    if sentences is None:
        sentences = split_sentences(text)
    return sum(sentence_count(s) for s in sentences)


# ----------------------------------------------------------------------------------- conflict avoidance
_SOLUTION = re.compile(
    r"\b(?:you (?:should|could|might want to|may want to|need to|must|have to|can try|ought to)|"
    r"try (?:to|talking|setting|writing|taking|using)|i (?:would |'d )?(?:suggest|recommend|advise|encourage)|"
    r"consider(?:ing)?|it(?: is|'s| might be| may be| would be| could be) (?:important|helpful|a good idea|"
    r"best|wise|useful) to|make sure|here are (?:some|a few)|(?:some|a few|these) (?:tips|strategies|steps|"
    r"suggestions|ideas)|set(?:ting)? (?:clear |healthy )?boundaries|communicate (?:openly|calmly|honestly|"
    r"clearly)|seek(?:ing)? (?:professional )?(?:help|support)|talk(?:ing)? to (?:a|your) (?:therapist|"
    r"counselor|manager|hr|friend)|practice self-care|take (?:a|some) (?:step|time|break)|"
    r"it (?:may|might|could|would|will|can) (?:help|be (?:helpful|useful|reasonable|worth|wise|best))|"
    r"(?:usually|often|generally) works|next steps?)\b", re.I)
#: The harmony and closure cues in the order the rules try them, each with its category
#: (:data:`CUE_CATEGORIES`). :data:`_HARMONY` is their alternation, each alternative a named group so that a
#: match names its cue; the rule text (hashed into the signature) is the plain alternation.
_HARMONY_CUES: tuple[tuple[str, str], ...] = (
    ("compromise", r"(?:find|finding) (?:a )?(?:common ground|middle ground|compromise|balance)"),
    ("compromise", r"compromise"),
    ("compromise", r"meet (?:them|him|her) halfway"),
    ("deflection", r"see (?:things )?from (?:their|his|her) (?:perspective|point of view)"),
    ("deflection", r"(?:they|he|she) (?:probably|likely|surely) (?:mean|meant|care|love|want)"),
    ("reassurance", r"everything will"),
    ("reassurance", r"(?:it|things) will (?:all )?(?:be|work out|get better)"),
    ("reassurance", r"don't worry"),
    ("reassurance", r"try not to worry"),
    ("reassurance", r"stay positive"),
    ("reassurance", r"look on the bright side"),
    ("closure", r"move (?:forward|on)"),
    ("closure", r"let (?:it )?go"),
    ("closure", r"forgive"),
    ("compromise", r"both (?:of you|sides)"),
    ("closure", r"i hope (?:this|these|that) helps?"),
    ("closure", r"good luck"),
    ("normalising", r"you(?: are|'re) not alone"),
    ("normalising", r"it(?: is|'s) (?:common|normal|natural|very common|completely normal) to"),
    ("normalising", r"many (?:couples|people|parents|families|colleagues|new \w+)"),
    ("reassurance", r"i(?:'m| am) sure"),
    ("reassurance", r"(?:a|the) (?:wonderful|great|good|strong) (?:foundation|sign|opportunity)"),
)
_HARMONY_RULE = r"\b(?:" + "|".join(pattern for _, pattern in _HARMONY_CUES) + r")\b"
_HARMONY = re.compile(r"\b(?:" + "|".join(f"(?P<h{k}>{pattern})" for k, (_, pattern) in enumerate(_HARMONY_CUES))
                      + r")\b", re.I)
_REFLECTIVE = re.compile(
    r"\b(?:i wonder|tell me more|help me understand|it sounds like|i hear|what comes up|what matters|"
    r"part of you|i'm curious|i am curious)\b", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+\S", re.M)
#: Questions that put a solution to the client rather than open the conflict up ("Have you tried talking to
#: him?", "Would it help to ...?"): the paper's label 0 asks for *open-ended* questions, so these count as
#: solution cues, not exploration.
_SUGGESTING_QUESTION = re.compile(
    r"^\W*(?:(?:have|did) you (?:tried|thought about|considered|looked into)|would it (?:help|be (?:helpful|"
    r"worth|possible))|could you (?:try|talk|ask|tell|set|take)|can you (?:try|talk|ask|set|take)|"
    r"why not|what if you|how about|do you think you could|is it possible to)\b", re.I)
#: Verbs that open an imperative (advice) sentence: "Keep records ...", "Try planning ...".
IMPERATIVE_VERBS: frozenset[str] = frozenset({
    "agree", "arrange", "ask", "avoid", "book", "call", "consider", "contact", "discuss", "document", "explain",
    "find", "focus", "give", "go", "have", "join", "keep", "let", "limit", "look", "make", "plan", "practice",
    "practise", "prioritise", "prioritize", "reach", "remember", "request", "schedule", "seek", "set", "speak",
    "spend", "start", "stop", "suggest", "take", "talk", "tell", "think", "try", "write",
})
_FIRST_WORD = re.compile(r"^[\W\d]*([A-Za-z']+)(?:\s+(\w+))?")

#: The categories of the conflict-avoidance cues: category -> (side, what one cue counts, description). Side
#: ``avoidance`` cues add to ``A``, ``exploration`` cues to ``X``; ``ca = 1`` iff ``A > X``.
CUE_CATEGORIES: dict[str, tuple[str, float, str]] = {
    "solution": ("avoidance", 1.0, "solution-giving: advice phrase, list item, advice imperative, or a question "
                 "that puts a solution"),
    "compromise": ("avoidance", 1.0, "harmony-seeking: compromise, common ground, 'both of you'"),
    "deflection": ("avoidance", 1.0, "deflection to the other side: their perspective, what they 'probably mean'"),
    "reassurance": ("avoidance", 1.0, "reassurance, positive closure: 'everything will work out', 'don't worry'"),
    "closure": ("avoidance", 1.0, "closing the topic: 'move on', 'let it go', 'I hope this helps'"),
    "normalising": ("avoidance", 1.0, "minimising by normalising: 'it is common to', 'many couples', "
                    "'you are not alone'"),
    "question": ("exploration", 1.0, "open question"),
    "reflection": ("exploration", 0.5, "reflective opener ('it sounds like', 'tell me more'), counted 1/2"),
}
#: The avoidance categories other than solution-giving: the harmony/closure cues of ``H``.
HARMONY_CATEGORIES: tuple[str, ...] = ("compromise", "deflection", "reassurance", "closure", "normalising")


@dataclass(frozen=True)
class TextCue:
    """A cue the lexicon rules see in a text: characters ``[start, end)``, the text, its category and rule."""

    start: int
    end: int
    text: str
    category: str
    rule: str


@dataclass(frozen=True)
class ConflictCues:
    """The cues behind a lexicon ``ca`` label, located in the response; the counts and the label follow from them.

    ``cues`` are :class:`TextCue` s in text order with a category of :data:`CUE_CATEGORIES`.
    """

    cues: tuple[TextCue, ...] = ()

    def _count(self, *categories: str) -> int:
        return sum(1 for cue in self.cues if cue.category in categories)

    @property
    def solution(self) -> int:
        """Solution-giving cues: advice phrases, list items, advice imperatives, suggesting questions."""
        return self._count("solution")

    @property
    def harmony(self) -> int:
        """Harmony and closure cues (:data:`HARMONY_CATEGORIES`)."""
        return self._count(*HARMONY_CATEGORIES)

    @property
    def questions(self) -> int:
        """Open questions."""
        return self._count("question")

    @property
    def reflective(self) -> int:
        """Reflective openers."""
        return self._count("reflection")

    @property
    def avoidance(self) -> float:
        """``A``: solution-giving plus harmony/closure cues."""
        return float(self.solution + self.harmony)

    @property
    def exploration(self) -> float:
        """``X``: questions plus half the reflective openers."""
        return self.questions + 0.5 * self.reflective

    @property
    def label(self) -> int:
        """1 (conflict avoidance) iff ``A > X``."""
        return int(self.avoidance > self.exploration)


def _rated_sentences(text: str, sentences: Sequence[str] | None) -> list[tuple[str, tuple[int, int]]]:
    """The sentences the rules read (apostrophes straightened, blank ones dropped) with their offsets in ``text``."""
    sentences = split_sentences(text) if sentences is None else [s.replace("’", "'") for s in sentences]
    sentences = [s for s in sentences if s.split()]
    return list(zip(sentences, locate_sentences(text, sentences), strict=True))


def _cue(response: str, start: int, end: int, category: str, rule: str) -> TextCue:
    return TextCue(start, end, response[start:end], category, rule)


def _sentence_cues(response: str, sentences: list[tuple[str, tuple[int, int]]]) -> list[TextCue]:
    """Cues that are whole sentences: questions (open, or putting a solution) and advice imperatives."""
    cues = []
    for sentence, (start, end) in sentences:
        if sentence.rstrip("\"')”’ ").endswith("?"):
            suggesting = _SUGGESTING_QUESTION.match(sentence) is not None
            cues.append(_cue(response, start, end, "solution" if suggesting else "question",
                             "question that puts a solution" if suggesting else "open question"))
        match = _FIRST_WORD.match(sentence)
        if (match and match.group(1).lower() in IMPERATIVE_VERBS and not sentence.rstrip().endswith("?")
                and (match.group(2) or "").lower() != "me"):  # "Tell me more" explores
            cues.append(_cue(response, start, end, "solution", f"advice imperative '{match.group(1)}'"))
    return cues


def conflict_cues(response: str, sentences: Sequence[str] | None = None) -> ConflictCues:
    """The conflict-avoidance and exploration cues of a response, located (``sentences``: as for affect).

    One implementation for the label and the marks: :func:`conflict_avoidance` is the label of these cues.
    Phrase cues are the matches of the rule patterns; list items run from their marker to the end of the line;
    questions and advice imperatives are whole sentences.
    """
    if not isinstance(response, str):
        raise TypeError(f"response must be a str, got {type(response).__name__}")
    text = response.replace("’", "'")  # one character for one: offsets stay those of the response
    cues = [_cue(response, m.start(), m.end(), "solution", "advice phrase") for m in _SOLUTION.finditer(text)]
    for match in _LIST_ITEM.finditer(text):
        start = match.start() + len(match.group()) - len(match.group().lstrip())
        end = text.find("\n", start)
        cues.append(_cue(response, start, len(text) if end < 0 else end, "solution", "list item"))
    for match in _HARMONY.finditer(text):
        category = _HARMONY_CUES[int(str(match.lastgroup)[1:])][0]
        cues.append(_cue(response, match.start(), match.end(), category, f"{category} phrase"))
    cues += [_cue(response, m.start(), m.end(), "reflection", "reflective opener") for m in _REFLECTIVE.finditer(text)]
    cues += _sentence_cues(response, _rated_sentences(text, sentences))
    return ConflictCues(tuple(sorted(cues, key=lambda cue: (cue.start, -cue.end, cue.category, cue.rule))))


def conflict_avoidance(response: str, sentences: Sequence[str] | None = None) -> int:
    """Lexicon ``ca`` label of a response: 1 iff avoidance cues outnumber exploration cues."""
    return conflict_cues(response, sentences).label


#: Cues of tension in a client narrative, by category (:data:`TENSION_CATEGORIES`).
_TENSION_CUES: tuple[tuple[str, str], ...] = (
    ("ambivalence", r"torn|conflicted|mixed feelings|part of me|on (?:the )?one hand|on the other hand|"
                    r"i (?:don't|do not|can't|cannot) (?:even )?(?:know|tell|decide) (?:whether|if|what|how)"),
    ("friction", r"argu(?:e|ed|es|ing|ment|ments)|fights?|fighting|fought|(?:yell|shout|snap)(?:s|ed|ped|ing)? at|"
                 r"blam(?:e|es|ed|ing)|critici[sz](?:e|es|ed|ing)|resent(?:s|ed|ful|ment)?|betray(?:s|ed|al)?|"
                 r"turn(?:s|ed)? cold|(?:won't|doesn't|didn't|don't) (?:listen|talk|reply|respond)|"
                 r"haven't spoken|stopped (?:speaking|talking)|called (?:me|us|him|her) out|piled on|"
                 r"humiliat(?:e|ed|ing|ion)|interrogat(?:e|ed|es|ing)"),
    ("fear", r"(?:i'm|i am|i was|i feel|i felt) (?:so |really |terribly )?(?:afraid|scared|terrified|frightened|"
             r"worried) (?:of|that|to)"),
)
_TENSION = re.compile(r"\b(?:" + "|".join(f"(?P<t{k}>{pattern})" for k, (_, pattern) in enumerate(_TENSION_CUES))
                      + r")\b", re.I)
_WANTING_BUT = re.compile(r"\bi (?:want|wanted|need|needed|wish)\b.*\b(?:but|yet)\b", re.I)
#: What the tension marks on a client narrative show (:func:`client_tension`).
TENSION_CATEGORIES: dict[str, str] = {
    "ambivalence": "ambivalence: 'torn', 'part of me', 'I don't know whether'",
    "friction": "friction with the other person: arguing, blame, criticism, betrayal, silence",
    "fear": "fear about the relationship: 'I am afraid that', 'terrified of'",
    "mixed wants": "a sentence where the client wants something 'but' or 'yet' something else",
    "question": "a question the client asks",
}


def client_tension(narrative: str, sentences: Sequence[str] | None = None) -> tuple[TextCue, ...]:
    """Where a client narrative states the tension a response should explore (``sentences``: as for affect).

    Phrase cues (:data:`TENSION_CATEGORIES`: ambivalence, friction, fear) and whole sentences (the client's own
    questions; a wish set against something else, "I want him to comfort me, but I am terrified ..."). These
    marks do not enter the lexicon's ``ca`` label, which reads only the response (:func:`conflict_cues`): they
    show a reader what the response leaves unexplored; the paper's condition "the client information is
    clearly insufficient" is not checked by the lexicon judge.
    """
    if not isinstance(narrative, str):
        raise TypeError(f"narrative must be a str, got {type(narrative).__name__}")
    text = narrative.replace("’", "'")
    cues = []
    for match in _TENSION.finditer(text):
        category = _TENSION_CUES[int(str(match.lastgroup)[1:])][0]
        cues.append(_cue(narrative, match.start(), match.end(), category, f"{category} phrase"))
    for sentence, (start, end) in _rated_sentences(text, sentences):
        if sentence.rstrip("\"')”’ ").endswith("?"):
            cues.append(_cue(narrative, start, end, "question", "the client's question"))
        elif _WANTING_BUT.search(sentence):
            cues.append(_cue(narrative, start, end, "mixed wants", "'I want ... but'"))
    return tuple(sorted(cues, key=lambda cue: (cue.start, -cue.end, cue.category)))


# ----------------------------------------------------------------------------------------- signatures
def signature(protocols: tuple[str, ...] = ("affect", "disturbing", "conflict"), split: str = SPLITTER_VERSION,
              tasks: str | None = None) -> str:
    """The signature of a lexicon-judge run over the given short protocol names and sentence segmentation.

    ``tasks`` names which protocols each task's rows got (``paper``, ``all``, ``custom#<digest>``; see
    :func:`empathy.judges.run.run_judge`); ``None`` leaves the field out.
    """
    methods = {"affect": f"affect=vader-abs-intensity/vaderSentiment-{vader_version()}",
               "disturbing": f"disturbing=checklist#{checklist_hash()}",
               "conflict": f"conflict=cue-heuristic#{_cue_hash()}"}
    parts = ";".join(methods[name] for name in protocols)
    scope = f"tasks={tasks};" if tasks else ""
    return f"rater=lexicon;kind=lexicon;lexicon_version={LEXICON_VERSION};{parts};{scope}split={split}"


def _cue_hash() -> str:
    rules = (_SOLUTION.pattern, _HARMONY_RULE, _REFLECTIVE.pattern, _LIST_ITEM.pattern, _SUGGESTING_QUESTION.pattern)
    payload = "|".join(rules)
    return hashlib.sha256(payload.encode()).hexdigest()[:12]
