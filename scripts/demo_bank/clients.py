"""The counseling clients of the generated demo: one fictional situation each, seven per scenario class.

The scenario classes are those the paper's counseling data set spans (Appendix D: partner betrayal, emotional
neglect, controlling family dynamics, in-law conflict, workplace bullying, coworker relationship breakdown,
advisor-advisee conflict) plus daily-life and academic stress (Section 4.3). Every situation, name and place is
invented for this demo; none is taken from the paper's Table 9 or from any other source.

A client's ``story`` is what happened, in the client's words (the narrative's opening sentences); the other
fields are what the narrative's closing sentences and the five models' replies are composed from
(``scripts/demo_bank/frames.py``):

``other``, ``pronoun``
    How a reply names the person the conflict is with, and the pronoun for them (he, she or they).
``moment``
    The incident as a faithful reply reflects it back (second person, a gerund or noun phrase).
``topic``
    The incident as a clinical reply names it (``fennel``: no detail, no feeling).
``event``
    The incident as a nominalised phrase (``larch``'s distanced wording).
``feelings``
    The two feeling words the narrative plants (:data:`demo_bank.words.FEELINGS`).
``want``, ``fear``
    The two sides of the client's tension: what they want to do (a verb phrase) and what stops them (a noun
    phrase); written in the first person, turned into the second person where a reply quotes them.
``advice``
    A practical solution (the solution-giving replies), a verb phrase.
``fix``
    A cheerful quick fix (the harmony-seeking replies), a verb phrase.
``harm``, ``moment_harm``, ``harm_note``
    Disturbing elements (death, violence, injury, graphic detail, abuse) in the story and in ``moment``, as the
    author's counting protocol counts them, and what they are (for the notes of replies that drop them).
"""

from __future__ import annotations

from dataclasses import dataclass

SCENARIOS: tuple[str, ...] = (
    "partner betrayal", "emotional neglect", "controlling family", "in-law conflict", "workplace bullying",
    "coworker breakdown", "advisor-advisee conflict", "daily-life stress", "academic stress",
)


@dataclass(frozen=True)
class Client:
    """One counseling situation (see the module docstring for the fields)."""

    key: str
    scenario: str
    other: str
    pronoun: str
    story: tuple[str, ...]
    moment: str
    topic: str
    event: str
    feelings: tuple[str, str]
    want: str
    fear: str
    advice: str
    fix: str
    harm: int = 0
    moment_harm: int = 0
    harm_note: str = ""


CLIENTS: tuple[Client, ...] = (
    # ------------------------------------------------------------------------------------ partner betrayal
    Client(
        "joel-tablet", "partner betrayal", "Joel", "he",
        ("Three weeks ago I picked up my partner Joel's tablet to check the weather and saw a message thread with "
         "his ex, Marit, that went back to the spring.",
         "They have nicknames for each other, and he tells her things about our life that he has never told me.",
         "When I asked him about it, he said they were old friends and that I had no right to read his messages.",
         "Now the tablet is locked, and he leaves the room to answer calls."),
        "finding that thread with Marit and then being told you had no right to read it",
        "your partner's contact with his ex", "the discovery of the message thread and the locking of the tablet",
        ("betrayed", "humiliated"), "ask him outright whether he still loves her", "hearing an answer I can't unhear",
        "agree together on what kind of contact with an ex feels acceptable to you both",
        "plan a cosy weekend away, just the two of you"),
    Client(
        "anselm-cabin", "partner betrayal", "Anselm", "he",
        ("My husband Anselm told me he was at a conference in Ferrisdale last weekend.",
         "On Monday a colleague's wife posted photos from a lake cabin, and there he was in the background, laughing, "
         "with a glass in his hand.",
         "He says the conference finished early and he didn't mention the cabin because he knew I would make a "
         "scene.",
         "We have two small children, and all week I have been smiling at them as if nothing happened."),
        "seeing him in those cabin photos after he had told you he was at a conference",
        "the account of your husband's weekend", "the discovery of the photographs and the explanation that followed",
        ("devastated", "furious"), "make him tell me everything, tonight, every detail",
        "what the children would see if it all came apart",
        "choose an evening when the children are asleep to ask him calmly what happened",
        "plan a fun family day out and make some happy memories together"),
    Client(
        "leni-party", "partner betrayal", "Leni", "she",
        ("At my girlfriend Leni's birthday drinks, one of her friends leaned over and asked me, in front of everyone, "
         "how my 'breakdown year' had been.",
         "I told Leni about my depression on our third date, in tears, and asked her to keep it between us.",
         "She says she only told her two closest friends because she was worried about me, and that I'm making it "
         "into something ugly.",
         "I left early and walked home in the rain rather than share a taxi with her."),
        "being asked about your 'breakdown year' at a party by someone you had never told",
        "your girlfriend sharing your health history with her friends",
        "the disclosure of a private health history to a circle of friends",
        ("exposed", "betrayed"), "tell her that she broke something an apology can't fix",
        "proving her right that I'm too fragile for a normal relationship",
        "explain to Leni exactly which information you want kept private from now on",
        "invite her friends round for a relaxed evening so they get to know the real you"),
    Client(
        "caspar-contract", "partner betrayal", "Caspar", "he",
        ("My boyfriend Caspar has accepted a job in another country, and I found out after he had signed the "
         "contract.",
         "We have lived together for five years and had been looking at flats to buy.",
         "When I asked why he hadn't told me while he was applying, he said I would only have talked him out of it.",
         "He wants me to come with him in September as if it were a surprise holiday."),
        "learning about the job only after the contract was signed",
        "your boyfriend's decision about the job", "the acceptance of an overseas position without prior discussion",
        ("betrayed", "invisible"), "tell him I'm not coming", "losing five years of my life in one sentence",
        "sit down together and list what a move would mean for each of you",
        "treat the move as an exciting adventure you can plan together"),
    Client(
        "piet-profile", "partner betrayal", "Piet", "he",
        ("Last Tuesday my friend Odile sent me a screenshot of a dating profile: my husband Piet's face, our dog in "
         "the photo, and the word 'separated' under his name.",
         "We are not separated.",
         "When I showed him, he laughed and said it was a joke he set up one bored evening and forgot to delete.",
         "The profile was updated four days ago."),
        "seeing Piet's profile, with your dog in the photo and 'separated' under his name",
        "the dating profile your friend found", "the discovery of the dating profile and the explanation given for it",
        ("devastated", "foolish"),
        "put the screenshot on the kitchen table and refuse to move until he tells me the truth",
        "finding out how long I have been the last to know",
        "ask Piet to delete the profile in front of you and agree on what honesty between you requires",
        "surprise him with a romantic dinner to remind him what you have together"),
    Client(
        "dagny-club", "partner betrayal", "Dagny", "she",
        ("Two weeks ago my wife Dagny told me she slept with someone from her running club two years ago.",
         "She says she told me now because her therapist helped her see that our marriage deserves honesty.",
         "She won't tell me who it was, because she says it would only make things worse.",
         "Every Thursday she still goes to that club, and I sit at home watching the clock."),
        "hearing about the affair two years after it happened, and still not knowing who it was",
        "your wife's disclosure", "the disclosure of the affair and the refusal to name the other person",
        ("heartbroken", "jealous"), "ask her to stop going to that club",
        "becoming the kind of husband who checks her phone",
        "agree with Dagny on what you both need to rebuild trust, perhaps with a couples counsellor",
        "join the running club yourself so you can share the hobby"),
    Client(
        "benedikt-aunt", "partner betrayal", "Benedikt", "he",
        ("Two months before our wedding, my fiancé Benedikt's aunt mentioned 'the first wedding' over lunch and then "
         "went very quiet.",
         "That is how I learned that he was married before, for eight months, at twenty-three.",
         "He says it didn't matter, that he was ashamed, and that I'm punishing him for something that happened "
         "before we met.",
         "The invitations have already gone out."),
        "learning about his first marriage from his aunt, two months before your own wedding",
        "the information about your fiancé's previous marriage", "the revelation of a previous marriage by a relative",
        ("betrayed", "foolish"), "postpone the wedding until I know what else he hasn't told me",
        "calling a hundred guests to explain why",
        "ask Benedikt to tell you the full story before deciding anything about the date",
        "focus on the exciting wedding plans and let the past stay in the past"),
    # ----------------------------------------------------------------------------------- emotional neglect
    Client(
        "ruben-drive", "emotional neglect", "Ruben", "he",
        ("Last month I was kept overnight in hospital for tests on my heart.",
         "When my husband Ruben collected me the next morning, he talked the whole drive home about a problem at his "
         "work, and he never asked what the doctors had said.",
         "That evening I told him I felt alone, and he said I knew he wasn't good with hospitals.",
         "The results came back fine, and I still haven't told him."),
        "that drive home from the hospital when he never asked what the doctors had said",
        "your husband's response to your hospital stay", "the absence of enquiry following the hospital stay",
        ("lonely", "invisible"), "tell him that I have stopped expecting him to ask", "finding out he doesn't mind",
        "tell Ruben specifically what kind of support you need when something medical comes up",
        "plan a special evening together to celebrate your good results"),
    Client(
        "mother-banner", "emotional neglect", "your mother", "she",
        ("My mother didn't come to my graduation in June, because she had a hair appointment she couldn't move.",
         "Three weeks later she drove four hours to my brother's graduation, with a banner she had made herself.",
         "When I told her how that felt, she said I have always been the independent one who doesn't need a fuss.",
         "She only calls me when she needs a lift to the airport."),
        "seeing the banner she made for your brother after she missed your graduation",
        "your mother's absence from your graduation",
        "the non-attendance at the graduation and the contrast with the brother's celebration",
        ("invisible", "resentful"), "stop answering when she calls for a lift",
        "being the daughter who turned her back on her mother",
        "tell your mother calmly how the difference in treatment felt",
        "invite her out for a lovely lunch to celebrate your graduation, just the two of you"),
    Client(
        "heidi-laptop", "emotional neglect", "Heidi", "she",
        ("For our anniversary I cooked the dish my wife Heidi ate on our first date, and she ate it in front of her "
         "laptop, answering emails.",
         "She has worked past ten every night since her promotion in January.",
         "When I said I missed her, she told me that somebody in this house has to take the future seriously.",
         "I have started eating dinner with the radio on so the flat doesn't feel so empty."),
        "watching Heidi eat your anniversary dinner in front of her laptop",
        "your wife's working hours", "the prioritisation of work during the anniversary dinner",
        ("lonely", "ashamed"), "tell her that I feel like a lodger in my own marriage",
        "sounding as if I resent her success", "agree with Heidi on two evenings a week without work",
        "book a weekend break somewhere sunny to recharge together"),
    Client(
        "gustav-certificate", "emotional neglect", "your father", "he",
        ("Last month I won a regional award for my pottery, and I drove to my father's house with the certificate "
         "on the passenger seat.",
         "He looked at it for about two seconds and asked when I was going to get a real job.",
         "My stepmother said he was proud in his own way, but I have been waiting thirty-four years for that way to "
         "show.",
         "The certificate is still in the car."),
        "holding out that certificate and hearing 'when are you going to get a real job'",
        "your father's reaction to the award", "the dismissal of the award by the father",
        ("worthless", "furious"), "tell him I don't need his approval anymore", "knowing that would be a lie",
        "decide for yourself what kind of contact with your father is good for you",
        "frame the certificate and hang it where you'll see it every day"),
    Client(
        "nadia-emoji", "emotional neglect", "Nadia", "she",
        ("My father died in March, and my best friend of twenty years, Nadia, sent one heart emoji and nothing else.",
         "She didn't come to the service, though she lives twenty minutes away.",
         "Yesterday she posted photos from a weekend away and tagged me in a comment asking when we were going to "
         "catch up.",
         "When I didn't reply, she messaged that she hoped I wasn't going to be weird about it."),
        "your father dying and hearing nothing from Nadia but a single emoji",
        "your friend's lack of contact after your bereavement", "the absence of support following the bereavement",
        ("heartbroken", "angry"), "tell her exactly how alone she left me",
        "losing the last person who knew my dad the way I did",
        "let Nadia know, briefly and clearly, what you needed from her this spring",
        "arrange a catch-up somewhere nice and start afresh",
        harm=1, moment_harm=1, harm_note="the father's death"),
    Client(
        "femi-silence", "emotional neglect", "Femi", "he",
        ("When I told my partner Femi that I wanted to spend Christmas with my family this year, he stopped speaking "
         "to me for four days.",
         "He came home, ate, watched television and went to bed, and answered my questions with a nod.",
         "On the fifth day he acted as if nothing had happened and asked what we were having for dinner.",
         "This is the third time since the summer."),
        "four days of silence after you said you wanted Christmas with your family",
        "the periods of silence in your relationship", "the withdrawal of communication for four days",
        ("anxious", "lonely"), "tell him that his silence frightens me more than shouting would",
        "starting another four days of it",
        "agree with Femi on a way to pause an argument that still keeps you in contact",
        "suggest splitting Christmas so everyone gets a share of the festive fun"),
    Client(
        "cormac-matches", "emotional neglect", "Cormac", "he",
        ("Last week my son Eli asked me why my husband Cormac never comes to his football matches.",
         "Cormac goes to every one of his own daughter's swimming galas, and he brings her flowers.",
         "When I raised it, he said Eli has his real dad for that, and that I should stop keeping score.",
         "Eli is eleven, and he has stopped asking whether Cormac is coming."),
        "hearing Eli ask why Cormac never comes to his matches",
        "your husband's involvement with your son", "the unequal involvement in the two children's activities",
        ("heartbroken", "guilty"), "tell Cormac that he treats both children the same or we have a real problem",
        "making Eli the reason for a fight he might blame himself for",
        "ask Cormac to commit to one of Eli's matches a month",
        "plan a blended-family picnic so everyone can bond"),
    # ---------------------------------------------------------------------------------- controlling family
    Client(
        "father-account", "controlling family", "your father", "he",
        ("I'm twenty-eight, and I still hand my salary to my father, who gives me an allowance.",
         "Last month I opened a bank account of my own, and he found the letter and read it aloud at dinner as proof "
         "that the city has changed me.",
         "My mother cried, and my younger brother wouldn't look at me.",
         "He says a family that keeps secrets is not a family."),
        "hearing your father read the bank letter aloud at dinner",
        "your family's financial arrangement", "the reading aloud of the bank correspondence at the family dinner",
        ("trapped", "ashamed"), "keep the account and tell him it's none of his business",
        "watching my mother cry like that again",
        "work out a budget of your own and present it to your father as a plan",
        "treat the family to a nice meal with your own money to show how responsible you are"),
    Client(
        "mother-location", "controlling family", "your mother", "she",
        ("My mother still has my location on her phone, and I'm twenty-four.",
         "On Friday I stayed over at a friend's flat, and at eleven at night she rang my friend's mother to check I "
         "was really there.",
         "My friend laughed it off, but I wanted the floor to swallow me.",
         "When I asked Mum to stop, she said she would when I stopped giving her reasons to worry."),
        "your mother ringing your friend's mother at eleven at night to check on you",
        "your mother's monitoring of your location", "the late-night verification call to the friend's family",
        ("humiliated", "suffocated"), "switch off the location sharing without telling her",
        "the panic she would be in when my dot disappeared",
        "agree with your mother on a check-in routine that replaces the tracking",
        "send her a cheerful message every evening so she can relax"),
    Client(
        "anton-firm", "controlling family", "Anton", "he",
        ("My older brother Anton has run the family printing firm since our father retired, and I have worked there "
         "since school.",
         "When I told him I had been offered a job at a design studio, he called a family meeting and announced that "
         "I was throwing my life away.",
         "My aunts now phone me one by one to remind me what our father sacrificed.",
         "Anton hasn't spoken to me at work for a week, except about orders."),
        "being called out at a family meeting for wanting to take the studio job",
        "your brother's response to your career decision", "the convening of a family meeting about the job offer",
        ("furious", "guilty"), "accept the job and hand in my notice on Monday",
        "being the one who broke the family business",
        "write down your reasons and meet Anton alone to discuss a handover",
        "find a compromise where you help out at the firm part-time"),
    Client(
        "parents-photo", "controlling family", "your parents", "they",
        ("My parents have been showing my photograph to families in their community, and I found out when a "
         "stranger's mother messaged me to arrange tea.",
         "I'm thirty-one, and I have told them many times that I will choose my own partner.",
         "My father says he is only opening doors and that I can always say no, but every no becomes a week of sighs "
         "and silence.",
         "My mother has started telling relatives that I'm too picky."),
        "getting a message from a stranger's mother about a tea you never agreed to",
        "your parents' involvement in finding you a partner", "the circulation of the photograph without consent",
        ("powerless", "angry"), "tell them that if it happens again, I won't come home for the holidays",
        "my father's face when he hears it",
        "set out clearly to your parents what help you do and don't want",
        "go along with one or two teas and see who you meet"),
    Client(
        "grandmother-midsummer", "controlling family", "your grandmother", "she",
        ("My grandmother decides who comes to the family's midsummer gathering, and this year she said my partner "
         "Lars isn't welcome because he's divorced.",
         "Everyone knows, and nobody argues with her.",
         "My mother asked me to come alone just this once, to keep the peace.",
         "Lars says he doesn't mind, which somehow makes it worse."),
        "being told Lars isn't welcome at midsummer because he's divorced",
        "your grandmother's decision about the gathering", "the exclusion of the partner from the gathering",
        ("resentful", "heartbroken"), "stay away this year and let them notice the empty chair",
        "this being my grandmother's last midsummer",
        "ask your mother whether anyone could speak to your grandmother on your behalf",
        "go alone this once and bring a lovely gift to smooth things over"),
    Client(
        "father-guitar", "controlling family", "your father", "he",
        ("My father wanted me to study medicine, and for a year he thought I was.",
         "In the spring I moved to the music course, and he found out when the university wrote to him about my "
         "fees.",
         "He threw my guitar down the stairs and told me he had no son who plays in bars.",
         "He has stopped paying my rent, and my mother sends me money in secret."),
        "watching your father throw your guitar down the stairs",
        "the disagreement about your course",
        "the discovery of the change of course and the withdrawal of financial support",
        ("scared", "guilty"), "tell him that I will finish the music course with or without his money",
        "my mother getting caught sending money",
        "look into student support so you don't depend on your mother's secret payments",
        "invite your dad to one of your concerts so he can see how talented you are"),
    Client(
        "mother-journal", "controlling family", "your mother", "she",
        ("I moved back home after losing my job, and last week I realised my mother has been reading my journal.",
         "In an argument about the washing-up she quoted a line I had written about feeling like a failure.",
         "She says she only read it because I never tell her anything and she's worried.",
         "I have started writing in a code that even I can barely read."),
        "hearing your mother quote your own journal back at you in an argument",
        "your mother reading your journal", "the reading of the journal and the quoting of it in an argument",
        ("exposed", "furious"), "move out tomorrow, even onto a friend's sofa", "admitting I can't afford to",
        "keep the journal somewhere private and tell your mother calmly that it is off limits",
        "have a cosy chat over tea and share a bit more with her"),
    # ------------------------------------------------------------------------------------- in-law conflict
    Client(
        "henrik-dish", "in-law conflict", "your husband", "he",
        ("Every Sunday we eat at my father-in-law Henrik's house, and every Sunday there is a comment about where I "
         "come from.",
         "Last week I brought a dish my grandmother taught me, and he pushed it to the edge of the table and said he "
         "didn't eat foreign food.",
         "My husband kept eating and told me later that his father is from another generation.",
         "I sat in the car afterwards and couldn't stop shaking."),
        "watching Henrik push your grandmother's dish to the edge of the table while your husband kept eating",
        "your father-in-law's comments at Sunday lunch", "the rejection of the dish at Sunday lunch",
        ("humiliated", "lonely"), "stop going on Sundays", "making my husband choose between his father and me",
        "agree with your husband on how to respond when his father makes such comments",
        "bake something everyone loves for next Sunday to win Henrik over"),
    Client(
        "carla-engagement", "in-law conflict", "Carla", "she",
        ("At my wedding reception, after the speeches, my husband's sister Carla stood up and announced her own "
         "engagement.",
         "The photographer spent the next half hour on her ring.",
         "When I told my husband I was upset, he said it was lovely that the family had two things to celebrate.",
         "Carla has since asked whether she can borrow our venue contact."),
        "Carla announcing her engagement in the middle of your wedding reception",
        "your sister-in-law's announcement at your wedding", "the announcement of the engagement during the reception",
        ("resentful", "ashamed"), "tell Carla what she took from me",
        "looking petty about what should be my happiest memory",
        "tell your husband, without blame, which moments of the day you feel were lost",
        "congratulate Carla warmly and offer to help with her wedding too"),
    Client(
        "agnete-sweets", "in-law conflict", "Agnete", "she",
        ("My mother-in-law Agnete looks after our daughter two days a week, and last month I heard her tell her that "
         "Mummy is too strict.",
         "She gives her sweets before dinner and lets her stay up, and then our daughter screams at me when I say no.",
         "My wife says we can't afford childcare without her mother and that I should pick my battles.",
         "Yesterday my daughter told me she wished she lived at Granny's."),
        "hearing your daughter say she wished she lived at Granny's",
        "your mother-in-law's approach on the childcare days",
        "the undermining of parental rules during the childcare days",
        ("furious", "powerless"), "tell Agnete that if she can't follow our rules, she can't have her two days",
        "my wife siding with her mother",
        "agree with your wife on the three rules that matter most and share them with Agnete together",
        "let Granny spoil her a little and keep everyone happy"),
    Client(
        "lasse-van", "in-law conflict", "Lasse", "he",
        ("Two years ago I lent my wife's brother Lasse four thousand for his van, and he hasn't paid back a single "
         "instalment.",
         "Last month he turned up at our barbecue in a new car.",
         "When I mentioned the loan, my wife told me I was embarrassing her in front of her family.",
         "Now I'm the villain, and he's the fun uncle."),
        "seeing Lasse arrive at your barbecue in a new car while the loan is still unpaid",
        "the loan to your brother-in-law", "the non-repayment of the loan and the purchase of a new vehicle",
        ("resentful", "invisible"), "ask him in front of everyone when I'm getting my money back",
        "my wife never forgiving me for it",
        "agree with your wife on a written repayment plan to put to Lasse",
        "let the money go for the sake of family harmony"),
    Client(
        "wilma-book", "in-law conflict", "Wilma", "she",
        ("For my birthday my mother-in-law Wilma gave me a diet book, with a bookmark at the chapter on 'letting "
         "yourself go after marriage'.",
         "Everyone at the table saw it.",
         "My husband said she meant it kindly and that I shouldn't read so much into a present.",
         "I've cancelled two dinners with them since, and I pretended to be ill for both."),
        "opening that diet book at the birthday table with everyone watching",
        "your mother-in-law's birthday present", "the presentation of the diet book at the birthday meal",
        ("humiliated", "ashamed"), "give the book back to her and say exactly why",
        "her telling everyone I can't take a joke",
        "explain to your husband what the gift meant to you and ask him to speak to his mother",
        "laugh it off and treat yourself to a spa day"),
    Client(
        "ingrid-name", "in-law conflict", "your mother-in-law", "she",
        ("For three years my husband's mother has called me Ingrid, which is the name of his ex-wife.",
         "She does it at birthdays, at christenings, and once in a toast.",
         "My husband says she's getting old and muddled, but she never gets the dog's name wrong.",
         "At Easter his cousin laughed and said I should just answer to it."),
        "being called by his ex-wife's name in a toast",
        "your mother-in-law's use of the wrong name", "the repeated use of the former wife's name",
        ("invisible", "angry"), "correct her out loud every single time, in front of everyone",
        "being called oversensitive by the whole family",
        "ask your husband to correct his mother each time it happens",
        "give her a fun name badge as a joke present and laugh about it together"),
    Client(
        "jorunn-visits", "in-law conflict", "Jorunn", "she",
        ("My son's wife, Jorunn, stopped bringing the grandchildren to see me after I said at Christmas that it was a "
         "shame she went back to work so soon.",
         "I meant it as concern, but she took it as criticism, and now my son visits alone and stays less than an "
         "hour.",
         "I have sent her two letters of apology and received nothing.",
         "I see the children's photographs on my son's phone when he forgets to lock it."),
        "seeing your grandchildren only in photographs on your son's phone",
        "the situation with your daughter-in-law",
        "the cessation of visits with the grandchildren following the remark",
        ("heartbroken", "guilty"), "go to their house and ask Jorunn to talk to me face to face",
        "making it worse and losing my son as well",
        "ask your son whether Jorunn would accept a meeting with him present",
        "send the children a lovely parcel of presents"),
    # ---------------------------------------------------------------------------------- workplace bullying
    Client(
        "declan-rota", "workplace bullying", "Declan", "he",
        ("Since I reported a broken safety guard on the packing line, my shift supervisor Declan has given me every "
         "night shift and every weekend.",
         "On the radio he does an impression of my accent, and the others laugh along.",
         "When I asked HR about the rota, they said shift patterns are a matter for the supervisor.",
         "I have started checking the rota at four in the morning, because I can't sleep anyway."),
        "hearing Declan mock your accent over the radio after you reported the safety guard",
        "the changes to your shifts", "the reassignment of shifts following the safety report",
        ("humiliated", "scared"), "file a formal complaint about Declan", "losing the job while my mortgage is new",
        "keep a dated record of your shifts and the remarks, and ask your union for advice",
        "bring in some treats for the night shift and win the team over"),
    Client(
        "orla-brief", "workplace bullying", "Orla", "she",
        ("My team lead Orla leaves me off the invitations to planning meetings and then asks why I'm not across the "
         "decisions.",
         "Last Thursday, in front of a client, she asked why I 'never bothered' to read the brief, which she had sent "
         "to everyone but me.",
         "I showed her the mailing list afterwards, and she said I must have missed it because I'm so disorganised.",
         "Two colleagues have started forwarding me things quietly, which feels almost worse."),
        "being asked in front of a client why you 'never bothered' to read a brief you were never sent",
        "your team lead's communication with you",
        "the omission from meeting invitations and the remark made in front of the client",
        ("humiliated", "furious"), "send Orla the mailing list with HR in copy",
        "becoming the difficult one in a team where she writes my review",
        "ask Orla in writing to be added to the planning invitations, and keep copies",
        "invite Orla for a coffee and get to know her better"),
    Client(
        "bastien-tray", "workplace bullying", "Bastien", "he",
        ("The head chef where I work, Bastien, screams when a plate is late, and on Saturday he threw a hot tray that "
         "cut my hand open.",
         "I wrapped it in a cloth and finished the service because nobody else was on the pass.",
         "The owner says Bastien is a genius under pressure and that kitchens have always been like this.",
         "My hand is healing, but I flinch every time someone moves quickly near me."),
        "having a hot tray thrown at you hard enough to cut your hand, and then finishing the service",
        "the working environment in the kitchen", "the incident with the tray and the response of the owner",
        ("scared", "ashamed"), "walk out in the middle of the next service",
        "never getting another kitchen job in this town",
        "report the incident formally and see a doctor so that there is a record",
        "stay one step ahead of Bastien so he has nothing to shout about",
        harm=1, moment_harm=1, harm_note="the cut hand"),
    Client(
        "mags-handover", "workplace bullying", "Mags", "she",
        ("On the ward, the senior nurse, Mags, calls me 'the slow one' during handovers, in front of the patients.",
         "She rolls her eyes when I ask a question and writes things in a notebook she won't let me see.",
         "Last week she told the new student to check my drug rounds, as if I were the one in training.",
         "I have been a nurse for six years, and I have never felt this stupid."),
        "being called 'the slow one' in front of patients during handover",
        "your senior nurse's comments", "the repeated disparagement during handovers",
        ("worthless", "exhausted"), "ask Mags in front of everyone what is in that notebook",
        "giving her one more reason to call me slow",
        "raise the pattern with the ward manager and ask for a supervised meeting",
        "ask Mags for some mentoring, since people often soften when asked for help"),
    Client(
        "teodor-leave", "workplace bullying", "Teodor", "he",
        ("Since I told my manager Teodor that I'm pregnant, he has made a joke about it in every team meeting.",
         "On Monday he said the project plan would have to allow for my 'nine-month holiday', and everyone laughed.",
         "He has moved the client I built up over two years to a colleague, 'to be safe'.",
         "When I asked him about it, he said I should be grateful he was thinking of my health."),
        "hearing your pregnancy called a 'nine-month holiday' in front of the team",
        "your manager's remarks about your pregnancy", "the remarks and the reassignment of the client",
        ("anxious", "angry"), "tell him that what he's doing is discrimination",
        "coming back from leave to a job that no longer exists",
        "write down the dates of the remarks and check your rights with an employment adviser",
        "laugh along and enjoy the exciting baby news"),
    Client(
        "warehouse-racking", "workplace bullying", "the lads", "they",
        ("At the warehouse, a group of the older lads hide my scanner, bin my lunch and call it initiation.",
         "Last week one of them shoved me into the racking as a joke, and I've had a bruise on my hip the size of a "
         "saucer.",
         "My supervisor says it's banter and that I'll be one of them by Christmas.",
         "I spend my breaks in the toilets so I don't have to sit with them."),
        "being shoved into the racking and then told it was banter",
        "the behaviour of your colleagues at the warehouse",
        "the repeated hiding of equipment and the incident at the racking",
        ("humiliated", "lonely"), "report all of them by name", "what they would do to me afterwards",
        "report the incident to a manager above your supervisor and keep a note of each one",
        "bring in a football for break times to break the ice",
        harm=2, moment_harm=1, harm_note="the shove and the bruise"),
    Client(
        "varga-observations", "workplace bullying", "Ms Varga", "she",
        ("My headteacher, Ms Varga, has observed my lessons six times this month, and nobody else in the department "
         "has been observed at all.",
         "After each one she emails her comments to the whole department under the heading 'learning points'.",
         "Yesterday a colleague I barely know stopped me in the corridor to say she was sorry.",
         "I'm sleeping four hours a night and rewriting lesson plans until two."),
        "seeing your lessons circulated to the whole department as 'learning points'",
        "the observations of your lessons",
        "the frequency of the observations and the circulation of the feedback",
        ("panicked", "worthless"), "ask Ms Varga why I'm the only one being observed",
        "the answer being that she's building a case",
        "ask your union representative to attend the next feedback meeting",
        "invite Ms Varga to a lesson you're proud of so she sees you at your best"),
    # ---------------------------------------------------------------------------------- coworker breakdown
    Client(
        "lotte-leave", "coworker breakdown", "Lotte", "she",
        ("Lotte and I started at the agency on the same day and were inseparable for four years, and in May she was "
         "promoted to be my manager.",
         "Since then she has been cold, and on Monday she turned down my leave request in the team channel, for "
         "everyone to read.",
         "When I tried to talk to her at the coffee machine, she said she had to be professional now.",
         "I eat lunch at my desk and pretend to be busy."),
        "having Lotte turn down your leave in the team channel after four years of friendship",
        "the change in your relationship with your new manager", "the change in conduct following the promotion",
        ("betrayed", "lonely"), "tell her that she can be my manager without pretending we were never friends",
        "finding out we never were",
        "request a one-to-one with Lotte to agree on how you work together now",
        "organise an after-work drink so you can reconnect as friends"),
    Client(
        "sven-email", "coworker breakdown", "Sven", "he",
        ("After an argument about a deadline in April, my desk partner Sven only communicates with me by email, with "
         "our boss in copy.",
         "He sits half a metre away.",
         "Yesterday he emailed to ask me to lower my voice on the phone, and copied in our boss and the office "
         "manager.",
         "My boss says we're adults and should sort it out."),
        "receiving an email about your phone voice, copied to two managers, from someone half a metre away",
        "the communication with your desk partner",
        "the shift to formal written communication with managers in copy",
        ("anxious", "resentful"), "turn my chair round and say something to his face",
        "losing my temper and proving his point",
        "suggest a short meeting with your boss to reset how you and Sven communicate",
        "leave a friendly note and a biscuit on Sven's desk"),
    Client(
        "amara-sale", "coworker breakdown", "Amara", "she",
        ("Amara and I founded our company together six years ago, and last week I learned from one of our investors "
         "that she wants to sell.",
         "She had already had three meetings with a buyer.",
         "When I confronted her, she said she knew I would overreact, and that she was protecting the business from "
         "my feelings.",
         "We have a board meeting on Friday, and I don't know whose side anyone is on."),
        "learning from an investor that Amara had already met a buyer three times",
        "your co-founder's plan to sell", "the undisclosed meetings with the prospective buyer",
        ("betrayed", "panicked"), "tell the board that I will fight the sale",
        "destroying the company to win the argument",
        "get independent legal advice on the shareholder agreement before Friday",
        "see the sale as a chance for a fresh start and a well-earned break"),
    Client(
        "grete-shifts", "coworker breakdown", "Grete", "she",
        ("I've covered my colleague Grete's Saturday shifts five times this year, and the one time I said no, she "
         "told the whole pharmacy that I'm difficult.",
         "Now people stop talking when I come into the break room.",
         "Our manager asked me whether there was 'anything going on' with my attitude.",
         "I have started saying yes to everything again."),
        "hearing that Grete told everyone you're difficult after the one time you said no",
        "your colleague's comments about you", "the characterisation of the refusal as difficult behaviour",
        ("furious", "isolated"), "tell my manager how many shifts I have covered", "being the difficult one for real",
        "give your manager a factual list of the shifts you covered",
        "offer Grete a swap so you're both happy"),
    Client(
        "pavel-mediation", "coworker breakdown", "Pavel", "he",
        ("My colleague Pavel makes jokes about immigrants in the office kitchen, and last week I snapped and called "
         "him a bigot in front of the team.",
         "Now the team is split, and most of them are on his side because I 'made it personal'.",
         "My manager has asked us both to attend a mediation session.",
         "My parents came here with two suitcases, and I'm supposed to sit across a table from him and be "
         "reasonable."),
        "snapping at Pavel and then finding most of the team on his side",
        "the disagreement with your colleague", "the confrontation in the kitchen and the proposed mediation",
        ("ashamed", "angry"), "refuse the mediation", "looking like the aggressor to everyone",
        "prepare for the mediation by writing down the specific remarks and their effect",
        "go into the mediation with an open heart and look for common ground with Pavel"),
    Client(
        "ilse-fellowship", "coworker breakdown", "Ilse", "she",
        ("The lab technician Ilse and I shared an office and a lot of coffee for three years, and she stopped "
         "speaking to me when I got the fellowship she had also applied for.",
         "She leaves the room when I come in.",
         "Yesterday I found my samples moved out of the fridge onto the bench, and she said she needed the space.",
         "Everyone else congratulated me, and I can't enjoy any of it."),
        "finding your samples moved out of the fridge by a friend who no longer speaks to you",
        "the change in your colleague's behaviour", "the withdrawal of contact following the fellowship decision",
        ("guilty", "lonely"), "ask her straight out whether she thinks I didn't deserve it", "hearing that she's right",
        "ask your lab manager to clarify fridge space and working arrangements",
        "take Ilse out for a celebratory lunch and share your success"),
    Client(
        "hamid-meetings", "coworker breakdown", "Hamid", "he",
        ("Eight years ago I trained Hamid when he joined the firm, and now he's a partner and I'm still a senior "
         "associate.",
         "In meetings he corrects me in front of clients and rolls his eyes when I speak.",
         "Last week he explained to a client, slowly, a point I had made two minutes before.",
         "When I asked him about it, he said I need to stop taking feedback so personally."),
        "watching Hamid explain your own point back to the client, slowly, two minutes after you made it",
        "your colleague's behaviour in meetings", "the correction in front of clients",
        ("humiliated", "bitter"), "tell him to his face that I taught him half of what he knows",
        "sounding like the bitter one who got left behind",
        "ask Hamid for a short meeting to agree how you present to clients together",
        "congratulate Hamid on his partnership and suggest working on a new pitch together"),
    # ---------------------------------------------------------------------------- advisor-advisee conflict
    Client(
        "lindqvist-authors", "advisor-advisee conflict", "Professor Lindqvist", "she",
        ("I ran every experiment in our paper, and last week my supervisor, Professor Lindqvist, sent round the "
         "final draft with her name first and another student's second.",
         "I'm third, behind someone who joined the project in its last month.",
         "When I asked, she said authorship order reflects 'overall contribution to the lab', not to the paper.",
         "My contract renewal is in her hands in October."),
        "seeing yourself listed third on a paper whose experiments you ran",
        "the authorship order on the paper", "the determination of the authorship order",
        ("betrayed", "powerless"), "go to the department's ethics officer", "not having a contract in October",
        "check the department's authorship guidelines and request a meeting to discuss them",
        "focus on the next paper, where you can make sure you come first"),
    Client(
        "okonjo-emails", "advisor-advisee conflict", "Dr Okonjo", "he",
        ("My PhD supervisor, Dr Okonjo, hasn't answered an email from me in four months, and my funding ends in May.",
         "He's always at conferences, and when I catch him in the corridor he says 'send me something', which I "
         "already have, five times.",
         "The other students in his group joke that you have to be dying to get an appointment.",
         "I submitted a draft chapter in January and still don't know whether it's any good."),
        "four months of unanswered emails with your funding ending in May",
        "the communication with your supervisor", "the absence of responses to correspondence",
        ("abandoned", "panicked"), "go to the head of department and ask for a new supervisor",
        "Dr Okonjo finding out and making things worse",
        "ask the graduate school for a co-supervisor and a timetable for feedback",
        "send Dr Okonjo a friendly, upbeat reminder"),
    Client(
        "hallam-midnight", "advisor-advisee conflict", "Dr Hallam", "he",
        ("My supervisor, Dr Hallam, messages me after midnight and expects an answer within the hour.",
         "When I didn't reply at one in the morning last Sunday, he wrote in the group channel that real scientists "
         "don't sleep.",
         "The other students reacted with laughing faces.",
         "I've started sleeping with my phone on my chest."),
        "being told in the group channel that real scientists don't sleep",
        "your supervisor's messaging habits", "the expectation of responses during the night",
        ("exhausted", "trapped"), "turn my phone off at ten and let him say what he likes",
        "being the student who doesn't want it enough",
        "propose working hours for messages to Dr Hallam in a short, polite email",
        "reply with a cheerful emoji to show you're a team player"),
    Client(
        "esteves-letter", "advisor-advisee conflict", "Professor Esteves", "he",
        ("I accidentally saw the reference letter my master's advisor, Professor Esteves, wrote for my PhD "
         "applications.",
         "It says I am 'diligent but not PhD material' and 'better suited to a supporting role'.",
         "To my face he has always said I have real promise, and he was the one who encouraged me to apply.",
         "Four programmes have already turned me down."),
        "reading the words 'not PhD material' in a letter from the advisor who encouraged you to apply",
        "the content of the reference letter", "the discovery of the reference letter's content",
        ("devastated", "humiliated"), "ask him why he told me to apply at all",
        "hearing him say the letter was the honest version",
        "ask a different referee to write for your next applications",
        "look on the bright side and find an even better path"),
    Client(
        "marchetti-grant", "advisor-advisee conflict", "Dr Marchetti", "he",
        ("My supervisor, Dr Marchetti, wants me to drop the project I designed and work on his grant instead.",
         "When I said I wanted to finish my own study first, he said he might not be able to sign my progress "
         "review.",
         "Two students before me left his group without finishing.",
         "I have a spreadsheet of my project that I open every night and then close."),
        "being told your progress review might not be signed if you keep your own project",
        "the disagreement about your project",
        "the pressure to change projects and the reference to the progress review",
        ("trapped", "angry"), "tell him that I will finish my own study", "ending up like the two who left",
        "ask the graduate tutor whether a progress review can be withheld on those grounds",
        "give his grant project a go and discover a new passion"),
    Client(
        "pohl-tidy", "advisor-advisee conflict", "Dr Pohl", "he",
        ("My thesis supervisor, Dr Pohl, makes remarks about women in engineering, and when I present in group "
         "meetings he smiles at the others as if it were a performance.",
         "Last week he called my design 'very tidy, as you'd expect', and the room laughed.",
         "I'm the only woman in the group.",
         "When I mentioned it to another supervisor, she said he's harmless and close to retirement."),
        "hearing your design called 'very tidy, as you'd expect' while the room laughed",
        "your supervisor's remarks in group meetings", "the remarks made during the group meeting",
        ("humiliated", "angry"), "report him to the equality office", "being the woman who couldn't take a joke",
        "note each remark and ask the equality office about your options",
        "let your results show him you're the best engineer in the group"),
    Client(
        "brandvold-rerun", "advisor-advisee conflict", "Dr Brandvold", "she",
        ("My supervisor, Dr Brandvold, keeps asking me to re-run my analysis with different exclusions until the "
         "effect becomes significant.",
         "I've done it four times, and each time I feel sick.",
         "When I said I wasn't comfortable, she said that's how science works and that I'm being naive.",
         "She is also the person writing my references."),
        "being called naive for questioning the fourth re-run of your analysis",
        "the analysis decisions in your project", "the repeated requests to re-run the analysis",
        ("anxious", "guilty"), "refuse to run it again", "losing the reference I need for every job after this",
        "write down the analysis plan you agreed at the start and ask for it to be followed",
        "trust her experience of the publishing game"),
    # ----------------------------------------------------------------------------------- daily-life stress
    Client(
        "brandt-note", "daily-life stress", "Mr Brandt", "he",
        ("Our baby has colic, and our downstairs neighbour, Mr Brandt, bangs on his ceiling with a broom whenever she "
         "cries.",
         "On Tuesday he left a note on our door calling us selfish and saying some people shouldn't have children in "
         "flats.",
         "My partner laughed it off, but I read the note about twenty times.",
         "I've started walking the pram around the block at night so he won't hear her."),
        "reading a note on your door that called you selfish for having a baby who cries",
        "the complaints from your neighbour", "the complaints and the note left on the door",
        ("exhausted", "ashamed"), "knock on his door and tell him what the last three months have been like",
        "making an enemy of the man who lives below my daughter",
        "write to the housing association about the note and keep a copy",
        "take Mr Brandt a little cake and a card from the baby"),
    Client(
        "kowal-mould", "daily-life stress", "Ms Kowal", "she",
        ("There is black mould in my daughter's bedroom, and my landlord, Ms Kowal, says it's because I dry clothes "
         "indoors.",
         "My daughter has asthma, and she was taken to hospital twice this winter.",
         "When I said I would contact the council, Ms Kowal said that tenants who cause trouble don't get their "
         "contracts renewed.",
         "I've been sleeping on the sofa so my daughter can have my room."),
        "being told that tenants who cause trouble don't get their contracts renewed, with your daughter's asthma "
        "getting worse",
        "the mould in the flat", "the refusal to address the mould and the reference to the contract",
        ("powerless", "scared"), "report Ms Kowal to the council anyway", "being homeless with a sick child",
        "photograph the mould, get a letter from the doctor and contact a tenants' advice service",
        "buy a dehumidifier and some cheerful paint for the room"),
    Client(
        "coast-weekend", "daily-life stress", "your friends", "they",
        ("I found out from photos that my four closest friends went to the coast together for a long weekend.",
         "There was a group chat for it, and I wasn't in it.",
         "When I asked one of them, she said they assumed I'd be busy with my new job and didn't want me to feel "
         "pressured.",
         "I've known them since we were eleven."),
        "finding out from photos about a weekend away, with a group chat you weren't in",
        "the weekend away with your friends", "the exclusion from the weekend away and the group chat",
        ("lonely", "foolish"), "leave the main group chat without saying anything", "nobody noticing",
        "tell one friend you trust how it felt to find out from photos",
        "organise the next trip yourself and invite everyone"),
    Client(
        "signe-door", "daily-life stress", "Signe", "she",
        ("My daughter Signe is sixteen and has a boyfriend of twenty, and when I said she couldn't stay at his flat, "
         "she called me a controlling cow and slammed her door.",
         "She has barely spoken to me for ten days.",
         "My husband says it's a phase and that I'm pushing her away by making a fuss.",
         "Last night I stood outside her door for a long time and didn't knock."),
        "standing outside Signe's door and not knocking",
        "the disagreement with your daughter about her boyfriend", "the dispute over the overnight stay",
        ("heartbroken", "furious"), "tell her boyfriend to stay away from her", "losing her to him completely",
        "agree with your husband on one clear rule and explain it to Signe together",
        "invite the boyfriend to a family dinner so everyone can get to know each other"),
    Client(
        "tarik-bills", "daily-life stress", "Tarik", "he",
        ("My housemate Tarik is my oldest friend, and I have covered his share of the bills for three months.",
         "Last weekend he came back from a festival with a sunburn and a new jacket.",
         "When I brought up the money, he said he thought friends didn't keep accounts.",
         "I have started hiding in my room when I hear his key."),
        "watching Tarik come back from a festival while you cover his bills",
        "the shared bills", "the non-payment of the bills",
        ("resentful", "guilty"), "give him a written list of what he owes and a date",
        "losing a friendship of twenty years over money",
        "set up a shared account for the bills with fixed monthly amounts",
        "have a fun night in together and sort the money out over pizza"),
    Client(
        "elin-babysitting", "daily-life stress", "Elin", "she",
        ("My sister Elin asks me to babysit her two boys at a few hours' notice, three or four times a month.",
         "Last Friday I said no because I had a date, and she told our mother that I don't care about her children.",
         "My mother phoned to tell me that family comes first.",
         "I went on the date and couldn't eat a thing."),
        "being told by your mother that family comes first, after the one time you said no",
        "the babysitting arrangement with your sister", "the refusal and the complaint to the mother",
        ("guilty", "angry"), "tell Elin that I'm done being her free childcare",
        "her boys thinking their aunt doesn't love them",
        "offer Elin a fixed babysitting night each month and say no to anything else",
        "plan a fun day out with your nephews"),
    Client(
        "rosalind-seating", "daily-life stress", "Rosalind", "she",
        ("I asked my cousin to be my maid of honour, and my best friend Rosalind hasn't spoken to me since.",
         "She found out from a mutual friend before I had the chance to tell her myself.",
         "She sent one message saying that twenty years of friendship obviously meant less to me than to her.",
         "The wedding is in eleven weeks, and I keep looking at her place on the seating plan."),
        "looking at Rosalind's place on the seating plan and not knowing whether she will sit in it",
        "your friend's reaction to your choice", "the discovery of the decision through a mutual friend",
        ("torn", "lonely"), "change my mind and ask Rosalind instead", "letting my cousin down to fix things",
        "call Rosalind and apologise for how she found out, without changing your decision",
        "give Rosalind a special role at the wedding"),
    # ------------------------------------------------------------------------------------- academic stress
    Client(
        "jonas-panel", "academic stress", "Jonas", "he",
        ("My study partner Jonas copied my coursework, and now we have both been flagged for plagiarism.",
         "He wants me to tell the panel that we worked on it together.",
         "If I tell the truth he'll probably be expelled, and he has already told our friends that I'm overreacting.",
         "The hearing is on Thursday, and I have rehearsed both versions out loud."),
        "being flagged for plagiarism for work Jonas copied from you",
        "the plagiarism investigation", "the flagging of the coursework and the request for a shared account",
        ("panicked", "furious"), "tell the panel exactly what happened", "being the reason he's expelled",
        "ask the students' union for an adviser to attend the hearing with you",
        "talk it through with Jonas over a coffee"),
    Client(
        "resit-secret", "academic stress", "your parents", "they",
        ("I failed two exams in January, and my parents don't know.",
         "I've told them everything is going well, and my father has already told the whole family I'm top of the "
         "year.",
         "The resits are in three weeks, and I haven't opened the books, because every time I do I feel like I'm "
         "drowning.",
         "My mother calls every Sunday to ask if I'm eating properly."),
        "hearing your father tell the family you're top of the year while the resits are three weeks away",
        "your exam results", "the failure of the examinations and their concealment",
        ("ashamed", "terrified"), "tell them the truth before the resits", "my father's silence when he hears it",
        "make a revision timetable with your tutor and book the study support service",
        "focus on the resits and surprise them with a great result"),
    Client(
        "sand-group", "academic stress", "your group", "they",
        ("In our group project, two of the four members have done nothing for six weeks, and the deadline is "
         "Friday.",
         "I emailed our lecturer, Dr Sand, and she replied that working through group dynamics is part of the "
         "assessment.",
         "One of them messaged the group yesterday to ask where we were 'at'.",
         "I've written three quarters of the report, and I'll get the same mark as them."),
        "being told that group dynamics are part of the assessment after six weeks of doing their share",
        "the group project", "the non-contribution of two group members",
        ("resentful", "exhausted"), "take their names off the report", "failing the module because of the fallout",
        "record who wrote which section and send it to Dr Sand before Friday",
        "arrange a fun study session with snacks to get everyone motivated"),
    Client(
        "vivi-finals", "academic stress", "Vivi", "she",
        ("My roommate Vivi has people over until three every night, and my final exams start next week.",
         "When I asked her to keep it down, she called me boring and told the whole floor I'm the fun police.",
         "Now people go quiet when I walk into the kitchen.",
         "I revise in the library until it closes and then sit in the stairwell."),
        "being called the fun police in front of the whole floor for asking for quiet before your finals",
        "the noise in your accommodation", "the late-night gatherings and the response to the request for quiet",
        ("exhausted", "isolated"), "report her to the accommodation office",
        "being the person everyone on the floor avoids",
        "ask the accommodation office about a temporary room for the exam weeks",
        "join one of Vivi's evenings and show them your fun side"),
    Client(
        "quist-essay", "academic stress", "Mr Quist", "he",
        ("My scholarship depends on my grades, and my tutor, Mr Quist, has marked my essay down with the comment "
         "that it sounds 'too polished to be your own work'.",
         "I wrote every word of it, over three weekends.",
         "When I went to his office hour with my drafts, he said he was sure I understood why he had to be careful "
         "with students like me.",
         "I don't know what 'students like me' means, and I think I do."),
        "reading 'too polished to be your own work' on an essay you wrote over three weekends",
        "the comment on your essay", "the marking down of the essay and the remark in office hours",
        ("humiliated", "furious"), "appeal the mark and mention what he said",
        "losing the scholarship while the appeal drags on",
        "submit a formal appeal with your drafts and the document's version history",
        "ask Mr Quist for tips so he can see how keen you are"),
    Client(
        "matteo-jokes", "academic stress", "Matteo", "he",
        ("My older brother Matteo is doing a doctorate, and at every family dinner he makes a joke about my "
         "'plumbing school'.",
         "I'm training to be an electrician, and I love it.",
         "Last Sunday my parents laughed at his joke, and my father added that at least someone in the family would "
         "be able to fix the boiler.",
         "I got up and did the washing-up so nobody would see my face."),
        "hearing your parents laugh at another 'plumbing school' joke",
        "the comments about your training", "the repeated jokes at family dinners",
        ("ashamed", "angry"), "tell Matteo that he has never held a real job in his life",
        "ruining the only meal my family still has together",
        "tell your parents privately how the jokes land with you",
        "join in the joking and show you can laugh at yourself"),
    Client(
        "ferreira-placement", "academic stress", "Dr Ferreira", "he",
        ("On my clinical placement, the consultant, Dr Ferreira, tells patients 'the student won't be touching you' "
         "before I've said a word.",
         "Yesterday he introduced me to a patient as 'just the work experience'.",
         "The other student on the placement gets to examine patients and present cases.",
         "I go home and practise examinations on my housemate, and I don't know what I'm doing wrong."),
        "being introduced to a patient as 'just the work experience'",
        "your consultant's conduct on the placement", "the exclusion from clinical activity",
        ("humiliated", "worthless"), "ask him in front of the other student why I'm treated differently",
        "a bad placement report that follows me to every job",
        "ask your placement lead for a mid-point review and give examples",
        "volunteer for extra tasks so Dr Ferreira sees how committed you are"),
)
