"""The distancing rules over a parsed spaCy ``Doc`` (English, ClearNLP dependency labels).

Every rule returns token ranges plus a rule name, so the app can say why a word is highlighted.

Agentless constructions (label ``agentless``), one per passive predicate without a by-agent:

``be-passive``
    a predicate with an ``auxpass`` or ``nsubjpass``/``csubjpass`` dependent ("was written", "has been sold");
    "be" may be typed without its apostrophe ("im told", "isn cancelled", "its stolen"). Not passives: "'s got"
    ("has got"), an attributive participle ("who's stated goals"), a relative-pronoun subject without "be"
    ("a test which ... discriminated"), "done"/"finished" with a personal subject ("they were done"), a base
    form in -e tagged as a participle ("I'm suppose to") and a participle with a bare noun right after it as
    object, of a verb that takes no second object ("is coagulated blood": an attributive participle).
``get-passive``
    "get" + past participle ("got fired"), whether the parser made "get" the auxiliary or the head.
``coordinated-passive``
    a participle coordinated with a passive and sharing its auxiliary ("was stolen and burned").
``reduced-relative``
    a past participle modifying a preceding noun ("the letters sent last week").
``participle-clause``
    a subjectless past-participle adverbial clause or fragment ("Founded in 1990, the firm ...",
    "Highly recommended.").

Adjective-like participles are not passives: without a by-agent, a participle on the list of psychological
and stative adjectives (tired, interested, worried, married, stuck, stressed ...) or a participle + particle
state ("burnt out", "messed up"), one modified by a degree word ("very worried"), and an un-prefixed
participle whose verb does not exist ("unexpected") are skipped. Skill adjectives (experienced, qualified)
are verbs after "being"/"been", with "as" or with a subject that is no person ("anger was experienced").

Impersonal subject framing (label ``impersonal``), one per subject:

``expletive-there``
    existential "there" (tag ``EX`` or relation ``expl``).
``expletive-it``
    "it" as the subject of a predicate whose real subject is an extraposed clause: a that/whether/wh-clause
    or a to-infinitive after an adjective, noun or prepositional predicate ("it is hard to say", "it is my
    understanding that", "it is up to you to decide"), "no use" + gerund, after a passive ("it is believed
    that"), a raising verb ("it seems that") or take/make/cost ("it made me feel good to see ..."). Not a
    to-infinitive that completes a noun taking one ("it's an opportunity to start fresh") or that ends in a
    stranded preposition ("it's hard to deal with": tough movement).
``time-it``
    the "it" of "it is (high/about) time" + clause ("it's time to let go"): no extraposition (UD ``nsubj``),
    but no referent either; it frames what someone should do without naming them.
``generic-one``
    the generic pronoun "one" as subject ("one never knows"), not in a clause about one event.
``generic-indefinite``
    an indefinite person pronoun as subject (someone, anybody, everyone, nobody, no one) of a finite clause
    that is not a statement about a past event ("nobody came" names the people of one event).
``generic-people``
    bare "people" as subject, optionally with many/most/some/all ("people say", "most people feel"), not in
    a clause about one event (simple past or progressive: "people were screaming" means some particular
    people).

"It sounds / feels / looks like + clause" and "it's like + clause" are not counted: copy-raising verbs with
an ordinary subject in UD, and in support conversations the reflective-listening move, not a distancing frame
(docs/detectors.md). Generic "you" is deliberately *not* counted: in support conversations "you" almost
always addresses the reader, and telling generic from addressee "you" needs discourse context the parser does
not have.

Nominalizations (label ``nominalization``), one per noun token: see :mod:`empathy.distancing.lexicon`. The
rule name is ``nominal:-SUFFIX:BASE`` (or ``nominal:irregular:BASE``), e.g. ``nominal:-ment:announce``.
Title-case words the tagger took for names ("Simulation") are tested too. The -ing policy (docs/detectors.md):
an -ing noun of its verb counts ("meeting", "feeling", "suffering"), as does an -ing form with a determiner,
possessive, adjective or numeral, or used as a noun modifier (a nominal gerund, ``nominal:gerund:VERB``); an
-ing word with a dependent only a verb takes (object, particle, subject) is a verbal gerund and does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # annotations only: importing the rules (e.g. for parse_text) does not import spaCy
    from spacy.tokens import Doc, Token

from .lexicon import (
    ADJECTIVAL_PARTICIPLES,
    APOSTROPHELESS_BE,
    DEGREE_ADVERBS,
    DOUBLE_OBJECT_VERBS,
    GET_ADJECTIVAL,
    INDEFINITE_SUBJECTS,
    INFINITIVE_EXTRAPOSING_VERBS,
    INFINITIVE_NOUNS,
    INTRANSITIVE_VERBS,
    PERSONAL_STATIVES,
    PHRASAL_STATIVES,
    PSYCH_VERBS,
    RAISING_VERBS,
    S_PERFECT_VERBS,
    derive_base,
)
from .result import LABELS, DistancingResult, DistancingSpan

_SUBJECTS = frozenset({"nsubj", "nsubjpass"})
_PASSIVE_MARKERS = frozenset({"auxpass", "nsubjpass", "csubjpass"})
#: Tags of the words that can be a passive's participle (a simple past only in the contexts find_passives names).
_PAST_FORMS = frozenset({"VBN", "VBD"})
_OWN_CLAUSE = frozenset({"nsubj", "nsubjpass", "csubjpass", "aux", "auxpass"})
_NOMINAL_HEADS = frozenset({"NOUN", "PROPN", "PRON"})
_COMPLEMENTIZERS = frozenset({"that", "whether", "if"})
_WH_WORDS = frozenset({"what", "who", "why", "how", "when", "where", "which", "whether"})
_CLAUSES = frozenset({"ccomp", "xcomp", "csubj", "advcl", "acl"})
_COPULAS = frozenset({"be", "become", "get", "seem", "remain", "look", "sound", "feel"})
_PEOPLE_DETERMINERS = frozenset({"many", "most", "some", "all"})
_PERSONAL = frozenset({"i", "we", "you", "they", "he", "she"})
_GET_FORMS = frozenset({"get", "gets", "got", "gotten", "getting"})
_BE_NEGATIVES = frozenset({"isn", "wasn", "aren", "weren"})
_S_CONTRACTIONS = frozenset({"'s", "’s", "s"})


class Passive(NamedTuple):
    """A passive predicate: its token index, the token range to highlight, the rule and whether it has an agent."""

    predicate: int
    start: int
    end: int
    rule: str
    agent: bool


class Hit(NamedTuple):
    """A token range with its label and rule (token offsets, end exclusive)."""

    start: int
    end: int
    label: str
    rule: str


def _be_form(token: Token) -> bool:
    """A form of "be", including contractions typed without an apostrophe ("im", "thats", "isn")."""
    return token.lemma_ == "be" or token.lower_ in APOSTROPHELESS_BE


def _get_form(token: Token) -> bool:
    """A form of "get"; the lemmatizer leaves auxiliary "getting" unlemmatized ("I keep getting rejected")."""
    return token.lemma_ == "get" or token.lower_ in _GET_FORMS


def _has_agent(token: Token) -> bool:
    """A by-phrase agent among the dependents ("written by Anna")."""
    return any(child.dep_ == "agent" for child in token.children)


def _personal_stative_is_verb(token: Token) -> bool:
    """"experienced", "qualified" ... as a verb: after "being"/"been", with an "as" complement or with a subject
    that is not a person ("anger was experienced", "it is being experienced as intrusive")."""
    children = list(token.children)
    if any(c.dep_ in ("auxpass", "aux") and c.lower_ in ("being", "been") for c in children):
        return True
    if any(c.dep_ == "prep" and c.lower_ == "as" for c in children):
        return True
    subjects = [c for c in children if c.dep_ in ("nsubj", "nsubjpass")]
    return bool(subjects) and not any(
        c.lower_ in _PERSONAL or c.lower_ in ("me", "us", "who") or c.pos_ == "PROPN" for c in subjects)


def _adjectival(token: Token, verbs: frozenset[str]) -> bool:
    """True for a participle that reads as an adjective ("tired", "very worried", "unexpected", "stunned")."""
    lower = token.lower_
    if lower in PERSONAL_STATIVES:
        return not _personal_stative_is_verb(token)
    if lower in ADJECTIVAL_PARTICIPLES:
        return True
    if any(c.dep_ == "prt" and (lower, c.lower_) in PHRASAL_STATIVES for c in token.children):
        return True  # "I'm burnt out", "that's messed up", "I got caught up in it": a state
    if token.lemma_.lower() in PSYCH_VERBS and not any(
            c.dep_ == "auxpass" and c.lower_ in ("being", "been") for c in token.children):
        return True  # "I'm discouraged": the experiencer's state ("is being offended" stays an event)
    if lower.startswith("un") and token.lemma_.lower() not in verbs:
        return True
    for child in token.children:
        if child.dep_ == "advmod" and child.lower_ in DEGREE_ADVERBS:
            return True
        # Coordinated with plain adjectives ("outdated, dirty and small"): a property, not an event.
        if child.dep_ == "conj" and child.tag_ == "JJ":
            return True
    return False


def _perfect_after_s(participle: Token) -> bool:
    """After a contracted "'s", a participle that cannot be passive, so the "'s" is "has" (a perfect).

    "got" ("he's got a plan", "it's got to stop"), a participle with a direct object ("it's taken over my
    life", "it's added more pressure") and a participle of a verb without a transitive use ("what's happened").
    """
    return (_get_form(participle) or participle.lemma_ in INTRANSITIVE_VERBS or participle.lemma_ in S_PERFECT_VERBS
            or any(child.dep_ == "dobj" for child in participle.children)
            or any(_bare_small_clause(child) for child in participle.children))


def _bare_small_clause(clause: Token) -> bool:
    """A bare-infinitive clause with its own subject ("what's made [you feel] this way"): the participle has
    an object, so it is active."""
    return clause.dep_ in ("ccomp", "xcomp") and clause.tag_ == "VB" and any(
        c.dep_ == "nsubj" for c in clause.children) and not any(
        c.dep_ in ("mark", "aux") for c in clause.children)


def find_passives(doc: Doc, verbs: frozenset[str], adjectives: frozenset[str]) -> list[Passive]:
    """Every passive predicate of the document, with and without agent, in token order.

    ``verbs`` is the set of verb base forms, used to recognise un-prefixed adjectival participles. A first
    pass finds the passives the parser marks (``nsubjpass``/``auxpass``/``agent``) and those after an
    apostrophe-less "be" (:func:`_marked_passive`, :func:`_apostropheless_passive`); a second pass judges the
    remaining participles, whose status may depend on a passive found in the first (:func:`_participle_passive`).
    """
    found: dict[int, Passive] = {}
    participles: list[Token] = []
    for token in doc:
        if token.tag_ not in _PAST_FORMS and token.dep_ not in _PASSIVE_MARKERS:
            continue  # neither a passive's marker nor a participle: nothing below can fire (most tokens)
        if token.dep_ in _PASSIVE_MARKERS and token.head.i != token.i:
            head = token.head
            if head.i in found or head.lemma_ == "be":
                continue  # "he's been away": "been" is no participle of a passive
            passive = _marked_passive(head, verbs, adjectives)
            if passive is None:
                continue
            found[head.i] = passive
        if token.i not in found:
            passive = _apostropheless_passive(token, verbs)
            if passive is not None:
                found[token.i] = passive
                continue
        # A past form heading a subjectless relative ("letters sent last week") or coordinated with a passive
        # ("was swept away and found ...") is a participle the tagger read as a simple past. A token that is
        # not a word ("Guaranty.doc") is no participle.
        if token.is_alpha and (token.tag_ == "VBN" or (token.tag_ == "VBD" and token.dep_ in ("acl", "conj"))) \
                and not _base_spelling(token):
            participles.append(token)
    # Second pass: participles whose status depends on a head found above (coordination) or on context.
    for token in participles:
        if token.i not in found:
            passive = _participle_passive(token, found, verbs)
            if passive is not None:
                found[token.i] = passive
    return [found[i] for i in sorted(found)]


def _marked_passive(head: Token, verbs: frozenset[str], adjectives: frozenset[str]) -> Passive | None:
    """The passive headed by ``head``, a word the parser gave a passive dependent, or ``None`` when it is none."""
    aux = next((c for c in head.children if c.dep_ == "auxpass"), None)
    if aux is not None and not (_be_form(aux) or _get_form(aux)):
        return None  # "looks browned": a copular verb with a participle complement
    if aux is not None and aux.lower_ in _S_CONTRACTIONS and _perfect_after_s(head):
        return None  # "he's got a plan", "what's happened", "it's taken over my life": 's is "has"
    if head.dep_ in ("amod", "compound") and not (aux is not None and aux.tag_ in ("VB", "VBG", "VBN")):
        # "who's stated goals": an attributive participle is no predicate, unless a non-finite "be"
        # makes it one wherever the parser hung it ("Being ignored hurts").
        return None
    if aux is None and any(c.dep_ == "aux" and c.lemma_ == "have" for c in head.children):
        return None  # "everyone has it all figured out": with only "have" and no be/get it is a perfect
    if aux is None and not any(c.dep_ == "aux" for c in head.children) and any(
            c.dep_ == "nsubjpass" and c.tag_ in ("WDT", "WP") for c in head.children):
        return None  # "a test which ... discriminated": a relative pronoun needs a finite verb, no be
    if (head.lower_ in ("done", "finished") and not _has_agent(head)
            and any(c.dep_ == "nsubjpass" and c.lower_ in _PERSONAL for c in head.children)):
        return None  # "after they were done", "I'm finished": a person who is done has finished (adjective)
    # Only a past participle can be passive ("I'm suppose to" is a misparse); after a passive
    # auxiliary a form tagged as simple past ("were acted") is read as the participle, and so is an
    # "experienced"-type word tagged as adjective when its verb reading holds ("anger was experienced").
    if head.tag_ != "VBN" and not (aux is not None and head.tag_ == "VBD") and not (
            head.lower_ in PERSONAL_STATIVES and _personal_stative_is_verb(head)):
        return None
    if _base_spelling(head):
        return None  # "I'm suppose to", "I was use to it": the base form, whatever the tagger said
    agent = _has_agent(head)
    get = aux is not None and _get_form(aux)
    if not agent and (_adjectival(head, verbs) or (get and head.lower_ in GET_ADJECTIVAL)):
        return None
    if _attributive_before_object(head, adjectives):
        return None
    start = min(aux.i, head.i) if aux is not None else head.i
    return Passive(head.i, start, head.i + 1, "get-passive" if get else "be-passive", agent)


def _attributive_before_object(participle: Token, adjectives: frozenset[str]) -> bool:
    """A "passive" participle with a bare noun as direct object, of a verb that takes no second object: the
    participle modifies that noun in a predicate noun phrase ("morcillas is [coagulated blood]", "business is
    [cut throat sport]"). A passive keeps an object only when its verb takes two ("I was given money", "he was
    taught French") or in an idiom ("was taken advantage of")."""
    if participle.lemma_.lower() in DOUBLE_OBJECT_VERBS:
        return False
    return any(c.dep_ == "dobj" and c.pos_ == "NOUN" and c.left_edge.i == participle.i + 1
               and c.lemma_.lower() not in adjectives
               and not any(d.dep_ in ("det", "poss", "nummod", "predet") for d in c.children)
               for c in participle.children)


def _base_spelling(token: Token) -> bool:
    """A "participle" spelled as its base verb in -e ("suppose", "use"): no English verb in -e has a participle
    identical to its base except come, become and overcome, so the word is a base form (a typo for
    "supposed", "used" or a mis-tag), not a passive participle."""
    lower = token.lower_
    return lower.endswith("e") and lower == token.lemma_.lower() and not lower.endswith("come")


def _apostropheless_passive(token: Token, verbs: frozenset[str]) -> Passive | None:
    """A be-passive whose "be" the parser does not read as an auxiliary, or ``None``.

    "Sports isn cancelled yet", "I know its stolen": the parser reads neither the apostrophe-less "isn" nor
    "its" (for "it's") as an auxiliary; a possessive cannot modify a participle. "isn", "wasn" ... can only be
    "be", wherever the parser hung them; "s", "m", "its" only when they depend on the participle.
    """
    doc = token.doc
    if not (token.tag_ in ("VBN", "VBD") and token.i > 0
            and (doc[token.i - 1].lower_ in _BE_NEGATIVES
                 or (doc[token.i - 1].head.i == token.i and (doc[token.i - 1].lower_ in APOSTROPHELESS_BE or (
                     doc[token.i - 1].lower_ == "its" and token.dep_ not in ("amod", "compound")))))
            and not any(c.dep_ in ("aux", "auxpass") for c in token.children)) or _base_spelling(token):
        return None
    aux = doc[token.i - 1]
    agent = _has_agent(token)
    if aux.lower_ in _S_CONTRACTIONS and _perfect_after_s(token):
        return None  # "thats happened": the apostrophe-less 's is "has"
    if agent or not _adjectival(token, verbs):
        return Passive(token.i, aux.i, token.i + 1, "be-passive", agent)
    return None


def _participle_passive(token: Token, found: dict[int, Passive], verbs: frozenset[str]) -> Passive | None:
    """The passive a participle without passive dependents forms in its context (``found``: the passives found
    so far), or ``None``: a fragment, get-, coordinated or participle-clause passive, or a reduced relative."""
    dep = token.dep_
    head = token.head
    own = {child.dep_ for child in token.children}
    agent = "agent" in own
    if token.tag_ == "VBD" and not (dep == "acl" or (
            dep == "conj" and head.i in found and not own & {"dobj", "ccomp"} and not any(
                _infinitive(c) for c in token.children) and token.lemma_ not in ("be", "have", "do"))):
        # A simple past counts only as a relative's or a passive's coordinated participle, and then only
        # without an object or a clause that an active verb takes ("was caught and decided to lie").
        return None
    if dep in ("ROOT", "advcl") and any(c.dep_ == "conj" and c.tag_ == "VBD" for c in token.children):
        # Coordinated with a simple past, a subjectless "participle" is one too, the subject left out
        # ("Listened to my problem and gave advice.", "Walked in and was out in 10 minutes").
        return None
    if not agent and token.lemma_ in INTRANSITIVE_VERBS and dep != "conj":
        return None  # "Just vanished.", "Listened to my problem.": no passive without a transitive verb
    if dep == "ROOT" and token.tag_ == "VBN" and not own & _OWN_CLAUSE and "dobj" not in own:
        # A root participle without subject or auxiliary is a fragment passive ("Highly recommended.").
        # With a subject it is too often a simple past mis-tagged as a participle to count.
        if agent or not _adjectival(token, verbs):
            return Passive(token.i, token.i, token.i + 1, "participle-clause", agent)
        return None
    if own & _OWN_CLAUSE:
        return None
    if dep in ("acomp", "xcomp", "oprd", "ccomp", "advcl") and _get_form(head) and head.i < token.i:
        if token.lower_ in GET_ADJECTIVAL and not agent:
            return None
        return Passive(token.i, head.i, token.i + 1, "get-passive", agent)
    if not agent and _adjectival(token, verbs):
        return None  # an adjectival participle, in each of the remaining contexts
    if dep == "conj" and head.i in found:
        return Passive(token.i, token.i, token.i + 1, "coordinated-passive", agent)
    if dep == "acl" and head.pos_ in _NOMINAL_HEADS and head.i < token.i and not _clause_subject(head):
        return _reduced_relative(token, head, agent)
    if dep == "advcl" and not any(child.dep_ == "mark" for child in token.children if child.i < token.i):
        return Passive(token.i, token.i, token.i + 1, "participle-clause", agent)
    return None


def _reduced_relative(token: Token, head: Token, agent: bool) -> Passive | None:
    """A participle hung on a noun (``acl``): a reduced relative ("letters sent last week"), a clausal
    be-passive under subject-auxiliary inversion, or ``None`` for an inverted perfect question."""
    copula = head.head
    if (head.dep_ in ("nsubj", "dobj") and copula.lemma_ == "have" and copula.is_sent_start
            and token.doc[copula.sent.end - 1].text == "?"):
        return None  # "Has something changed?": an inverted perfect question, not "have it done"
    if (head.dep_ == "nsubj" and copula.lemma_ == "be" and copula.i < head.i
            and not any(c.dep_ in ("attr", "acomp") and c.lower_ not in _WH_WORDS for c in copula.children)):
        # Subject-auxiliary inversion ("why is the city called X?"): the parser hangs the participle on the
        # subject, but "is ... called" is a clausal be-passive.
        return Passive(token.i, copula.i, token.i + 1, "be-passive", agent)
    return Passive(token.i, token.i, token.i + 1, "reduced-relative", agent)


#: Words that introduce only a finite clause (never a noun phrase), so the noun after them is a subject.
_SUBORDINATORS = frozenset({"because", "when", "while", "if", "although", "though", "whenever", "once", "cause",
                            "cuz", "whereas", "unless"})


def _clause_subject(noun: Token) -> bool:
    """A noun that is the subject of the clause whose verb the parser hung on it as a participle ("Poor
    decisions led to ...", "I woke up and a pipe busted", "when a pipe busted"): the participle is that
    clause's simple past, not a reduced relative. Signs: the noun is the root or heads a clause relation
    itself, is coordinated with a verb, or follows a word that introduces only clauses (and is no subject of
    another verb). (A noun that shares its verb with a second subject is left alone: in "a ferry packed with
    passengers capsized, and divers have pulled ..." the participle is a true reduced relative.)"""
    dep = noun.dep_
    if dep in ("ROOT", "advcl", "ccomp", "xcomp", "csubj", "relcl", "pcomp"):
        return True
    if dep == "conj" and noun.head.pos_ in ("VERB", "AUX"):
        return True
    first = noun.left_edge
    return dep not in ("nsubj", "nsubjpass") and first.i > 0 and noun.doc[first.i - 1].lower_ in _SUBORDINATORS


def _complement_clause(clause: Token) -> bool:
    """A that/whether/wh finite clause or a to-infinitive: the kind of clause an expletive "it" stands for."""
    dep = clause.dep_
    children = list(clause.children)
    infinitive = any(c.dep_ == "aux" and c.tag_ == "TO" for c in children)
    if dep in ("xcomp", "advcl"):
        return infinitive
    if dep == "acl":
        return infinitive or any(c.dep_ == "mark" and c.lower_ in _COMPLEMENTIZERS for c in children)
    if dep == "relcl":
        # The parser's "relative clause" on a predicate noun is a content clause when "that" is a
        # complementizer, not a relative pronoun with a gap ("it's an old adage that you follow the money").
        return any(c.dep_ == "mark" and c.lower_ == "that" for c in children)
    if dep in ("ccomp", "csubj"):
        return True
    return False


def _infinitive(clause: Token) -> bool:
    """A to-infinitive clause ("to say", "for Google to acquire")."""
    return clause.dep_ in ("xcomp", "advcl", "acl", "ccomp") and any(
        c.dep_ == "aux" and c.tag_ == "TO" for c in clause.children
    )


def _expletive_it(subject: Token) -> bool:
    """True when subject "it" stands for an extraposed clause after it.

    Adjective, noun and some prepositional predicates (after a copula) take a to-infinitive, a that/wh-clause
    or a gerund; passives and raising verbs a finite clause; take/make/cost... a to-infinitive (for "make",
    also one hung on its small clause: "it made me feel good to see them").
    """
    head = subject.head
    # A wh-word is the questioned complement, not a predicate ("what was it like ...?").
    complements = [c for c in head.children if c.dep_ in ("acomp", "attr", "oprd") and c.lower_ not in _WH_WORDS]
    # With a copula the parser hangs the extraposed clause on "is" or on the adjective/noun: both count.
    # The predicate may precede the subject ("how hard it is to change"). A prepositional predicate counts
    # too ("it is up to you to decide", "it was in their culture to share", "it's beyond me why ...").
    copular = head.lemma_ in _COPULAS and (bool(complements) or _modal_pp(head, subject))
    if copular and _no_use_gerund(head):
        return True
    # A gerund after a noun predicate that names someone ("it was my mom calling me") describes that
    # someone; only an adjective or an evaluative noun ("a pain dealing with it") extraposes a gerund.
    gerund_host = copular and not any(
        c.dep_ == "attr" and (c.pos_ in ("PROPN", "PRON") or any(d.dep_ == "poss" for d in c.children))
        for c in complements)
    # A to-infinitive after a noun that takes one itself ("it's an opportunity to start fresh", "a lot to
    # handle") completes that noun: "it" is what the noun phrase describes, not a placeholder for the clause.
    noun_infinitive = copular and any(_infinitive_host(c) for c in complements)
    for predicate in [head, *complements]:
        for clause in predicate.children:
            if clause.i <= subject.i or (clause.dep_ not in _CLAUSES and clause.dep_ not in ("dobj", "relcl")):
                continue
            if (_infinitive(clause) or _subjectless_gerund(clause)) and (
                    _stranded_preposition(clause) or (noun_infinitive and _infinitive(clause))):
                continue
            if clause.dep_ == "dobj":
                if predicate is head and not complements and _infinitive_on_object(head, clause):
                    return True
            elif copular or predicate is not head:
                if _complement_clause(clause) or (gerund_host and _subjectless_gerund(clause)):
                    return True
            elif _verb_extraposes(subject, head, clause):
                return True
    return False


def _time_it(subject: Token) -> bool:
    """"It is time to go", "it's about time you called", "it is high time we left": the "it" of a time
    expression (no referent, but no extraposition either: UD gives it ``nsubj``, the clause belongs to "time")
    framing what someone should do without naming them. "The first time", "a good time" (a period) and "it's
    time" without a clause are not counted."""
    head = subject.head
    if head.lemma_ != "be":
        return False
    for child in head.children:
        if child.dep_ == "attr":
            time = child
        elif child.dep_ == "prep" and child.lower_ == "about":
            time = next((c for c in child.children if c.dep_ == "pobj"), child)
        else:
            continue
        if time.lemma_ != "time" or any(c.dep_ in ("det", "poss", "nummod") or (
                c.dep_ == "amod" and c.lower_ not in ("high", "past")) for c in time.children):
            return False
        return any(c.i > time.i and c.dep_ in ("relcl", "acl", "advcl", "xcomp", "ccomp")
                   for c in (*time.children, *head.children))
    return False


def _infinitive_on_object(verb: Token, noun: Token) -> bool:
    """"it means a lot to hear that": the extraposed infinitive of mean/take/cost ... hung on the object."""
    return verb.lemma_ in INFINITIVE_EXTRAPOSING_VERBS and any(_infinitive(c) or (c.dep_ == "relcl" and any(
        a.dep_ == "aux" and a.tag_ == "TO" for a in c.children)) for c in noun.children)


def _verb_extraposes(subject: Token, verb: Token, clause: Token) -> bool:
    """A clause that a verb (not a copula) lets "it" stand for: a finite clause after a passive or a raising
    verb, a to-infinitive after take/make/cost..., the stimulus clause of a psychological verb."""
    if subject.dep_ == "nsubjpass" or any(c.dep_ == "auxpass" for c in verb.children):
        return clause.dep_ == "ccomp"
    lemma = verb.lemma_
    if lemma in RAISING_VERBS and (clause.dep_ == "ccomp" or _like_clause(clause)):
        return True
    if lemma in INFINITIVE_EXTRAPOSING_VERBS and (_infinitive(clause) or _small_clause_host(clause)):
        return True
    # "it bothers me that they left", "it scares me to think": the clause is the stimulus.
    return lemma in PSYCH_VERBS and (_infinitive(clause) or (
        clause.dep_ == "ccomp" and any(c.dep_ == "mark" and c.lower_ == "that" for c in clause.children)))


def _modal_pp(head: Token, subject: Token) -> bool:
    """A prepositional predicate after "be" that takes an extraposed clause: "up to" someone ("it is up to you
    to decide"), a preposition with a personal pronoun ("it's on you to fix it", "it is beyond me why ..."),
    with a possessed noun ("it was in their culture to share", "within your rights") or "of" + noun ("it is of
    great importance that ..."). A place ("it's in the drawer") or a bare noun is no such predicate."""
    for prep in head.children:
        if prep.dep_ != "prep" or prep.i <= subject.i:
            continue
        objects = [c for c in prep.children if c.dep_ == "pobj"]
        if prep.lower_ == "up" and any(c.dep_ == "prep" and c.lower_ == "to" for c in prep.children):
            return True
        if prep.lower_ == "of" and objects:
            return True
        if any((o.tag_ == "PRP" and o.lower_ in _PERSONAL_OBJECTS) or any(d.dep_ == "poss" for d in o.children)
               for o in objects):
            return True
    return False


#: Personal pronouns as the object of a prepositional predicate ("up to you", "on me", "beyond us").
_PERSONAL_OBJECTS = frozenset("me you him her us them".split())


def _no_use_gerund(head: Token) -> bool:
    """"It is no use / no good + gerund" ("it's no use crying over it"): the gerund is the subject, whatever the
    parser made of "use" and the -ing word."""
    doc = head.doc
    return any(t.tag_ in ("VBG", "NN") and t.lower_.endswith("ing") and t.i >= 2
               and doc[t.i - 2].lower_ == "no" and doc[t.i - 1].lower_ in ("use", "good")
               for t in doc[head.i + 1: head.sent.end])


def _small_clause_host(clause: Token) -> bool:
    """A small clause under causative "make" that hosts the extraposed clause: "it made me [feel good] to see
    them", "it makes me [feel better] knowing you care", "it makes me [sad] to see this". The infinitive or
    gerund hangs on the small clause's copula or adjective; "it makes me [want] to cry" is no such host."""
    if clause.dep_ not in ("ccomp", "xcomp", "oprd", "acomp") or any(
            c.dep_ == "aux" and c.tag_ == "TO" for c in clause.children):
        return False
    if not (clause.tag_ == "JJ" or (clause.lemma_ in _COPULAS and clause.tag_ == "VB")):
        return False
    return any(c.i > clause.i and (_infinitive(c) or _subjectless_gerund(c)) and not _stranded_preposition(c)
               for c in clause.children)


def _infinitive_host(predicate: Token) -> bool:
    """A predicate noun (or quantity word) that takes a to-infinitive of its own ("an opportunity to start",
    "the pressure to perform", "a lot to handle", "too much to bear"), unless a possessive makes it a
    role ("it's my right to refuse", "it is our job to help": extraposition)."""
    return predicate.lemma_.lower() in INFINITIVE_NOUNS and not any(c.dep_ == "poss" for c in predicate.children)


#: Prepositions that cannot stand without an object (unlike the particles up, out, in, on, over ...).
_TRANSITIVE_PREPOSITIONS = frozenset("with about to of for at from into onto upon without like".split())


def _stranded_preposition(clause: Token) -> bool:
    """An infinitive that ends in a preposition without its object ("it's hard to deal with", "it was hard to
    get used to", "a lot to think about"): the missing object is "it" itself (tough movement, an infinitival
    relative), so "it" refers to something and stands for no clause."""
    verbs = [clause, *(c for c in clause.children if c.dep_ in ("xcomp", "acomp", "oprd"))]
    # A stranded preposition has no dependent at all ("for sure" has one, "sure", and is no gap).
    return any(c.dep_ == "prep" and c.lower_ in _TRANSITIVE_PREPOSITIONS and not c.n_rights and not c.n_lefts
               for verb in verbs for c in verb.children)


def _subjectless_gerund(clause: Token) -> bool:
    """An extraposed gerund clause after an adjective predicate ("it can be tough getting a minute")."""
    return clause.tag_ == "VBG" and clause.dep_ in ("xcomp", "advcl") and not any(
        c.dep_ in ("nsubj", "nsubjpass", "mark", "aux") for c in clause.children)


def _like_clause(clause: Token) -> bool:
    """A finite clause introduced by "like" / "as if" / "as though" ("it seemed like they had forgotten")."""
    return clause.dep_ == "advcl" and any(c.dep_ == "mark" and c.lower_ in ("like", "as", "though")
                                          for c in clause.children) and any(
        c.dep_ in ("nsubj", "nsubjpass") for c in clause.children)


def _finite(verb: Token) -> bool:
    """A finite clause: a tensed verb or a tensed/modal auxiliary. The subject of an infinitive or bare small
    clause is the main verb's object ("having someone to talk to", "I need someone to listen")."""
    finite_tags = ("VBD", "VBZ", "VBP", "MD")
    return verb.tag_ in finite_tags or any(
        c.dep_ in ("aux", "auxpass") and c.tag_ in finite_tags for c in verb.children)


def _object_in_disguise(subject: Token) -> bool:
    """An indefinite right after a non-finite verb is that verb's object, whatever the parser made of it
    ("having someone to talk to helps", "to see someone else get it")."""
    if subject.i == 0:
        return False
    before = subject.doc[subject.i - 1]
    return before.tag_ in ("VB", "VBG", "VBN") and before.dep_ not in ("aux", "auxpass")


def _episodic_past(subject: Token) -> bool:
    """A statement about a past event ("nobody came", "everyone was crying", "someone jumped in front of a
    train"): the indefinite names the particular people of that event, not people in general. Questions
    ("Did anyone else feel this?") and modal or present clauses stay generic."""
    verb = subject.head
    auxiliaries = [c for c in verb.children if c.dep_ in ("aux", "auxpass")]
    if any(a.tag_ == "MD" or a.i < subject.i for a in auxiliaries):
        return False  # "someone would call", "did anyone ...?"
    finite = auxiliaries[0] if auxiliaries else verb
    if finite is verb and verb.lower_ == "used" and any(_infinitive(c) for c in verb.children):
        return False  # "people used to think ...", "everyone used to tease me": a past habit, not one event
    return finite.tag_ == "VBD"


#: Adverbs that make a progressive habitual ("people are always telling me ..."), not one ongoing event.
_HABITUAL_ADVERBS = frozenset("always constantly forever continually".split())


def _episodic(subject: Token) -> bool:
    """A clause about one event, past or ongoing: a simple past (:func:`_episodic_past`) or a progressive
    ("people are dying", "people were screaming"). A bare plural or generic pronoun in such a clause means some
    particular people present at the event (Carlson 1977: the existential reading), not people in general.
    "Going to" (future) and a progressive with always/constantly (a habit) stay generic."""
    if _episodic_past(subject):
        return True
    verb = subject.head
    return (verb.tag_ == "VBG" and any(c.dep_ == "aux" and c.lemma_ == "be" for c in verb.children)
            and not (verb.lower_ == "going" and any(_infinitive(c) for c in verb.children))
            and not any(c.dep_ in ("advmod", "neg") and c.lower_ in _HABITUAL_ADVERBS for c in verb.children))


def find_impersonal(doc: Doc) -> list[Hit]:
    """Impersonal subjects: expletive there/it and generic person subjects."""
    hits: list[Hit] = []
    for token in doc:
        lower = token.lower_
        if lower == "there" and (token.tag_ == "EX" or token.dep_ == "expl"):
            hits.append(Hit(token.i, token.i + 1, "impersonal", "expletive-there"))
            continue
        if token.dep_ not in _SUBJECTS:
            continue
        if lower == "it":
            if _expletive_it(token):
                hits.append(Hit(token.i, token.i + 1, "impersonal", "expletive-it"))
            elif _time_it(token):
                hits.append(Hit(token.i, token.i + 1, "impersonal", "time-it"))
        elif lower == "one":
            children = list(token.children)
            if not children and not _episodic(token):
                # Numeral "one" of a past or ongoing event ("one broke", "one was missing") is no generic person.
                hits.append(Hit(token.i, token.i + 1, "impersonal", "generic-one"))
            elif (len(children) == 1 and children[0].lower_ == "no" and children[0].i == token.i - 1
                  and _finite(token.head) and not _episodic_past(token)):
                hits.append(Hit(token.i - 1, token.i + 1, "impersonal", "generic-indefinite"))
        elif lower in INDEFINITE_SUBJECTS:
            if _finite(token.head) and not _object_in_disguise(token) and not _episodic_past(token):
                hits.append(Hit(token.i, token.i + 1, "impersonal", "generic-indefinite"))
        elif lower == "people" and _finite(token.head) and not _episodic(token):
            children = list(token.children)
            if all(c.lower_ in _PEOPLE_DETERMINERS and c.i < token.i for c in children):
                start = min([token.i] + [c.i for c in children])
                hits.append(Hit(start, token.i + 1, "impersonal", "generic-people"))
    return hits


def find_nominalizations(
    doc: Doc, verbs: frozenset[str], adjectives: frozenset[str], memo: dict[str, str | None]
) -> list[Hit]:
    """Common-noun tokens derived from a verb or adjective (see :func:`lexicon.derive_base`).

    ``memo`` caches the lemma -> rule decision across documents (the lexicon test is the costly part).
    """
    hits: list[Hit] = []
    for token in doc:
        if len(token) < 4:
            continue
        pos = token.pos_
        if pos == "NOUN":
            lemma = token.lemma_.lower()
            if lemma.endswith("ing") and _verbal_ing(token):
                continue  # "shaking and sobbing", "waiting for hours": a verb form the tagger read as a noun
        elif pos == "PROPN" and token.is_alpha and (token.is_title or token.is_upper):
            # Title-case headings make the tagger read "Simulation", "Agreement" as names; a name does
            # not end in -ing-less derivational suffixes often enough to matter, -ing names do (Manning).
            lemma = token.lower_
            if lemma.endswith("ing"):
                continue
        elif token.tag_ == "VBG" and _nominal_gerund(token):
            hits.append(Hit(token.i, token.i + 1, "nominalization", f"nominal:gerund:{token.lemma_.lower()}"))
            continue
        else:
            continue
        if lemma in memo:
            rule = memo[lemma]
        else:
            derived = derive_base(lemma, verbs, adjectives)
            if derived is None:
                rule = None
            elif derived[0] == "irregular":
                rule = f"nominal:irregular:{derived[1]}"
            else:
                rule = f"nominal:-{derived[0]}:{derived[1]}"
            memo[lemma] = rule
        if rule is not None:
            hits.append(Hit(token.i, token.i + 1, "nominalization", rule))
    return hits


#: Dependents only a verb takes: an object, a particle, a predicative or clausal complement, a subject or an
#: auxiliary. An -ing word with one of them is a verbal gerund or participle, whatever its tag.
_VERBAL_DEPENDENTS = frozenset(
    "dobj dative prt acomp oprd ccomp xcomp nsubj nsubjpass csubj aux auxpass agent".split())
#: Dependents only a noun takes: a determiner, a possessive, an adjective, a numeral.
_NOMINAL_DEPENDENTS = frozenset("det poss amod nummod".split())


def _verbal_ing(token: Token) -> bool:
    """An -ing "noun" that is a verb form (the -ing policy in docs/detectors.md): with a dependent only a verb
    takes ("I saw this coming", "giving up"), or, without a determiner, coordinated with an -ing verb
    ("shaking and sobbing"). A noun modifier tagged as a noun stays a noun, whether the parser calls it a
    compound or an adjective ("a moving truck", "the housing crisis")."""
    children = list(token.children)
    if any(c.dep_ in _VERBAL_DEPENDENTS for c in children):
        return True
    if any(c.dep_ in ("det", "poss") for c in children):
        return False
    return (token.dep_ == "conj" and token.head.tag_ == "VBG") or any(
        c.dep_ == "conj" and c.tag_ == "VBG" for c in children)


def _nominal_gerund(token: Token) -> bool:
    """An -ing form tagged as a verb that is used as a noun: with a determiner, possessive, adjective or
    numeral before it ("this posting", "his thinking", "constant worrying") or as a noun modifier ("screening
    test"), and without a dependent only a verb takes. Verbal gerunds ("making money", "crying over it") are
    not counted."""
    children = list(token.children)
    if any(c.dep_ in _VERBAL_DEPENDENTS for c in children):
        return False
    if token.dep_ == "compound":
        return True
    return any(c.dep_ in _NOMINAL_DEPENDENTS and c.i < token.i for c in children)


#: Typographic apostrophes the tokenizer and lemmatizer do not read as contractions ("It’s" has the lemma "’",
#: not "be"); replaced one for one before parsing, so that character offsets are those of the original text.
_PARSE_TRANSLATION = str.maketrans({"\u2019": "'"})


def parse_text(text: str) -> str:
    """The text handed to spaCy: the original with typographic apostrophes made straight (same length)."""
    return text.translate(_PARSE_TRANSLATION)


def count_sentences(doc: Doc) -> int:
    """Sentences containing at least one non-space token (an empty text has 0)."""
    return sum(1 for sent in doc.sents if any(not t.is_space for t in sent))


def analyze_doc(
    doc: Doc, verbs: frozenset[str], adjectives: frozenset[str], memo: dict[str, str | None],
    original: str | None = None,
) -> DistancingResult:
    """Run every rule over one parsed document and collect spans with character offsets.

    ``original`` is the text before :func:`parse_text`; a span's ``text`` is taken from it (same offsets).
    """
    if original is not None and len(original) != len(doc.text):
        raise ValueError("original must be the text the document was parsed from (same length)")
    hits = find_nominalizations(doc, verbs, adjectives, memo) + find_impersonal(doc)
    hits.extend(
        Hit(p.start, p.end, "agentless", p.rule) for p in find_passives(doc, verbs, adjectives) if not p.agent
    )
    counts = dict.fromkeys(LABELS, 0)
    spans = []
    source = doc.text if original is None else original
    for hit in hits:
        counts[hit.label] += 1
        # a Span's offsets, read off its first and last token without building the Span (cheaper, the same
        # numbers): start at the first token, end after the last token's text (its trailing space excluded)
        last = doc[hit.end - 1]
        start, end = doc[hit.start].idx, last.idx + len(last)
        spans.append(DistancingSpan(start, end, hit.label, hit.rule, source[start:end]))
    spans.sort(key=lambda s: (s.start, s.end, s.label))
    return DistancingResult(sentences=count_sentences(doc), counts=counts, spans=tuple(spans))
