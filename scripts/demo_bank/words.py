"""Feeling words: what a client says, and what each tendency puts in its place.

The author's affect ratings of the generated rows are assigned *by construction* from these levels, on the
anchored scale of ``data/README.md`` (0 flat or clinical, 0.25 mild, 0.5 clear emotion, 0.75 strong,
1 maximally intense): a text's ``E`` is the mean level of the feeling words planted in it (see
``scripts/make_demo.py``). A client narrative plants two feeling words; a reply carries them (a faithful reply),
flattens them (``flat``: the sentiment attenuation of ``fennel``), amplifies them (``amped``: the
over-dramatising of ``gorse``) or holds them at a distance as abstract nouns (``noun``: the distancing of
``larch``, rated at half the level of the adjective, since the distance is what lowers the immediacy).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Feeling:
    """A feeling adjective of a client narrative, its anchored level and its replacements."""

    level: float
    flat: str
    flat_level: float
    amped: str
    amped_level: float
    noun: str


#: A distanced reply names the feeling as an abstract noun: the author rates it at this share of the adjective.
NOUN_SHARE = 0.5
#: A harmony-seeking reply drops the client's feelings for cheer; the author rates its intensity at this level.
CHEER_LEVEL = 0.4

FEELINGS: dict[str, Feeling] = {
    "abandoned": Feeling(0.85, "unsupported", 0.25, "thrown to the wolves", 1.0, "abandonment"),
    "angry": Feeling(0.75, "annoyed", 0.3, "incandescent with rage", 1.0, "anger"),
    "anxious": Feeling(0.6, "a little uneasy", 0.2, "sick with dread", 0.95, "anxiety"),
    "ashamed": Feeling(0.75, "self-conscious", 0.25, "sick with shame", 0.95, "shame"),
    "betrayed": Feeling(0.85, "let down", 0.3, "utterly betrayed", 1.0, "a sense of betrayal"),
    "bitter": Feeling(0.7, "unhappy", 0.3, "poisoned with bitterness", 1.0, "bitterness"),
    "devastated": Feeling(0.95, "concerned", 0.2, "shattered beyond repair", 1.0, "distress"),
    "exhausted": Feeling(0.65, "tired", 0.2, "completely broken", 0.95, "exhaustion"),
    "exposed": Feeling(0.8, "uneasy", 0.25, "stripped bare", 1.0, "a sense of exposure"),
    "foolish": Feeling(0.6, "uncertain", 0.2, "completely duped", 0.95, "embarrassment"),
    "furious": Feeling(0.9, "frustrated", 0.35, "consumed by rage", 1.0, "anger"),
    "guilty": Feeling(0.65, "conflicted", 0.25, "eaten alive by guilt", 1.0, "guilt"),
    "heartbroken": Feeling(0.9, "disappointed", 0.25, "destroyed", 1.0, "grief"),
    "humiliated": Feeling(0.85, "embarrassed", 0.3, "degraded", 0.95, "humiliation"),
    "invisible": Feeling(0.7, "overlooked", 0.25, "erased", 0.95, "a sense of invisibility"),
    "isolated": Feeling(0.7, "a bit left out", 0.25, "completely shunned", 1.0, "isolation"),
    "jealous": Feeling(0.7, "insecure", 0.3, "wild with jealousy", 0.95, "jealousy"),
    "lonely": Feeling(0.7, "somewhat isolated", 0.25, "utterly abandoned", 0.95, "loneliness"),
    "panicked": Feeling(0.85, "stressed", 0.3, "frantic", 1.0, "panic"),
    "powerless": Feeling(0.75, "uncertain", 0.2, "completely helpless", 0.95, "powerlessness"),
    "resentful": Feeling(0.7, "dissatisfied", 0.2, "seething", 0.95, "resentment"),
    "scared": Feeling(0.75, "uneasy", 0.25, "petrified", 1.0, "apprehension"),
    "suffocated": Feeling(0.8, "restricted", 0.2, "strangled", 1.0, "a sense of suffocation"),
    "terrified": Feeling(0.9, "worried", 0.3, "paralysed with terror", 1.0, "fear"),
    "torn": Feeling(0.65, "undecided", 0.15, "ripped in two", 1.0, "ambivalence"),
    "trapped": Feeling(0.75, "constrained", 0.2, "caged", 0.95, "a sense of entrapment"),
    "worthless": Feeling(0.85, "unsure of yourself", 0.25, "worthless and disposable", 1.0,
                         "a sense of worthlessness"),
}
