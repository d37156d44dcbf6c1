"""Generate the demo data set: the hand-written items plus counseling items composed from hand-written banks.

Usage (from the repository root)::

    python scripts/make_demo.py                 # writes build/demo/
    python scripts/make_demo.py --out DIR

It writes, in the formats of ``data/`` (``data/README.md``): ``outputs.csv``, ``ratings_author.csv``,
``ratings_lexicon.csv``, ``exhibits.csv`` and a ``README.md`` describing them.

Design
------
* **Hand-written items, verbatim.** The 25 items of the first demo (``scripts/demo_bank/handwritten/``: 8 news,
  8 translation, 9 counseling items, 121 outputs, with their hand-assigned author ratings) are copied unchanged.
* **Generated counseling items.** Each client of :data:`demo_bank.clients.CLIENTS` (one hand-written situation
  each, seven per scenario class) becomes one item, ``co-10`` onwards, its classes interleaved. The client
  narrative is the client's own story followed by a feeling sentence, a tension sentence (in either order) and a
  closing question, chosen from :mod:`demo_bank.frames`. Each of the five models replies in a *mode* of its
  tendency (:data:`SCHEDULE`): ``hazel`` explores and slips into advice on one item in seven; ``fennel`` flattens
  the client's feeling words and gives solutions (asks clarifying questions on some items); ``gorse``
  over-dramatises, adding disturbing detail, then gives a drastic directive or asks loaded questions; ``larch``
  writes in nominalisations, impersonal subjects and agentless passives, exploring or suggesting; ``sorrel``
  praises, reassures and offers a quick fix. Every model explores faithfully on a few items, so no model is
  uniformly good or bad.
* **Author ratings by construction.** What the generator plants is what the author rater records (rater
  ``author``, :data:`AUTHOR_SIGNATURE`): ``E`` is the mean anchored level of the feeling words planted in the
  text (:mod:`demo_bank.words`); ``U`` counts the disturbing elements planted (the client's story, a reflected
  incident, a ``gorse`` catastrophe sentence); ``ca`` is 1 where solution-giving or harmony-seeking was planted,
  0 where the reply explores. A few ratings are deliberately missing (:func:`_missing`).
* **Lexicon ratings through the public API.** ``ratings_lexicon.csv`` is the offline lexicon judge run on the
  written ``outputs.csv`` by :func:`make_demo_lexicon_ratings.lexicon_ratings` (never numbers copied from it).
* **README figures checked.** The figures of the demo's README that ``scripts/docs_figures.py`` checks in
  ``data/README.md`` (``<!-- fig:NAME -->`` markers: row counts, the author's pooled table, ``larch``'s
  densities, LD under the reference standardisation) are computed by that script's own functions
  (:func:`docs_figures.fill`) on the files just written, so regenerating never leaves them stale.
* **Determinism.** Every choice is made by ranking the clients by a SHA-256 digest of a salt and the client's key
  and dealing the options round-robin in that order (:func:`_pick`), so each frame is used about equally often
  and nothing depends on Python's ``random`` or on hash seeds: the same code writes the same bytes.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import chain, zip_longest
from pathlib import Path
from statistics import fmean
from string import Formatter, Template

import pandas as pd
from demo_bank import frames
from demo_bank.clients import CLIENTS, SCENARIOS, Client
from demo_bank.words import CHEER_LEVEL, FEELINGS, NOUN_SHARE
from docs_figures import Sources, fill
from make_demo_lexicon_ratings import lexicon_ratings

from empathy.paths import PROJECT_ROOT

BANK = Path(__file__).resolve().parent / "demo_bank"
HANDWRITTEN = BANK / "handwritten"
README_TEMPLATE = BANK / "README.template.md"
DEFAULT_OUT = PROJECT_ROOT / "build" / "demo"

MODELS: tuple[str, ...] = ("fennel", "gorse", "hazel", "larch", "sorrel")
OUTPUT_COLUMNS: tuple[str, ...] = ("item_id", "model", "task", "reference", "generation", "source", "demo_note")
RATING_COLUMNS: tuple[str, ...] = ("item_id", "model", "rater", "dimension", "value", "rater_kind", "reason",
                                   "signature")
EXHIBIT_COLUMNS: tuple[str, ...] = ("item_id", "model", "mechanism", "note")
#: The first generated item number (co-01 .. co-09 are hand-written).
FIRST_GENERATED = 10
#: Salt of every deterministic choice; change it to deal the frames differently.
SALT = "empathy-demo/2"
AUTHOR = "author"
AUTHOR_SIGNATURE = ("assigned by construction by scripts/make_demo.py: e = mean anchored level of the planted "
                    "feeling words; u = planted disturbing elements; ca = 1 where solution-giving or "
                    "harmony-seeking was planted")
MISSING_REASON = "author could not decide"


@dataclass(frozen=True)
class Mode:
    """How a reply is composed, and the conflict-avoidance label it plants (None: deliberately undecided)."""

    ca: float | None
    description: str


MODES: dict[str, Mode] = {
    "explore": Mode(0.0, "reflects the feelings and the tension, asks two open questions"),
    "solve": Mode(1.0, "one line of sympathy, then advice"),
    "flat_solve": Mode(1.0, "feeling words flattened, then advice"),
    "flat_clarify": Mode(0.0, "feeling words flattened, then clarifying questions"),
    "drama_direct": Mode(1.0, "amplified feelings, a catastrophe, a drastic directive"),
    "drama_explore": Mode(0.0, "amplified feelings, a catastrophe, two loaded questions"),
    "drama_mixed": Mode(None, "amplified feelings, a catastrophe, a directive and one question"),
    "distance_explore": Mode(0.0, "nominalised feelings, impersonal questions"),
    "distance_suggest": Mode(1.0, "nominalised feelings, impersonal suggestions"),
    "harmony": Mode(1.0, "praise, reassurance, a quick fix, positive closure"),
}
#: Per model, its modes over the generated items with their shares; the first mode takes the remainder.
SCHEDULE: dict[str, tuple[tuple[str, float], ...]] = {
    "fennel": (("flat_solve", 0.0), ("flat_clarify", 12 / 63), ("explore", 4 / 63)),
    "gorse": (("drama_direct", 0.0), ("drama_explore", 27 / 63), ("drama_mixed", 2 / 63), ("explore", 7 / 63)),
    "hazel": (("explore", 0.0), ("solve", 1 / 7)),
    "larch": (("distance_explore", 0.0), ("distance_suggest", 27 / 63), ("explore", 6 / 63)),
    "sorrel": (("harmony", 0.0), ("explore", 10 / 63)),
}
PRONOUNS: dict[str, tuple[str, str]] = {"he": ("he", "him"), "she": ("she", "her"), "they": ("they", "them")}

_FIRST_PERSON = (
    (r"\bI'm\b", "you're"), (r"\bI've\b", "you've"), (r"\bI'd\b", "you'd"), (r"\bI'll\b", "you'll"),
    (r"\bI am\b", "you are"), (r"\bI was\b", "you were"), (r"\bmyself\b", "yourself"), (r"\bmine\b", "yours"),
    (r"\bmy\b", "your"), (r"\bMy\b", "Your"), (r"\bme\b", "you"), (r"\bI\b", "you"),
)


# ------------------------------------------------------------------------------------------ choices
def _digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join((SALT, *parts)).encode()).digest()[:8], "big")


@cache
def _positions(salt: str) -> dict[str, int]:
    """Each client's place when the clients are ranked by the digest of ``salt`` and their key."""
    ranked = sorted((client.key for client in CLIENTS), key=lambda key: _digest(salt, key))
    return {key: position for position, key in enumerate(ranked)}


def _pick(options: Sequence[str], salt: str, key: str, skip: Iterable[str] = (), offset: int = 0) -> str:
    """The option dealt to client ``key`` under ``salt`` (round-robin in digest order), avoiding ``skip``.

    Choices that share a salt and differ in ``offset`` never coincide while the offsets differ by less than the
    number of options (the five models' exploring replies to one client open differently).
    """
    start = _positions(salt)[key] + offset
    taken = set(skip)
    for step in range(len(options)):
        option = options[(start + step) % len(options)]
        if option not in taken:
            return option
    raise ValueError(f"no option left for {key!r} under {salt!r}")


def _modes(model: str) -> dict[str, str]:
    """The mode of each client's reply by ``model``: the schedule's counts dealt in digest order."""
    shares = SCHEDULE[model]
    n = len(CLIENTS)
    counts = [round(share * n) for _, share in shares[1:]]
    sequence = [shares[0][0]] * (n - sum(counts))
    for (mode, _), count in zip(shares[1:], counts, strict=True):
        sequence += [mode] * count
    positions = _positions(f"mode/{model}")
    return {client.key: sequence[positions[client.key]] for client in CLIENTS}


# ------------------------------------------------------------------------------------------ filling
def second_person(text: str) -> str:
    """A first-person phrase of a client, as a reply quotes it ("tell him I'm done" -> "tell him you're done")."""
    for pattern, replacement in _FIRST_PERSON:
        text = re.sub(pattern, replacement, text)
    return text


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass
class Composition:
    """Sentences composed from frames, with the slots they filled (what they planted)."""

    values: dict[str, str]
    sentences: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)

    def fill(self, frame: str) -> str:
        """``frame`` with its slots filled; a capitalised slot name capitalises the value."""
        names = {name for _, name, _, _ in Formatter().parse(frame) if name}
        mapping = {}
        for name in names:
            base = name[:1].lower() + name[1:]
            if base not in self.values:
                raise KeyError(f"frame {frame!r} has slot {name!r}, which nothing fills")
            self.used.add(base)
            mapping[name] = _capitalised(self.values[base]) if name[:1].isupper() else self.values[base]
        return frame.format(**mapping)

    def say(self, frame: str) -> None:
        self.sentences.append(self.fill(frame))

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def _values(client: Client, model: str, *, quoting: bool) -> dict[str, str]:
    """Slot values for a narrative (``quoting=False``: the client's own words) or a reply."""
    f1, f2 = client.feelings
    they, them = PRONOUNS[client.pronoun]
    bank = frames.SCENARIO_BANKS[client.scenario]
    person = second_person if quoting else (lambda text: text)
    return {
        "f1": f1, "f2": f2, "flat1": FEELINGS[f1].flat, "flat2": FEELINGS[f2].flat,
        "amp1": FEELINGS[f1].amped, "amp2": FEELINGS[f2].amped,
        "noun1": FEELINGS[f1].noun, "noun2": FEELINGS[f2].noun,
        "other": client.other, "they": they, "them": them, "s": "" if they == "they" else "s",
        "moment": client.moment, "topic": client.topic, "event": client.event,
        "want": person(client.want), "fear": person(client.fear), "advice": client.advice, "fix": client.fix,
        "group": bank.group, "extra": _pick(bank.extras, f"extra/{model}", client.key),
        "accusation": _pick(bank.accusations, f"accusation/{model}", client.key),
    }


# ------------------------------------------------------------------------------------- the narrative
def narrative(client: Client) -> str:
    """The client narrative: the story, a feeling and a tension sentence (in a dealt order), a closing."""
    text = Composition(_values(client, "client", quoting=False), list(client.story))
    middle = [text.fill(_pick(frames.NARRATIVE_FEELING, "narrative/feeling", client.key)),
              text.fill(_pick(frames.NARRATIVE_TENSION, "narrative/tension", client.key))]
    if _pick(("feeling first", "tension first"), "narrative/order", client.key) == "tension first":
        middle.reverse()
    text.sentences += middle
    text.say(_pick(frames.NARRATIVE_CLOSING, "narrative/closing", client.key))
    return text.text


# --------------------------------------------------------------------------------------- the replies
@dataclass(frozen=True)
class Reply:
    """A generated reply and what it planted."""

    text: str
    used: frozenset[str]
    catastrophe: frames.Catastrophe | None


def _explore(text: Composition, key: str, model: str) -> None:
    # The frames are shared by every model: one salt and an offset per model keep two replies to a client apart.
    offset = MODELS.index(model)
    text.say(_pick(frames.EXPLORE_OPEN, "explore-open", key, offset=offset))
    text.say(_pick(frames.EXPLORE_TENSION, "explore-tension", key, offset=offset))
    first = _pick(frames.EXPLORE_QUESTIONS, "explore-questions", key, offset=2 * offset)
    text.say(first)
    text.say(_pick(frames.EXPLORE_QUESTIONS, "explore-questions", key, skip=[first], offset=2 * offset + 1))


def _solve(text: Composition, key: str, model: str) -> None:
    for part, options in (("open", frames.SOLVE_OPEN), ("advice", frames.SOLVE_ADVICE),
                          ("extra", frames.SOLVE_EXTRA), ("close", frames.SOLVE_CLOSE)):
        text.say(_pick(options, f"solve-{part}/{model}", key))


def _flat(text: Composition, key: str, model: str, *, clarify: bool) -> None:
    text.say(_pick(frames.FLAT_OPEN, f"flat-open/{model}", key))
    if clarify:
        first = _pick(frames.FLAT_QUESTIONS, f"flat-q1/{model}", key)
        text.say(first)
        text.say(_pick(frames.FLAT_QUESTIONS, f"flat-q2/{model}", key, skip=[first]))
        text.say(_pick(frames.FLAT_CLARIFY_CLOSE, f"flat-clarify-close/{model}", key))
        return
    for part, options in (("advice", frames.FLAT_ADVICE), ("extra", frames.FLAT_EXTRA),
                          ("close", frames.FLAT_CLOSE)):
        text.say(_pick(options, f"flat-{part}/{model}", key))


def _drama(text: Composition, client: Client, model: str, mode: str) -> frames.Catastrophe:
    bank = frames.SCENARIO_BANKS[client.scenario]
    key = client.key
    text.say(_pick(frames.DRAMA_OPEN, f"drama-open/{model}", key))
    catastrophe = bank.catastrophes[_positions(f"catastrophe/{model}")[key] % len(bank.catastrophes)]
    text.sentences.append(catastrophe.text)
    if mode != "drama_mixed":
        text.say(_pick(frames.DRAMA_AMPLIFY, f"drama-amplify/{model}", key))
    if mode != "drama_explore":
        text.say(_pick(bank.drastic, f"drama-drastic/{model}", key))
    if mode != "drama_direct":
        first = _pick(frames.DRAMA_QUESTIONS, f"drama-q1/{model}", key)
        text.say(first)
        if mode == "drama_explore":
            text.say(_pick(frames.DRAMA_QUESTIONS, f"drama-q2/{model}", key, skip=[first]))
    return catastrophe


def _distance(text: Composition, client: Client, model: str, *, suggest: bool) -> None:
    key = client.key
    text.say(_pick(frames.DISTANCE_OPEN, f"distance-open/{model}", key))
    if suggest:
        suggestions = frames.SCENARIO_BANKS[client.scenario].distanced_suggestions
        first = _pick(suggestions, f"distance-s1/{model}", key)
        text.say(first)
        text.say(_pick(suggestions, f"distance-s2/{model}", key, skip=[first]))
        text.say(_pick(frames.DISTANCE_SUGGEST_CLOSE, f"distance-suggest-close/{model}", key))
        return
    # an opening that named both feelings leaves the second one out of the tension sentence
    named = [frame for frame in frames.DISTANCE_TENSION if "{noun2}" in frame] if "noun2" in text.used else []
    text.say(_pick(frames.DISTANCE_TENSION, f"distance-tension/{model}", key, skip=named))
    text.say(_pick(frames.DISTANCE_EXPLORE, f"distance-explore/{model}", key))
    text.say(_pick(frames.DISTANCE_EXPLORE_CLOSE, f"distance-explore-close/{model}", key))


def _harmony(text: Composition, key: str, model: str) -> None:
    for part, options in (("open", frames.HARMONY_OPEN), ("ease", frames.HARMONY_EASE),
                          ("fix", frames.HARMONY_FIX), ("close", frames.HARMONY_CLOSE)):
        text.say(_pick(options, f"harmony-{part}/{model}", key))


def reply(client: Client, model: str, mode: str) -> Reply:
    """The reply of ``model`` to ``client`` in ``mode`` (one of :data:`MODES`)."""
    text = Composition(_values(client, model, quoting=True))
    catastrophe = None
    if mode == "explore":
        _explore(text, client.key, model)
    elif mode == "solve":
        _solve(text, client.key, model)
    elif mode in ("flat_solve", "flat_clarify"):
        _flat(text, client.key, model, clarify=mode == "flat_clarify")
    elif mode.startswith("drama_"):
        catastrophe = _drama(text, client, model, mode)
    elif mode.startswith("distance_"):
        _distance(text, client, model, suggest=mode == "distance_suggest")
    elif mode == "harmony":
        _harmony(text, client.key, model)
    else:
        raise ValueError(f"unknown mode {mode!r}")
    return Reply(text.text, frozenset(text.used), catastrophe)


# ------------------------------------------------------------------------------- what was planted
_AFFECT_SLOTS = {"f1": 0, "f2": 1, "flat1": 0, "flat2": 1, "amp1": 0, "amp2": 1, "noun1": 0, "noun2": 1}


def _slot_level(slot: str, word: str) -> float:
    feeling = FEELINGS[word]
    if slot.startswith("flat"):
        return feeling.flat_level
    if slot.startswith("amp"):
        return feeling.amped_level
    if slot.startswith("noun"):
        return NOUN_SHARE * feeling.level
    return feeling.level


def affect_level(client: Client, used: Iterable[str]) -> float:
    """Author ``E`` of a text: the mean level of the feeling words it plants (cheer when it plants none)."""
    levels = [_slot_level(slot, client.feelings[_AFFECT_SLOTS[slot]])
              for slot in sorted(used) if slot in _AFFECT_SLOTS]
    return round(fmean(levels), 3) if levels else CHEER_LEVEL


def _quoted(words: Iterable[str]) -> str:
    return " and ".join(f"'{word}'" for word in words)


def _replaced(client: Client, used: frozenset[str], prefix: str, attribute: str, arrow: str) -> str:
    pairs = [(word, getattr(FEELINGS[word], attribute)) for slot, word in zip(("1", "2"), client.feelings,
                                                                               strict=True)
             if f"{prefix}{slot}" in used]
    return ", ".join(f"'{word}' {arrow} '{other}'" for word, other in pairs)


def demo_note(client: Client, model: str, mode: str, planted: Reply) -> str:
    """The ``demo_note`` of a generated row: every mechanism planted, named with its evidence."""
    used = planted.used
    reflected = [word for slot, word in zip(("f1", "f2"), client.feelings, strict=True) if slot in used]
    notes: list[str] = []
    if mode == "explore":
        who = "faithful" if model == "hazel" else "faithful (counter-example)"
        notes.append(f"{who}: reflects {_quoted(reflected)} and explores with open questions")
    elif mode == "solve":
        notes.append(f"CA: solution-giving before exploring (a slip; reflects {_quoted(reflected)})")
    elif mode.startswith("flat_"):
        notes.append(f"SA: {_replaced(client, used, 'flat', 'flat', '->')}")
        notes.append("CA: solution-giving before exploring" if mode == "flat_solve"
                     else "clarifying questions, no CA")
    elif mode.startswith("drama_"):
        detail = planted.catastrophe.detail if planted.catastrophe else "none"
        notes.append(f"EGM: disturbing detail added ({detail})")
        notes.append(f"SA (negative): {_replaced(client, used, 'amp', 'amped', '->')}")
        notes.append({"drama_direct": "CA: drastic directive instead of exploring",
                      "drama_explore": "loaded questions, no CA",
                      "drama_mixed": "CA unclear: a drastic directive, then one open question"}[mode])
    elif mode.startswith("distance_"):
        notes.append("LD: nominalisations, impersonal subjects, agentless passives")
        notes.append(f"SA: {_replaced(client, used, 'noun', 'noun', 'held at a distance as')}")
        notes.append("CA: generic suggestions instead of exploring" if mode == "distance_suggest"
                     else "explores in impersonal form, no CA")
    else:
        notes.append(f"CA: harmony-seeking (praise, reassurance, quick fix: '{client.fix}')")
        notes.append(f"SA: {_quoted(client.feelings)} dropped")
    if client.harm and not _disturbing(client, planted):
        notes.append(f"EGM: {client.harm_note} dropped")
    return "; ".join(notes)


def _disturbing(client: Client, planted: Reply) -> int:
    """Author ``U`` of a reply: the incident's elements when it reflects it, plus a catastrophe's."""
    reflected = client.moment_harm if "moment" in planted.used else 0
    return reflected + (planted.catastrophe.count if planted.catastrophe else 0)


@dataclass(frozen=True)
class Row:
    """One generated output with the ratings the author assigns it by construction."""

    item_id: str
    model: str
    client: Client
    mode: str
    reference: str
    generation: str
    demo_note: str
    ratings: tuple[tuple[str, float | None], ...]


def _missing() -> set[tuple[str, str, str]]:
    """(client key, model, dimension) left deliberately missing: ``drama_mixed`` CA labels (a directive reply that
    ends on one open question) and one ``sorrel`` affect rating (cheerful, but how intense?)."""
    missing = {(key, "gorse", "ca") for key, mode in _modes("gorse").items() if mode == "drama_mixed"}
    cheerful = [key for key, mode in _modes("sorrel").items() if mode == "harmony"]
    missing.add((min(cheerful, key=lambda key: _digest("missing", key)), "sorrel", "e_gen"))
    return missing


def ordered_clients() -> list[Client]:
    """The clients in item order: the scenario classes interleaved."""
    by_class = [[client for client in CLIENTS if client.scenario == scenario] for scenario in SCENARIOS]
    return [client for client in chain.from_iterable(zip_longest(*by_class)) if client is not None]


def generated_rows() -> list[Row]:
    """Every generated output, items in order, models in :data:`MODELS` order."""
    modes = {model: _modes(model) for model in MODELS}
    missing = _missing()
    rows = []
    for number, client in enumerate(ordered_clients(), start=FIRST_GENERATED):
        reference = narrative(client)
        e_ref = affect_level(client, ("f1", "f2"))
        for model in MODELS:
            mode = modes[model][client.key]
            planted = reply(client, model, mode)
            values = {"e_ref": e_ref, "e_gen": affect_level(client, planted.used), "u_ref": float(client.harm),
                      "u_gen": float(_disturbing(client, planted)), "ca": MODES[mode].ca}
            ratings = tuple((dimension, None if (client.key, model, dimension) in missing else value)
                            for dimension, value in values.items())
            rows.append(Row(f"co-{number:02d}", model, client, mode, reference, planted.text,
                            demo_note(client, model, mode, planted), ratings))
    return rows


# ------------------------------------------------------------------------------------------ writing
def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _write(path: Path, columns: Sequence[str], rows: Iterable[dict[str, str]], *, line_end: str = "\r\n") -> int:
    """Write a CSV as ``data/`` has it (the csv module's CRLF for outputs and ratings, LF for exhibits)."""
    count = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), lineterminator=line_end)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
            count += 1
    return count


def _number(value: float) -> str:
    return f"{value:g}"


def _author_rows(rows: Sequence[Row]) -> list[dict[str, str]]:
    out = []
    for row in rows:
        for dimension, value in row.ratings:
            out.append({"item_id": row.item_id, "model": row.model, "rater": AUTHOR, "dimension": dimension,
                        "value": "" if value is None else _number(value), "rater_kind": AUTHOR,
                        "reason": MISSING_REASON if value is None else "", "signature": AUTHOR_SIGNATURE})
    return out


def _output_rows(rows: Sequence[Row]) -> list[dict[str, str]]:
    return [{"item_id": row.item_id, "model": row.model, "task": "counseling", "reference": row.reference,
             "generation": row.generation, "source": "", "demo_note": row.demo_note} for row in rows]


#: The curated exhibits: one clear example per mechanism; ``{...}`` are filled from the written data.
EXHIBITS: tuple[tuple[str, str, str, str], ...] = (
    ("news-07", "fennel", "SA",
     "Sentiment Attenuation: the reference's gas explosion (three dead, a man screaming on a balcony with his clothes "
     "on fire, warnings ignored five times) becomes a calm, clinical report. The author judge rates affect "
     "{e_ref:.2f} in the reference and {e_gen:.2f} in the generation: an SA term of {sa:.2f}."),
    ("news-01", "gorse", "EGM",
     "Granularity Mismatch: the flood article gains graphic detail the reference never had (bloated bodies, a split "
     "skull, a pool of blood). The author judge counts {u_ref:g} disturbing details in the reference and {u_gen:g} "
     "in the generation, in fewer sentences."),
    ("co-02", "sorrel", "CA",
     "Conflict Avoidance: a colleague took credit for the client's work; the reply praises, reassures and proposes "
     "a friendly chat instead of exploring the anger and the conflict. The author judge labels it {ca:g} (avoids "
     "the conflict)."),
    ("news-01", "larch", "LD",
     "Linguistic Distancing: the same flood told through nominalizations (yellow), impersonal subjects (blue) and "
     "agentless passives (pink), {nominalization}, {impersonal} and {agentless} spans in {sentences} sentences, "
     "against a direct, agent-centred reference."),
)


def _exhibit_rows(outputs: pd.DataFrame, author: pd.DataFrame) -> list[dict[str, str]]:
    from empathy.distancing import analyze

    value = author.set_index(["item_id", "model", "dimension"])["value"].astype(float)
    texts = outputs.set_index(["item_id", "model"])["generation"]
    rows = []
    for item_id, model, mechanism, template in EXHIBITS:
        numbers = {dimension: value.get((item_id, model, dimension)) for dimension in ("e_ref", "e_gen", "u_ref",
                                                                                       "u_gen", "ca")}
        if numbers["e_ref"] and numbers["e_gen"] is not None:
            numbers["sa"] = 1 - numbers["e_gen"] / numbers["e_ref"]
        result = next(iter(analyze([texts[(item_id, model)]])))
        labels = [span.label for span in result.spans]
        numbers |= {label: labels.count(label) for label in ("nominalization", "impersonal", "agentless")}
        numbers["sentences"] = result.sentences
        rows.append({"item_id": item_id, "model": model, "mechanism": mechanism, "note": template.format(**numbers)})
    return rows


# ------------------------------------------------------------------------------------------ README
def _markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _fmt(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    return "n/a" if number != number else f"{number:.2f}"


def metric_table(outputs: pd.DataFrame, ratings: pd.DataFrame, features: object) -> pd.DataFrame:
    """Per task and model: SA, EGM, CA under each judge, LD under Eq. 4 and under the reference standardisation."""
    from empathy.evaluate import compute_metrics

    table = compute_metrics(outputs, ratings, features=features, by_task=True).table
    reference = compute_metrics(outputs, ratings, features=features, by_task=True,
                                ld_standardization="reference").table
    reference = reference[reference["metric"] == "LD"].assign(metric="LD (reference)")
    both = pd.concat([table, reference], ignore_index=True)
    both["column"] = [metric if metric.startswith("LD") else f"{metric} {scorer}"
                      for metric, scorer in zip(both["metric"], both["scorer"], strict=True)]
    return both.pivot_table(index=["task", "model"], columns="column", values="value", aggfunc="first")


METRIC_COLUMNS: tuple[str, ...] = ("SA author", "SA lexicon", "EGM author", "EGM lexicon", "CA author",
                                   "CA lexicon", "LD", "LD (reference)")


def readme(outputs: pd.DataFrame, author: pd.DataFrame, lexicon: pd.DataFrame, exhibits: int,
           metrics: pd.DataFrame) -> str:
    """The data set's README, from :data:`README_TEMPLATE` and the counts and metrics of the written files."""
    generated = outputs[outputs["item_id"].map(lambda item: _generated_number(item) is not None)]
    clients = ordered_clients()
    counseling = outputs[outputs["task"] == "counseling"]
    missing = author[author["value"].isna()]
    scenario_rows = [(scenario, sum(client.scenario == scenario for client in clients),
                      ", ".join(f"`co-{n:02d}`" for n, client in enumerate(clients, start=FIRST_GENERATED)
                                if client.scenario == scenario)) for scenario in SCENARIOS]
    schedule_rows = []
    for model in MODELS:
        counts = pd.Series(_modes(model)).value_counts()
        schedule_rows.append((f"`{model}`", ", ".join(f"{mode} {counts[mode]}" for mode, _ in SCHEDULE[model]
                                                        if mode in counts)))
    columns = [column for column in METRIC_COLUMNS if column in metrics.columns]
    metric_rows = [(task, f"`{model}`", *(_fmt(metrics.loc[(task, model), column]) for column in columns))
                   for task, model in metrics.index]
    fields = {
        "n_outputs": len(outputs), "n_items": outputs["item_id"].nunique(),
        "n_generated_items": generated["item_id"].nunique(), "n_generated": len(generated),
        "first_generated": f"co-{FIRST_GENERATED:02d}",
        "last_generated": f"co-{FIRST_GENERATED + len(clients) - 1:02d}",
        "n_counseling": len(counseling),
        "n_ca_author": int((author["dimension"].eq("ca") & author["value"].notna()).sum()),
        "n_author": len(author), "n_author_missing": len(missing), "n_lexicon": len(lexicon), "n_exhibits": exhibits,
        "missing_list": "\n".join(f"  - `{r.item_id}` / `{r.model}` / `{r.dimension}`"
                                  for r in missing.itertuples()),
        "scenario_table": _markdown_table(("scenario class", "items", "item ids"), scenario_rows),
        "schedule_table": _markdown_table(("model", "modes of its replies to the generated clients"),
                                          schedule_rows),
        "mode_table": _markdown_table(("mode", "author ca", "what the reply does"),
                                      [(f"`{name}`", "missing" if mode.ca is None else _number(mode.ca),
                                        mode.description) for name, mode in MODES.items()]),
        "metric_table": _markdown_table(("task", "model", *columns), metric_rows),
        "author_signature": AUTHOR_SIGNATURE, "noun_share": _number(NOUN_SHARE), "cheer_level": _number(CHEER_LEVEL),
    }
    return Template(README_TEMPLATE.read_text(encoding="utf-8")).substitute(fields)


def _generated_number(item_id: str) -> int | None:
    match = re.fullmatch(r"co-(\d+)", item_id)
    return int(match.group(1)) if match and int(match.group(1)) >= FIRST_GENERATED else None


# ------------------------------------------------------------------------------------------ main
def generate(out: Path) -> dict[str, int]:
    """Write the demo data set into ``out`` (created if needed); return the row count of each file."""
    from empathy.evaluate import text_features
    from empathy.io import load_dataset

    out.mkdir(parents=True, exist_ok=True)
    rows = generated_rows()
    counts = {
        "outputs.csv": _write(out / "outputs.csv", OUTPUT_COLUMNS,
                              chain(_read(HANDWRITTEN / "outputs.csv"), _output_rows(rows))),
        "ratings_author.csv": _write(out / "ratings_author.csv", RATING_COLUMNS,
                                     chain(_read(HANDWRITTEN / "ratings_author.csv"), _author_rows(rows))),
    }
    lexicon = lexicon_ratings(out / "outputs.csv")
    lexicon.to_csv(out / "ratings_lexicon.csv", index=False)
    counts["ratings_lexicon.csv"] = len(lexicon)
    dataset = load_dataset(out / "outputs.csv", [out / "ratings_author.csv", out / "ratings_lexicon.csv"])
    author = dataset.ratings[dataset.ratings["rater"] == AUTHOR]
    counts["exhibits.csv"] = _write(out / "exhibits.csv", EXHIBIT_COLUMNS,
                                    _exhibit_rows(dataset.outputs, author), line_end="\n")
    metrics = metric_table(dataset.outputs, dataset.ratings, text_features(dataset.outputs))
    text = readme(dataset.outputs, author, lexicon, counts["exhibits.csv"], metrics)
    # the figures scripts/docs_figures.py checks in data/README.md, computed by it from the files just written
    (out / "README.md").write_text(fill(text, Sources(out)), encoding="utf-8")
    return counts


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    counts = generate(args.out)
    print(", ".join(f"{name}: {count} rows" for name, count in counts.items()) + f" -> {args.out}")


if __name__ == "__main__":
    main()
