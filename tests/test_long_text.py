"""Texts longer than one parse: split at boundaries, parsed in pieces, results joined with the right offsets."""

from __future__ import annotations

from pathlib import Path

import pytest

import empathy.distancing as dist
from empathy.distancing import DistancingCache, analyze, load_model, split_long_text

PARAGRAPHS = [
    "The decision was announced on Monday. There is hope that it will be reversed.",
    "I feel torn about it. Mistakes were made, and nobody apologised.",
    "It is believed that the report was leaked. One never knows.",
    "We talked for hours. The implementation of the plan was delayed again.",
]


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("short", 10, [(0, 5)]),
    ("", 10, [(0, 0)]),
    ("aaaa\n\nbbbb cc. dddd", 10, [(0, 6), (6, 15), (15, 19)]),       # line break, then sentence end
    ("aaaa. bb\n\ncc", 11, [(0, 10), (10, 12)]),                      # a paragraph beats a sentence end
    ("aaa. bbb ccc ddd", 10, [(0, 9), (9, 16)]),                       # the ". " before the window is not seen
    ("aaaa bbbb\ncccc dddd", 12, [(0, 10), (10, 19)]),                 # a line break beats a space
    ("abcdefghijklmnopqrstuvwxyz", 10, [(0, 10), (10, 20), (20, 26)]),  # no space: hard cut
    ("He said \u201cno.\u201d Then left", 14, [(0, 14), (14, 23)]),     # closing quote stays with its sentence
    ("abc def. ghi", 8, [(0, 8), (8, 12)]),                            # no boundary in the window's second half
])
def test_split_long_text_hand_cases(text, limit, expected):
    assert split_long_text(text, limit) == expected


@pytest.mark.parametrize("limit", [2, 7, 50, 333])
def test_split_long_text_covers_the_text_in_bounded_pieces(limit):
    text = "\n\n".join(PARAGRAPHS * 20) + " x" * 300 + "y" * 500
    ranges = split_long_text(text, limit)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False))
    assert all(0 < end - start <= limit for start, end in ranges)


@pytest.mark.parametrize("bad", [0, 1, 2.5, "10"])
def test_split_long_text_rejects_bad_limits(bad):
    with pytest.raises(ValueError, match="limit"):
        split_long_text("text", bad)


def test_long_text_equals_its_paragraphs_analyzed_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\n\n".join(PARAGRAPHS)
    # one paragraph per piece: each piece is at most 90 characters and every paragraph fits
    monkeypatch.setattr(dist, "MAX_PIECE_CHARS", 90)
    assert [text[a:b].strip() for a, b in split_long_text(text, 90)] == PARAGRAPHS
    joined = next(analyze([text], cache=False))
    alone = [next(analyze([p], cache=False)) for p in PARAGRAPHS]
    assert joined.sentences == sum(r.sentences for r in alone) == 8
    for label in dist.LABELS:
        assert joined.counts[label] == sum(r.counts[label] for r in alone)
    expected = []
    for (start, _), result in zip(split_long_text(text, 90), alone, strict=True):
        expected.extend((s.start + start, s.end + start, s.label, s.rule, s.text) for s in result.spans)
    assert [(s.start, s.end, s.label, s.rule, s.text) for s in joined.spans] == expected
    assert all(text[s.start:s.end] == s.text for s in joined.spans)
    # decision, implementation / There, It, One / announced, reversed, made, believed, leaked, delayed
    # impersonal: There is, It is believed, One never knows (rules 9: "nobody apologised" is a past event)
    assert joined.counts == {"nominalization": 2, "impersonal": 3, "agentless": 6}


def test_text_longer_than_the_parser_limit_is_analyzed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Before: ``text #1 has N characters, more than the parser's limit`` aborted the whole run."""
    nlp = load_model()
    monkeypatch.setattr(nlp, "max_length", 400)
    long = "\n\n".join(PARAGRAPHS * 10)  # 2,700 characters, 7 pieces of at most 400
    assert len(long) > nlp.max_length
    with DistancingCache(tmp_path) as cache:
        short, result = list(analyze(["Mistakes were made.", long], cache=cache))
        assert short.counts["agentless"] == 1
        assert result.sentences == 80
        assert result.counts == {"nominalization": 20, "impersonal": 30, "agentless": 60}
        assert all(long[s.start:s.end] == s.text for s in result.spans)
        assert [s.start for s in result.spans] == sorted(s.start for s in result.spans)
        # stored whole under the whole text's key: the second run reads it back unchanged
        assert next(analyze([long], cache=cache)) == result
