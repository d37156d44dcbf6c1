"""Word lists and the morphological test behind the nominalization and passive rules.

A noun counts as a *nominalization* when it is derived from a present-day English verb or adjective by an
overt suffix (decide -> decision, announce -> announcement, happy -> happiness) or by a listed irregular
derivation (die -> death, choose -> choice). The test strips a known derivational suffix, rebuilds the
candidate base with the usual spelling changes (e -> restored, y <- i, undoubled consonant, -sion <- -de ...)
and accepts the noun when the base is a verb (or, for the deadjectival suffixes, an adjective) in WordNet's
lemma index, which ships inside the spaCy model's lemmatizer tables (no extra download).

Everyday nouns that merely share a suffix (city, document, station) fail because their stem is no verb or
adjective; the nouns whose stem *is* accidentally a word but whose meaning is unrelated (department/depart,
business/busy, television/televise) are listed in :data:`NOT_NOMINAL`. Zero-derived nouns (a change, a walk)
and agent nouns (teacher) are deliberately not nominalizations here: the former cannot be told apart from
ordinary nouns without semantics, the latter name people, not events or qualities.
"""

from __future__ import annotations

from collections.abc import Collection

#: (suffix, replacements for the suffix, base part of speech) tried in order; the first hit wins.
#: "V" = the base must be a verb, "A" = an adjective.
SUFFIX_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("ization", ("ize", "ise"), "V"),
    ("isation", ("ise", "ize"), "V"),
    ("ification", ("ify",), "V"),
    ("ication", ("y", "icate"), "V"),
    ("faction", ("fy",), "V"),
    ("anation", ("ain",), "V"),
    ("amation", ("aim",), "V"),
    ("tration", ("ter", "trate"), "V"),
    ("ation", ("", "e", "ate", "y"), "V"),
    ("ition", ("", "e", "ite", "ize"), "V"),
    ("ution", ("ute", "ve"), "V"),
    ("ption", ("be", "ve", "ive", "b", "me", "pt"), "V"),
    ("ction", ("ce", "ct"), "V"),
    ("ntion", ("nd", "nt"), "V"),
    ("ention", ("ain",), "V"),
    ("ssion", ("t", "ss", "de"), "V"),
    ("nsion", ("nd",), "V"),
    ("rsion", ("rt",), "V"),
    ("sion", ("de", "se", "d"), "V"),
    ("ion", ("", "e"), "V"),
    ("ion", ("",), "A"),
    ("ment", ("", "e"), "V"),
    ("iness", ("y",), "A"),
    ("ness", ("", "e"), "A"),
    ("ibility", ("ible",), "A"),
    ("ability", ("able",), "A"),
    ("ivity", ("ive",), "A"),
    ("osity", ("ous",), "A"),
    ("ality", ("al",), "A"),
    ("arity", ("ar",), "A"),
    ("icity", ("ic", "e"), "A"),
    ("ity", ("", "e"), "A"),
    # -ty after an adjective (safe-ty, certain-ty, honest-ty, loyal-ty); bases of at least 4 letters, so that
    # "party", "duty", "city" stay out (their stems are no adjectives anyway).
    ("ty", ("",), "A"),
    ("iance", ("y",), "V"),
    ("ance", ("ant",), "A"),
    ("ance", ("", "e"), "V"),
    ("ence", ("ent",), "A"),
    ("ence", ("", "e"), "V"),
    ("ency", ("ent",), "A"),
    ("ancy", ("ant",), "A"),
    ("acy", ("ate",), "A"),
    ("ial", ("y",), "V"),
    ("al", ("", "e"), "V"),
    ("ture", ("",), "V"),
    ("ure", ("", "e"), "V"),
    ("ery", ("er",), "V"),
    ("ory", ("or",), "V"),
    ("ing", ("", "e"), "V"),
)

#: Irregular or suppletive derivations: noun -> base.
IRREGULAR_NOMINAL: dict[str, str] = {
    "analysis": "analyze", "anxiety": "anxious", "behavior": "behave", "behaviour": "behave",
    "belief": "believe", "birth": "bear", "boredom": "bored", "breadth": "broad", "choice": "choose",
    "clarity": "clear", "complaint": "complain", "death": "die", "defense": "defend", "defence": "defend",
    "depth": "deep", "descent": "descend", "emphasis": "emphasize", "entry": "enter", "enquiry": "enquire",
    "freedom": "free", "growth": "grow", "hatred": "hate", "height": "high", "inquiry": "inquire",
    "injury": "injure", "knowledge": "know", "laughter": "laugh", "length": "long", "loss": "lose",
    "maintenance": "maintain", "offense": "offend", "offence": "offend", "pretense": "pretend",
    "pronunciation": "pronounce", "proof": "prove", "pursuit": "pursue", "receipt": "receive",
    "response": "respond", "restraint": "restrain", "sale": "sell", "speech": "speak", "strength": "strong",
    "success": "succeed", "truth": "true", "usage": "use", "storage": "store", "coverage": "cover",
    "marriage": "marry", "breakage": "break", "leakage": "leak", "shortage": "short", "wreckage": "wreck",
    "drainage": "drain", "blockage": "block", "dosage": "dose", "linkage": "link", "stoppage": "stop",
    "warmth": "warm", "width": "wide", "wisdom": "wise", "variety": "various", "procedure": "proceed",
    "expenditure": "expend", "abundance": "abundant", "absorption": "absorb", "deletion": "delete",
    "thought": "think", "weight": "weigh", "flight": "fly", "tension": "tense", "option": "opt",
    "destruction": "destroy", "discretion": "discreet", "seizure": "seize", "conception": "conceive",
    # "-ability" would consume the whole word (derive_base found no stem): ability, inability, disability.
    "ability": "able", "diagnosis": "diagnose", "paralysis": "paralyze", "synthesis": "synthesize",
    "poverty": "poor", "honesty": "honest", "modesty": "modest",
}

#: Nouns with a derivational-looking ending whose apparent base is unrelated in meaning (or is itself
#: derived from the noun); they are not nominalizations.
NOT_NOMINAL: frozenset[str] = frozenset(
    """
    department apartment compartment basement environment garment business witness television
    vision pension passion portion question position edition emotion champion opinion situation million
    institution constitution foundation population station nation ration session mission version
    community university opportunity facility gravity evidence instance consequence emergency currency
    signal total portal rival admiral tutorial capital hospital animal potential material official
    creature posture venture legislature battery factory machinery bakery brewery pottery surgery
    evening ceiling morning stocking shilling offspring thing something nothing anything everything
    king ring string spring wing swing sting darling sibling pudding herring earring
    lesson reason season poison prison person mention pigment supplement comment clothing affection
    experience ambience ambulance appliance
    balance finance vacation pavement belonging setting landing property penalty casualty realty
    sixty seventy ninety
    """.split()
)

#: Participles that after "be" are adjectives, not passives, unless a by-agent is present
#: (psychological and stative predicates: "I am tired", "she was interested in it").
ADJECTIVAL_PARTICIPLES: frozenset[str] = frozenset(
    """
    tired interested excited worried bored scared frightened terrified confused satisfied amazed annoyed
    embarrassed exhausted thrilled delighted depressed concerned gone dressed married divorced crowded
    complicated sophisticated detailed advanced experienced qualified skilled educated talented relaxed
    determined entitled obsessed convinced dedicated devoted frustrated irritated overwhelmed puzzled drunk
    stressed stuck motivated invested disconnected
    """.split()
)

#: Adjectives of skill or training that predicate of people ("she is experienced", "he is qualified"), while
#: the verb takes an event or feeling as object ("anger was experienced"). They are adjectives only with a
#: personal subject and without "being"/"been" or an "as" complement ("is being experienced", "is
#: experienced as hurtful" are passives), whatever the tagger says (it often tags them JJ).
PERSONAL_STATIVES: frozenset[str] = frozenset("experienced qualified skilled trained".split())

#: Participle + particle pairs that name a state ("I'm burnt out", "that's messed up", "I got caught up in it"):
#: adjectives without a by-agent, like the single-word statives above.
PHRASAL_STATIVES: frozenset[tuple[str, str]] = frozenset(
    (participle, particle) for participle, particle in (pair.split("+") for pair in """
    burnt+out burned+out worn+out stressed+out freaked+out bummed+out spaced+out zoned+out messed+up caught+up
    fed+up mixed+up hung+up tied+up choked+up fired+up pumped+up wrapped+up screwed+up
    """.split())
)

#: Psychological verbs whose object is the experiencer ("it worried me"), after Levin's (1993) class 31.1
#: ("amuse" verbs; its common members). After a simple form of "be" and without a by-agent their participle
#: names the experiencer's state, an adjective ("I'm discouraged", "I was stunned at ..."); after "being" or
#: "been" it reads as an event, a passive ("it is being offended", "we have never been disappointed").
PSYCH_VERBS: frozenset[str] = frozenset(
    """
    abash affront aggravate aggrieve agitate alarm alienate amaze amuse anger annoy antagonize appall astonish
    astound baffle bewilder bore bother bug captivate charm cheer chill comfort concern confound confuse console
    content convince crush daunt daze dazzle deject delight demoralize depress devastate disappoint discourage
    disgust dishearten dismay dispirit displease distress disturb elate embarrass encourage energize enrage
    enthrall exasperate excite exhaust exhilarate fascinate faze flatter fluster frighten frustrate gladden
    gratify grieve horrify humiliate infuriate interest intimidate intrigue irritate madden mortify mystify
    nauseate offend overwhelm perplex perturb petrify please puzzle reassure relieve sadden satisfy scare shock
    sicken spook startle stun stupefy surprise terrify thrill torment trouble unnerve upset vex weary worry
    """.split()
)

#: Forms of "be" typed without the apostrophe ("im told", "thats done", "isn cancelled"): the tokenizer splits
#: "im"/"thats" into "i" + "m", "that" + "s" but the lemmatizer leaves "m", "s", "re" and the "n't"-less
#: negatives unlemmatized. "its" is not here: it is usually the possessive.
APOSTROPHELESS_BE: frozenset[str] = frozenset("m s re isn wasn aren weren".split())

#: Verbs without a transitive use, which therefore have no passive: after a contracted "'s" their participle is
#: a perfect with "has" ("what's happened", "it's become hard"), and a subjectless participle or a participle
#: after a noun is a simple past, not a reduced passive ("Just vanished.", "everything vanished").
INTRANSITIVE_VERBS: frozenset[str] = frozenset(
    "happen occur arrive become come go die exist emerge disappear vanish fall rise remain seem appear listen".split()
)

#: Verbs whose participle after a contracted "'s" is read as "has" although they have a passive: "who's felt
#: this way" (the passive "is felt" is written out, not contracted, in speech).
S_PERFECT_VERBS: frozenset[str] = frozenset("feel".split())

#: Participles after "get" that form a change-of-state adjective rather than a passive ("got tired").
GET_ADJECTIVAL: frozenset[str] = frozenset(
    """
    tired bored excited interested worried scared confused upset drunk used dressed ready lost started
    stuck frustrated annoyed involved
    """.split()
)

#: Verbs that take two objects (Levin 1993: give 13.1, future having 13.3, send 11.1, tell and teach 37.1,
#: bill and fine 54.5, deny and spare 10.6/13.5, build-type beneficiaries 26.1), verbs of naming and
#: judging with a predicative noun (appoint, declare, consider: Levin 29) and light verbs of
#: prepositional-passive idioms (take advantage of, make fun of, pay attention to): their passive keeps one
#: object ("I was given money", "he was declared winner", "she was taken advantage of"). Any other passive
#: participle with a bare noun right after it as "object" is an attributive participle in a noun phrase
#: ("is coagulated blood").
DOUBLE_OBJECT_VERBS: frozenset[str] = frozenset(
    """
    give hand pass lend loan sell rent lease pay feed serve owe offer promise allot allocate assign award grant
    guarantee leave bequeath will send mail ship post forward bring take tell teach ask show read write
    charge bill fine tax cost deny refuse spare forgive envy save buy get find make bake cook build call name
    dub elect appoint crown label issue afford allow permit advance wish bet cause declare consider deem
    proclaim nominate term rate rank vote style title christen baptize
    """.split()
)

#: Degree words that modify adjectives but not verbs (the "very" test): "very worried" is adjectival. Words
#: that also grade verbal participles ("so loved", "most visited", "extremely hurt") are left out.
DEGREE_ADVERBS: frozenset[str] = frozenset("very too rather fairly pretty".split())

#: Verbs whose expletive "it" subject stands for a finite clause ("it seems (that) ...", "it turns out ...").
RAISING_VERBS: frozenset[str] = frozenset("seem appear happen turn occur matter".split())

#: Verbs whose expletive "it" subject stands for a to-infinitive ("it takes courage to ask", "it made me
#: happy to see ..."); a finite complement ("it made me cry") is not enough.
INFINITIVE_EXTRAPOSING_VERBS: frozenset[str] = frozenset("take make cost pay help hurt matter suck mean".split())

#: Nouns that take a to-infinitive of their own (Quirk et al. 1985, 17.30; Huddleston & Pullum 2002, ch. 8):
#: modal and purpose nouns ("a chance to talk", "the pressure to perform", "time to heal"), nouns of a
#: control verb or adjective ("an attempt to leave", "the ability to cope"), and quantity words whose
#: infinitive is a relative with a gap ("a lot to handle", "too much to bear"). As the predicate of "it"
#: they describe what "it" is ("it's an opportunity to start fresh"); the infinitive is no extraposed subject.
INFINITIVE_NOUNS: frozenset[str] = frozenset(
    """
    opportunity chance time way moment occasion place reason means excuse incentive motivation pressure urge
    temptation need attempt effort invitation offer request permission ability capacity tendency courage
    strength energy power freedom room space lot plenty much
    """.split()
)

#: Indefinite pronouns that frame a clause impersonally ("someone should ...", "everyone knows ...").
INDEFINITE_SUBJECTS: frozenset[str] = frozenset(
    "someone somebody anyone anybody everyone everybody nobody".split()
)


#: Negative prefixes stripped before the suffix test when the whole word fails it.
NEGATIVE_PREFIXES: tuple[str, ...] = ("non", "dis", "un", "in", "im", "ir", "il", "mis")


def derive_base(
    lemma: str, verbs: Collection[str], adjectives: Collection[str]
) -> tuple[str, str] | None:
    """The (suffix, base) from which a noun lemma is derived, or ``None`` when it is no nominalization.

    Parameters
    ----------
    lemma
        The lower-case noun lemma.
    verbs, adjectives
        Base-form vocabularies (WordNet's lemma index in practice).
    """
    if lemma in NOT_NOMINAL or not lemma.isalpha():
        return None
    if lemma in IRREGULAR_NOMINAL:
        return ("irregular", IRREGULAR_NOMINAL[lemma])
    found = _derive_suffixed(lemma, verbs, adjectives)
    if found is None:
        # A negative prefix on a derived noun: in-ability, dis-agreement, un-happiness, non-compliance.
        for prefix in NEGATIVE_PREFIXES:
            rest = lemma[len(prefix):]
            if lemma.startswith(prefix) and len(rest) >= 5 and rest not in NOT_NOMINAL:
                found = IRREGULAR_NOMINAL.get(rest) and ("irregular", IRREGULAR_NOMINAL[rest])
                found = found or _derive_suffixed(rest, verbs, adjectives)
                if found is not None:
                    break
    return found


def _derive_suffixed(
    lemma: str, verbs: Collection[str], adjectives: Collection[str]
) -> tuple[str, str] | None:
    """The suffix rules of :func:`derive_base` (no irregulars, no prefixes)."""
    for suffix, replacements, pos in SUFFIX_RULES:
        if not lemma.endswith(suffix) or len(lemma) - len(suffix) < 2:
            continue
        stem = lemma[: -len(suffix)]
        vocabulary = verbs if pos == "V" else adjectives
        for replacement in replacements:
            if suffix == "ment" and replacement == "e" and not stem.endswith(("dg", "u")):
                continue  # -ment keeps a final e (announcement) except in judgment, argument
            if suffix == "ty" and len(stem) < 4:
                continue  # safe-ty, sure-ty; not six-ty, par-ty
            for candidate in _spellings(stem + replacement):
                if len(candidate) >= 3 and candidate != lemma and candidate in vocabulary:
                    return (suffix, candidate)
    return None


def _spellings(candidate: str) -> tuple[str, ...]:
    """The candidate base and, for a doubled final consonant, its undoubled form (refer-r-al); for a final
    "ck", the verb in -c that adds a k before a vowel suffix (mimic-k-ing, panic-k-ing, traffic-k-ing)."""
    if len(candidate) > 3 and candidate[-1] == candidate[-2] and candidate[-1] not in "aeiouls":
        return (candidate, candidate[:-1])
    if len(candidate) > 4 and candidate.endswith("ck"):
        return (candidate, candidate[:-1])
    return (candidate,)
