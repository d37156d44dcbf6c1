"""empathy: measure the four mechanisms of empathic failure in LLM outputs.

The metrics follow "the empathy mechanisms paper" (``../shared/paper/empathy-mechanisms-paper.txt``):
Sentiment Attenuation (Eq. 1), Empathic Granularity Mismatch (Eq. 2), Conflict Avoidance (Eq. 3) and
Linguistic Distancing (Eq. 4).
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
