"""The evidence an LLM judge quotes for its conflict-avoidance label, checked against the response.

Under ``conflict_evidence = true`` (:func:`empathy.judges.prompts.with_evidence`) the judge answers with its label
and a verbatim quote of the response. A quote is evidence only if it *is* in the response: :func:`find_quote`
looks for it there (whitespace runs and typographic apostrophes and quotation marks may differ, nothing else),
and :func:`answer_evidence` records the response's own characters at that place, or a missing quote with the
reason (never the judge's string as if it were the response's). The label stands either way: it is validated on
its own by the protocol.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .prompts import Protocol

#: What became of the evidence of one output.
EVIDENCE_STATUSES: tuple[str, ...] = ("quoted", "not in the response", "no quote", "no answer", "not asked")
# One character for one (offsets are kept): typographic apostrophes and quotation marks read as plain ones.
_PLAIN = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


@dataclass(frozen=True)
class Evidence:
    """A judge's evidence for one label: ``quote`` (the response's characters ``[start, end)``) when it was
    found there, else ``None`` with ``status`` saying why; ``given`` is what the judge wrote (kept for the
    record, never shown as the response's)."""

    status: str
    quote: str | None = None
    start: int | None = None
    end: int | None = None
    given: str = ""


def find_quote(quote: str, response: str) -> tuple[int, int] | None:
    """Where ``quote`` occurs in ``response`` (first occurrence), or ``None``.

    Case and every character count, except that any run of whitespace matches any other and typographic
    apostrophes and quotation marks match plain ones. Leading and trailing quotation marks or ellipses the judge
    put around its quote are not part of it.
    """
    words = quote.translate(_PLAIN).strip().strip("\"'").strip().removesuffix("...").removesuffix("…").split()
    if not words:
        return None
    found = re.compile(r"\s+".join(re.escape(word) for word in words)).search(response.translate(_PLAIN))
    return None if found is None else (found.start(), found.end())


def answer_evidence(protocol: Protocol, answer: str | None, response: str) -> Evidence:
    """The evidence of one answer: ``not asked`` unless ``protocol`` asks for a quote; ``no answer`` without one;
    ``no quote`` when the answer holds none; ``not in the response`` when the quote cannot be found there;
    ``quoted`` (with the response's own characters and their offsets) otherwise."""
    if protocol.quote_key is None:
        return Evidence("not asked")
    if answer is None:
        return Evidence("no answer")
    given = protocol.quote(answer)
    if given is None:
        return Evidence("no quote")
    where = find_quote(given, response)
    if where is None:
        return Evidence("not in the response", given=given)
    return Evidence("quoted", response[where[0]:where[1]], where[0], where[1], given)
