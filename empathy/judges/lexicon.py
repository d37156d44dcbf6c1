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
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata

from .sentences import SPLITTER_VERSION, split_sentences

LEXICON_VERSION = "1"

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

    class _IntensityAnalyzer(SentimentIntensityAnalyzer):
        """VADER with an extra polarity-free score: normalised sum of absolute valences."""

        def score_valence(self, sentiments, text):  # noqa: ANN001, ANN201 - VADER's signature
            scores = super().score_valence(sentiments, text)
            magnitude = float(sum(abs(s) for s in sentiments))
            if magnitude > 0:
                magnitude += self._punctuation_emphasis(text)
            scores["intensity"] = magnitude / math.sqrt(magnitude * magnitude + 15.0)
            return scores

    return _IntensityAnalyzer()


def vader_version() -> str:
    """The installed vaderSentiment version (part of the lexicon judge's signature)."""
    try:
        return metadata.version("vaderSentiment")
    except metadata.PackageNotFoundError:
        return "unknown"


def sentence_intensity(sentence: str) -> float:
    """Affect intensity of one sentence in [0, 1] (see the module docstring)."""
    return float(_analyzer().polarity_scores(sentence)["intensity"])


def affect_intensity(text: str, sentences: Sequence[str] | None = None) -> float:
    """Affect intensity ``E(text)`` in [0, 1]: the mean sentence intensity (0 for an empty text).

    ``sentences`` are the text's sentences when the caller has them (a judge run passes those of its
    segmentation); by default the regex splitter's.
    """
    if sentences is None:
        sentences = split_sentences(text)
    if not sentences:
        return 0.0
    return float(sum(sentence_intensity(s) for s in sentences) / len(sentences))


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
#: Phrases that are consumed without counting (metaphors, vague or medical-non-violent uses).
EXCLUSIONS: tuple[str, ...] = (
    "dead tired", "dead end", "dead set", "killing it", "dying to", "to die for", "panic attacks?",
    "shot at (?:the|a) (?:title|record|win)", "bloody mary", "blood pressure", "blood tests?", "blood sugar",
    "burn out|burnout|burned out", "hurt feelings", "feel(?:s|ing)? hurt",
)
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
_HARMONY = re.compile(
    r"\b(?:(?:find|finding) (?:a )?(?:common ground|middle ground|compromise|balance)|compromise|"
    r"meet (?:them|him|her) halfway|see (?:things )?from (?:their|his|her) (?:perspective|point of view)|"
    r"(?:they|he|she) (?:probably|likely|surely) (?:mean|meant|care|love|want)|everything will|"
    r"(?:it|things) will (?:all )?(?:be|work out|get better)|don't worry|try not to worry|stay positive|"
    r"look on the bright side|move (?:forward|on)|let (?:it )?go|forgive|both (?:of you|sides)|"
    r"i hope (?:this|these|that) helps?|good luck|you(?: are|'re) not alone|"
    r"it(?: is|'s) (?:common|normal|natural|very common|completely normal) to|"
    r"many (?:couples|people|parents|families|colleagues|new \w+)|i(?:'m| am) sure|"
    r"(?:a|the) (?:wonderful|great|good|strong) (?:foundation|sign|opportunity))\b", re.I)
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


@dataclass(frozen=True)
class ConflictCues:
    """Cue counts behind a lexicon ``ca`` label."""

    solution: int
    harmony: int
    questions: int
    reflective: int

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


def conflict_cues(response: str, sentences: Sequence[str] | None = None) -> ConflictCues:
    """Count the conflict-avoidance and exploration cues of a response (``sentences``: as for affect)."""
    text = response.replace("’", "'")
    sentences = split_sentences(text) if sentences is None else [s.replace("’", "'") for s in sentences]
    asked = [s for s in sentences if s.rstrip("\"')”’ ").endswith("?")]
    suggesting = sum(1 for s in asked if _SUGGESTING_QUESTION.match(s))
    questions = len(asked) - suggesting
    imperatives = suggesting
    for sentence in sentences:
        match = _FIRST_WORD.match(sentence)
        if (match and match.group(1).lower() in IMPERATIVE_VERBS and not sentence.rstrip().endswith("?")
                and (match.group(2) or "").lower() != "me"):  # "Tell me more" explores
            imperatives += 1
    return ConflictCues(solution=len(_SOLUTION.findall(text)) + len(_LIST_ITEM.findall(text)) + imperatives,
                        harmony=len(_HARMONY.findall(text)), questions=questions,
                        reflective=len(_REFLECTIVE.findall(text)))


def conflict_avoidance(response: str, sentences: Sequence[str] | None = None) -> int:
    """Lexicon ``ca`` label of a response: 1 iff avoidance cues outnumber exploration cues."""
    return conflict_cues(response, sentences).label


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
    payload = "|".join(p.pattern for p in (_SOLUTION, _HARMONY, _REFLECTIVE, _LIST_ITEM, _SUGGESTING_QUESTION))
    return hashlib.sha256(payload.encode()).hexdigest()[:12]
