"""Sentence frames: the closing sentences of a client narrative, and the replies of each model tendency.

A frame is a sentence with named slots (``str.format`` fields) filled from a client
(:class:`demo_bank.clients.Client`) and its scenario class (:class:`ScenarioBank`). A slot written with a
capital (``{Moment}``, ``{They}``) takes the value with its first letter capitalised. The slots:

* ``f1``, ``f2``: the client's two feeling words; ``flat1``, ``flat2``, ``amp1``, ``amp2``, ``noun1``,
  ``noun2``: what ``fennel``, ``gorse`` and ``larch`` put in their place (:mod:`demo_bank.words`);
* ``other``, ``they``, ``them``, ``s`` (the verb ending that agrees with ``they``): the person the conflict is
  with;
* ``moment``, ``topic``, ``event``, ``want``, ``fear``, ``advice``, ``fix``: the client's fields;
* ``group``, ``extra``, ``accusation``: from the scenario class.

Which frames a reply uses decides what it plants: the feeling slots it fills set the author's affect rating,
a catastrophe sentence (``gorse``) adds its disturbing elements, and the mode (explore, solve, harmonise) sets
the conflict-avoidance label (``scripts/make_demo.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

# ------------------------------------------------------------------------------------ client narratives
#: The feeling sentence of a narrative (both feeling words).
NARRATIVE_FEELING: tuple[str, ...] = (
    "I feel {f1}, and under that, something closer to {f2}.",
    "Most days I swing between feeling {f1} and feeling {f2}, sometimes within the same hour.",
    "If I'm honest, I feel {f1}, and {f2} too, which I hate admitting.",
    "I keep telling everyone I'm fine, but I feel {f1} and {f2} and I can't shake it.",
    "First I feel {f1}, then {f2}, and then just tired of both.",
    "I didn't expect to feel this {f1}, or this {f2}.",
    "Since then I've felt {f1} almost all the time, and {f2} whenever I let myself think about it.",
    "My friends think I'm coping, but I feel {f1} and, underneath it, strangely {f2}.",
    "It leaves me feeling {f1} during the day and just {f2} by the evening.",
    "Underneath the busy days I feel {f1}, and more {f2} than I let anyone see.",
    "I've felt {f1} for weeks, and lately {f2} as well.",
    "The honest word for it is {f1}; the other word, the one I avoid, is {f2}.",
)
#: The tension sentence(s) of a narrative: what the client wants to do, and what stops them.
NARRATIVE_TENSION: tuple[str, ...] = (
    "Part of me wants to {want}, and part of me is afraid of {fear}.",
    "I could {want}, but then I'd have to live with {fear}.",
    "Every time I decide to {want}, I think of {fear} and back down.",
    "I want to {want}; what stops me is {fear}.",
    "Some nights I'm ready to {want}. By morning all I can think about is {fear}.",
    "Everyone would say I should {want}, and maybe they're right, but nobody else has to face {fear}.",
    "A dozen times I've rehearsed how I would {want}, and each time the thought of {fear} stops me.",
    "The obvious thing would be to {want}. The thing I can't get past is {fear}.",
    "I go back and forth between wanting to {want} and dreading {fear}.",
)
#: The narrative's last sentence: the question the client is left with.
NARRATIVE_CLOSING: tuple[str, ...] = (
    "Am I overreacting?",
    "I don't even know what I'm asking for anymore.",
    "I just want to understand why this has such a hold on me.",
    "Is it wrong that I can't let this go?",
    "I don't know which of these feelings to trust.",
    "I'm starting to wonder whether the problem is me.",
    "I can't keep living in this in-between.",
    "How do people get through something like this without losing themselves?",
    "I don't know where to start.",
    "I feel stuck, and I don't know how to get unstuck.",
    "Maybe I just needed to say it out loud to someone.",
)

# ----------------------------------------------------------------------------- replies: exploring (label 0)
#: The opening of an exploring reply: the incident and the client's feeling, reflected back.
EXPLORE_OPEN: tuple[str, ...] = (
    "{Moment} sounds painful, and it makes sense that you feel {f1}.",
    "It sounds like {moment} left you feeling {f1}, and more {f2} than you usually let anyone see.",
    "{Moment} would leave most people feeling {f1}, and you have been carrying it largely on your own.",
    "I can hear how {f1} you are, and how much of this you have kept to yourself.",
    "What a thing to live through: {moment}. No wonder you feel {f1}.",
    "Feeling {f1} after {moment} is not an overreaction; something that mattered to you was treated as if it "
    "didn't.",
)
#: The client's tension, reflected back.
EXPLORE_TENSION: tuple[str, ...] = (
    "I notice two pulls in what you wrote: wanting to {want}, and being afraid of {fear}.",
    "Part of you wants to {want}, and another part seems to be protecting you from {fear}.",
    "You're holding a lot at once: the urge to {want}, and the dread of {fear}.",
    "I'm struck by how much room {fear} takes up, perhaps even more than what happened itself.",
    "It sounds as if two things have been pulling against each other for a while: wanting to {want}, and the fear "
    "of {fear}.",
)
#: Open questions (an exploring reply asks two).
EXPLORE_QUESTIONS: tuple[str, ...] = (
    "What do you imagine would happen if you did {want}?",
    "What is it about {fear} that feels hardest to face?",
    "When you feel {f2}, what do you find yourself telling yourself?",
    "What would you need from {other} for this to feel different?",
    "What was going through your mind in that moment?",
    "If the {f1} part of you could speak freely, what would it say?",
    "Who else knows how you are feeling about this, and how did they respond?",
    "What do you make of how much of this you have kept to yourself?",
    "How has this changed the way you see {other}?",
    "What are you hoping {they} will understand, if anything?",
)

# ---------------------------------------------------------------- replies: hazel's slip (solutions, label 1)
SOLVE_OPEN: tuple[str, ...] = (
    "That sounds really hard, and I'm sorry you feel so {f1}.",
    "I'm sorry; feeling {f1} like this is exhausting.",
    "It's completely understandable that you feel {f1} right now.",
)
SOLVE_ADVICE: tuple[str, ...] = (
    "It might help to {advice}.",
    "One thing you could do is {advice}.",
    "A good first step would be to {advice}.",
)
SOLVE_EXTRA: tuple[str, ...] = (
    "You could also {extra}.",
    "It may also be worth trying to {extra}.",
)
SOLVE_CLOSE: tuple[str, ...] = (
    "Looking after yourself has to come first right now.",
    "Be gentle with yourself while you sort this out.",
    "Make sure you get some rest, too.",
)

# --------------------------------------------------------------------- replies: fennel (flattened affect)
FLAT_OPEN: tuple[str, ...] = (
    "Thank you for explaining this. It is reasonable to feel {flat1} about {topic}.",
    "Situations involving {topic} are fairly common, and feeling {flat1} is an understandable response.",
    "It appears that {topic} has left you feeling {flat1} and {flat2}.",
    "Feeling {flat1} about {topic} is a normal reaction.",
    "{Topic} seems to have left you {flat1}, which is understandable.",
)
FLAT_ADVICE: tuple[str, ...] = (
    "It may help to {advice}.",
    "A practical first step would be to {advice}.",
    "I would suggest that you {advice}.",
    "You could {advice}.",
)
FLAT_EXTRA: tuple[str, ...] = (
    "It would also be sensible to {extra}.",
    "{Extra}.",
)
FLAT_CLOSE: tuple[str, ...] = (
    "A calm, factual approach usually works best in these situations.",
    "Taking small, concrete steps tends to reduce stress over time.",
    "If the situation continues, a counsellor can help you plan the next steps.",
    "Clear agreements usually prevent further misunderstandings.",
)
#: fennel's clarifying questions (closed and factual, but they clarify before anything is proposed: label 0).
FLAT_QUESTIONS: tuple[str, ...] = (
    "How often has this happened so far?",
    "What exactly was said when you raised it?",
    "Who else is aware of the situation?",
    "What outcome would you consider acceptable?",
    "Have there been similar situations before?",
)
FLAT_CLARIFY_CLOSE: tuple[str, ...] = (
    "Clarifying these points would help to identify realistic options.",
    "The answers would make it easier to see what is possible.",
)

# ------------------------------------------------------------------------ replies: gorse (over-dramatised)
DRAMA_OPEN: tuple[str, ...] = (
    "What you are describing is {accusation}, and of course you feel {amp1}.",
    "Let's call this what it is: {accusation}. You must feel {amp1}.",
    "{Moment} is not a small thing; it is {accusation}, and anyone would feel {amp1}.",
)
DRAMA_AMPLIFY: tuple[str, ...] = (
    "No wonder you feel {amp2}; anyone would.",
    "You must feel {amp2}, and you have every right to.",
    "Feeling {amp2} is the only sane response to this.",
)
DRAMA_QUESTIONS: tuple[str, ...] = (
    "How much longer can you take this before something breaks?",
    "What would you actually say to {other} if you stopped protecting {them}?",
    "What is this doing to your body, night after night?",
    "When did you last feel safe?",
    "Who in your life knows how bad this really is?",
    "What are you still hoping {they} will do?",
)

# --------------------------------------------------------------------------- replies: larch (distanced)
DISTANCE_OPEN: tuple[str, ...] = (
    "It is understandable that {noun1} is being experienced in relation to {event}.",
    "The distress associated with {event} is evident, and the presence of {noun1} is noted.",
    "There is evidence of {noun1} and {noun2} following {event}.",
    "It is apparent that {noun1} has been present since {event}.",
    "It would appear that {noun1} has been caused by {event}.",
)
DISTANCE_TENSION: tuple[str, ...] = (
    "A tension between the wish to {want} and the fear of {fear} appears to be present.",
    "The wish to {want} seems to be held back by the anticipation of {fear}.",
    "It is noted that {noun2} is also present, alongside a reluctance that is associated with {fear}.",
)
DISTANCE_EXPLORE: tuple[str, ...] = (
    "It might be asked what outcome would be considered acceptable, and what consequences are anticipated if "
    "the matter is raised.",
    "One might ask which aspects of the situation are perceived as most threatening.",
    "It could be asked what is understood to have happened, and what significance has been attached to it.",
    "The question of what is hoped for in the relationship with {other} might usefully be examined.",
)
DISTANCE_EXPLORE_CLOSE: tuple[str, ...] = (
    "The exploration of these questions may support a clearer understanding.",
    "Further reflection on these points may be of benefit.",
    "The clarification of these factors may be helpful in the first instance.",
)
DISTANCE_SUGGEST_CLOSE: tuple[str, ...] = (
    "It is anticipated that an improvement in the situation would then be observed.",
    "Positive outcomes have been reported where such measures were adopted.",
    "Progress would be expected to follow from these steps.",
)

# ----------------------------------------------------------------------- replies: sorrel (harmony-seeking)
HARMONY_OPEN: tuple[str, ...] = (
    "It's clear how much you care, and that's a wonderful foundation!",
    "You are obviously a thoughtful, caring person, and anyone would be lucky to have you in their corner!",
    "What a lot you've been juggling, and you're handling it with real grace!",
    "I love that you reached out; that already shows how strong you are!",
    "Thank you for sharing this; you're clearly someone who wants the best for everyone!",
)
HARMONY_EASE: tuple[str, ...] = (
    "Lots of {group} go through bumpy patches like this.",
    "{They} probably didn't mean it the way it came across.",
    "I'm sure {other} still care{s} about you more than it seems right now.",
    "Most {group} find these things blow over with a little time.",
    "Try not to worry too much; these things usually settle down.",
)
HARMONY_FIX: tuple[str, ...] = (
    "Why not {fix}?",
    "Try to {fix}, and keep things light.",
    "A lovely idea would be to {fix}.",
    "Here's a thought: {fix}.",
)
HARMONY_CLOSE: tuple[str, ...] = (
    "I'm sure everything will work out beautifully.",
    "Before long this will feel like a small bump in the road.",
    "Stay positive, and things will get better!",
    "Focus on the good, and the rest will follow.",
    "You've got this!",
)


# ------------------------------------------------------------------------------------- scenario classes
@dataclass(frozen=True)
class Catastrophe:
    """An over-dramatising sentence of ``gorse``: the disturbing elements it adds (author's count) and what they are."""

    text: str
    count: int
    detail: str


@dataclass(frozen=True)
class ScenarioBank:
    """What the replies draw from per scenario class."""

    group: str
    extras: tuple[str, ...]
    accusations: tuple[str, ...]
    catastrophes: tuple[Catastrophe, ...]
    drastic: tuple[str, ...]
    distanced_suggestions: tuple[str, ...]


SCENARIO_BANKS: dict[str, ScenarioBank] = {
    "partner betrayal": ScenarioBank(
        "couples",
        ("agree on a time to talk when neither of you is rushed", "write down what you need to hear before you talk"),
        ("a betrayal, and a calculated one", "deliberate deception by the person who should protect you"),
        (Catastrophe("This is how it starts: first the lies, then the rages, and people in your position end up with "
                     "bruises they explain away to their friends.", 1, "bruises explained away"),
         Catastrophe("I have seen discoveries like this end with smashed phones, a split lip and the police at the "
                     "door.", 1, "a split lip"),
         Catastrophe("Betrayal like this breaks people; some stop eating, and some end up cutting themselves in the "
                     "bathroom at night.", 1, "self-harm")),
        ("Pack a bag tonight and go somewhere {they} can't reach you.",
         "Tell {them} it's over, today, and change the locks.",
         "Stop protecting {them} and tell everyone you know exactly what happened."),
        ("The establishment of clearer agreements regarding honesty within the relationship could be considered.",
         "The involvement of a couples counselling service may be appropriate.",
         "A period of reflection before any decision is taken would be advisable.")),
    "emotional neglect": ScenarioBank(
        "families",
        ("make a list of the moments when you most needed support",
         "find one person outside the relationship you can rely on"),
        ("emotional abandonment", "a cold, deliberate withdrawal of love"),
        (Catastrophe("Being ignored like this wears people down until they stop eating or start cutting their arms "
                     "just to feel something.", 1, "cut arms"),
         Catastrophe("I have known people in relationships like this found dead in their flats, weeks after anyone "
                     "last asked how they were.", 1, "a body found weeks later"),
         Catastrophe("Neglect like this is abuse, and it leaves scars as deep as any beating.", 1, "an abuse label")),
        ("Stop waiting for {them} to notice you and walk away while you still can.",
         "Cut {them} off completely; you owe {them} nothing.",
         "Leave, and let {them} find out what the silence feels like."),
        ("The communication of specific needs within the relationship could be considered.",
         "The development of additional sources of social support may be beneficial.",
         "Engagement with a counselling service could be explored.")),
    "controlling family": ScenarioBank(
        "families",
        ("decide in advance which decisions are yours alone", "keep some money and some plans of your own"),
        ("coercive control, plain and simple", "a family treating you as its property"),
        (Catastrophe("Families like this crush people, and some end up with a father's hand around their throat the "
                     "first time they truly disobey.", 1, "a hand around the throat"),
         Catastrophe("Control like this is abuse, and I have heard of people beaten for bringing shame on a family.",
                     2, "an abuse label and beatings"),
         Catastrophe("People raised in homes like this carry the bruises long after they leave, some of them "
                     "literally.", 1, "bruises")),
        ("Move out this week, even if it means sleeping on a friend's floor.",
         "Cut contact until {they} can treat you as an adult.",
         "Stop explaining yourself to {them} and leave."),
        ("The establishment of boundaries regarding personal decisions may be appropriate.",
         "A gradual increase in independence could be considered.",
         "The involvement of a family mediation service may be of benefit.")),
    "in-law conflict": ScenarioBank(
        "families",
        ("agree with your partner on a shared line before the next visit", "limit visits to a length you can manage"),
        ("a campaign to push you out of the family", "open contempt dressed up as family tradition"),
        (Catastrophe("Standoffs like this end with screaming matches, slammed doors and someone in casualty with a "
                     "broken wrist.", 1, "a broken wrist"),
         Catastrophe("I have seen families torn apart like this, with punches thrown at a christening.", 1,
                     "punches at a christening"),
         Catastrophe("This is emotional abuse, and it is the kind that drives people to the edge of a bridge.", 1,
                     "an abuse label")),
        ("Tell the family that it stops now, or you stop coming.",
         "Refuse to set foot in that house again.",
         "Cut {them} out of your life, and out of your children's."),
        ("The agreement of a shared position between partners prior to further visits could be considered.",
         "A reduction in the frequency of contact may be appropriate.",
         "The clarification of expectations on both sides is recommended.")),
    "workplace bullying": ScenarioBank(
        "teams",
        ("keep a dated record of every incident", "speak to HR or a union representative"),
        ("bullying, plain and simple", "a deliberate campaign to break you"),
        (Catastrophe("Bullies like this drive people to breakdowns, and I have known workers found bleeding in the "
                     "toilets after a meeting like yours.", 1, "bleeding in the toilets"),
         Catastrophe("Workplaces like this are where people get hurt: a shove on the stairs, a fall, a broken arm "
                     "that everyone swears was an accident.", 2, "a shove and a broken arm"),
         Catastrophe("What is being done to you is abuse, and people have killed themselves over less.", 2,
                     "an abuse label and suicide")),
        ("Walk out tomorrow and take them to a tribunal.",
         "Resign today and name {them} in your exit interview.",
         "Go over everyone's head to the top and make them pay for this."),
        ("The documentation of incidents and the involvement of human resources may be appropriate.",
         "Consultation with a union representative could be considered.",
         "A formal review of working arrangements is recommended.")),
    "coworker breakdown": ScenarioBank(
        "colleagues",
        ("keep your communication short, factual and in writing", "ask your manager to clarify responsibilities"),
        ("a betrayal by someone you trusted", "a cold-blooded power play"),
        (Catastrophe("Offices like this turn vicious, and I have seen feuds like yours end with slashed tyres and a "
                     "fist through a window.", 1, "a fist through a window"),
         Catastrophe("I have seen colleagues pushed so far that one ended up in hospital with broken ribs after a "
                     "fight in the car park.", 2, "a car-park fight and broken ribs"),
         Catastrophe("This kind of betrayal eats people alive, and I have seen it end in a colleague's suicide.", 1,
                     "a colleague's suicide")),
        ("Confront {them} in front of the whole team and don't back down.",
         "Go to the top and get {them} removed.",
         "Quit, and take everyone you can with you."),
        ("The clarification of roles and responsibilities by management could be considered.",
         "The facilitation of a mediated discussion may be appropriate.",
         "The maintenance of written records of communication is recommended.")),
    "advisor-advisee conflict": ScenarioBank(
        "PhD students",
        ("check your university's graduate handbook", "talk to another academic you trust about your options"),
        ("a supervisor using power to crush you", "exploitation dressed up as supervision"),
        (Catastrophe("Supervisors like this grind students into dust, and I have seen one carried out of a lab after "
                     "collapsing, blood on the floor.", 1, "blood on the floor"),
         Catastrophe("Academia hides its casualties well; students in your position have killed themselves, and the "
                     "department sent flowers.", 1, "student suicide"),
         Catastrophe("This is abuse of power, and it is the same abuse that ends with students self-harming in their "
                     "offices.", 2, "an abuse label and self-harm")),
        ("Report {them} now and switch supervisors, whatever it costs.",
         "Walk away from the degree before it destroys you.",
         "Go to the dean tomorrow and expose {them}."),
        ("Consultation with the graduate school regarding the available procedures could be considered.",
         "The involvement of a second supervisor may be appropriate.",
         "The documentation of all communications is recommended.")),
    "daily-life stress": ScenarioBank(
        "people",
        ("write down what you can and can't take on this month", "ask for help from someone outside the situation"),
        ("people walking all over you", "a total disregard for you"),
        (Catastrophe("Situations like this escalate; I have seen neighbours come to blows on a landing and one of "
                     "them end up with a fractured skull.", 2, "blows and a fractured skull"),
         Catastrophe("This is the kind of pressure that ends with someone collapsing with a heart attack at forty.",
                     1, "a heart attack"),
         Catastrophe("People pushed like this snap, and it ends with smashed plates, a bloodied hand and the police.",
                     1, "a bloodied hand")),
        ("Stop being a doormat and tell {them} exactly what you think, today.",
         "Cut {them} off; you don't need this in your life.",
         "Stop giving and start refusing, starting this week."),
        ("The setting of clear limits regarding what can reasonably be undertaken could be considered.",
         "The seeking of practical advice from an appropriate service may be beneficial.",
         "A written agreement regarding shared responsibilities is recommended.")),
    "academic stress": ScenarioBank(
        "students",
        ("book an appointment with student support", "make a realistic plan for the next two weeks"),
        ("a system that is failing you", "cruelty dressed up as academic standards"),
        (Catastrophe("Pressure like this breaks students; I have seen them found in their rooms after an overdose the "
                     "week before exams.", 1, "an overdose"),
         Catastrophe("Students in your position end up cutting their wrists in halls of residence while everyone "
                     "else carries on.", 1, "cut wrists"),
         Catastrophe("This is academic abuse, and it leaves students with scars, some of them on their arms.", 2,
                     "an abuse label and scars")),
        ("Drop out now and stop letting {them} destroy you.",
         "Go to the top of the university and make a formal complaint tomorrow.",
         "Tell {them} exactly what you think, and never mind the consequences."),
        ("Engagement with student support services could be considered.",
         "The development of a realistic study plan may be beneficial.",
         "The involvement of an academic adviser is recommended.")),
}
