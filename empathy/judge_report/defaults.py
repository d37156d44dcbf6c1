"""The Alt-Test's defaults, as the paper states them (light: the command line's parser reads them at start-up).

See :mod:`empathy.judge_report.alt_test` for the procedure they parameterise.
"""

from __future__ import annotations

SCORINGS: tuple[str, ...] = ("accuracy", "neg-rmse", "rank")
#: The paper's rule of thumb for epsilon, by who the annotators are (this project's rater kinds): experts 0.2,
#: skilled annotators 0.15 (a ``human`` or ``author`` rater: a team member or the study's author, trained on
#: the rubric), crowd workers 0.1. A kind that says nothing of expertise gets the strictest, 0.1.
EPSILON_BY_KIND: dict[str, float] = {"expert": 0.2, "human": 0.15, "author": 0.15, "crowd": 0.1}
STRICTEST_EPSILON = 0.1
#: Rater kinds that are annotators by default (as :data:`empathy.slices.HUMAN_KINDS`): the crowd of an imported
#: data set is usually an aggregate of several workers, not one annotator, so it is not among them unless asked.
DEFAULT_ANNOTATOR_KINDS: tuple[str, ...] = ("expert", "human", "author")
DEFAULT_Q = 0.05
DEFAULT_MIN_HUMANS = 2
DEFAULT_MIN_INSTANCES = 30
#: Instances per annotator from which the t-test is used (below: Wilcoxon signed-rank).
T_TEST_MIN = 30
PASS_WINNING_RATE = 0.5
TIE_TOLERANCE = 1e-9
