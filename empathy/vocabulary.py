"""The names every layer shares: label rules, the open choices of Eq. 2 and Eq. 4, directions and ranks.

Standard library only, so that the command line's parsers, the engine and the app import one copy of each
list (no parser keeps its own ``choices=("latest", ...)``). The metric registry itself (names, dimensions,
direction, help) is :data:`empathy.metrics.METRIC_SPECS`; this module holds only what its entries and the
parsers need before NumPy is imported.
"""

from __future__ import annotations

from types import MappingProxyType

# ------------------------------------------------------------------------------------------ label rules

#: How one label is chosen when several humans decided the same rating (:mod:`empathy.labels.rules`).
LABEL_RULES: tuple[str, ...] = ("latest", "majority", "adjudicated")
#: The default label rule.
DEFAULT_LABEL_RULE = "latest"
#: One line per label rule, for the app's selector and the command line's help.
LABEL_RULE_HELP = MappingProxyType({
    "latest": "the most recent decision of anyone (an adjudication included)",
    "majority": "an adjudication if there is one, else the value most annotators chose; a tie stays unresolved "
                "(the judge's label is kept)",
    "adjudicated": "an adjudication if there is one, else the annotators' value when they all agree; a "
                   "disagreement stays unresolved (the judge's label is kept)",
})

# ------------------------------------------------------------------------------ the open choices of Eq. 2, 4

#: What an EGM item with a + b = 0 (Eq. 2 is 0/0 there) contributes: ``"zero"`` (the default, this project's
#: choice: the term is 0) or ``"exclude"`` (left out as undefined).
EGM_BOTH_ZERO: tuple[str, ...] = ("zero", "exclude")
#: ``"separate"`` is Eq. 4 as written: each side standardised with its own mean and sd; ``"reference"`` uses
#: the reference's statistics on both sides.
LD_STANDARDIZATIONS: tuple[str, ...] = ("separate", "reference")
#: Order of the distancing-density vector of Eq. 4.
LD_DIMENSIONS: tuple[str, str, str] = ("nominalization", "impersonal", "agentless")
#: Whether a judge dimension is one judgement per reference text (shared by every model's output of an item)
#: or one per generated output.
SIDES: tuple[str, ...] = ("reference", "output")

# ------------------------------------------------------------------------------------ directions and ranks

#: A metric where a smaller value is the better outcome (all four of the paper's: they measure failure).
LOWER_IS_BETTER = "lower"
#: A metric where a larger value is the better outcome.
HIGHER_IS_BETTER = "higher"
DIRECTIONS: tuple[str, ...] = (LOWER_IS_BETTER, HIGHER_IS_BETTER)
#: How tied values rank: they share the smallest rank of the tie (competition ranking: 1, 1, 3), pandas'
#: ``rank(method="min")``.
RANK_TIES = "min"
#: The one rank convention of every table, page, command and export, computed by one function
#: (:func:`empathy.evaluate.rank_by_direction`): rank 1 is the best value in the metric's direction (for the
#: paper's four metrics, all lower-is-better, the least failure); ties share the smallest rank.
RANK_CONVENTION = ("rank 1 = the best value in the metric's direction (for SA, EGM, CA and LD, where lower is "
                   "better: the least failure); tied values share the smallest rank (1, 1, 3)")
