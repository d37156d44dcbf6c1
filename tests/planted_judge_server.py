"""Scripted OpenAI-compatible judges with planted faults, for the judge report's tests (127.0.0.1 only).

:class:`PlantedJudgeServer` is :class:`fake_openai_server.FakeOpenAIServer` with an honest "feature judge":

- affect intensity of a text: 0.2 per affect word of :data:`AFFECT_WORDS` in it (capped at 1) plus 0.05 per
  ``!`` (capped at 1), so attenuating the words lowers it and names, a full stop or a neutral sentence do not;
- disturbing count: the occurrences of ``dead``, ``killed``, ``blood`` (the base server's rule);
- conflict avoidance: 1 if the response contains "you should", else 0.

``fault`` plants one defect: ``ignore-second`` (Text B gets Text A's score: the second text is not read),
``longer`` (each text's affect score rises by 0.02 per word: longer texts rated higher), ``solution-blind``
(conflict avoidance judged without the response's last sentence: blind to an appended solution), ``flip``
(each conflict-avoidance answer flipped with probability ``flip_rate``, drawn from the seed, the prompt and how
many times that prompt was asked, so that concurrent requests arriving in any order get the same flips).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field

from fake_openai_server import FakeOpenAIServer

AFFECT_WORDS: tuple[str, ...] = ("devastated", "terrified", "furious", "heartbroken", "awful", "terrible", "hate",
                                 "love", "amazing", "scared", "angry", "afraid", "desperate", "miserable")
_WORD = re.compile(r"[a-z]+")
_AFFECT_KEYS = re.compile(r'\{"(\w+)": <score of Text A>, "(\w+)": <score of Text B>\}')


def affect_score(text: str, per_word: float = 0.0) -> float:
    """The feature judge's affect intensity of ``text`` (``per_word``: the ``longer`` fault's slope)."""
    words = _WORD.findall(text.lower())
    score = 0.2 * sum(w in AFFECT_WORDS for w in words) + min(0.2, 0.05 * text.count("!"))
    return round(min(1.0, score + per_word * len(text.split())), 9)


@dataclass
class PlantedJudgeServer(FakeOpenAIServer):
    """See the module docstring."""

    fault: str = ""
    flip_rate: float = 0.0
    seed: int = 0
    asked: dict[str, int] = field(default_factory=dict)

    def reset(self) -> None:
        """Forget requests and the prompts' counts (the flips start over)."""
        super().reset()
        with self._lock:
            self.asked = {}

    def _flip(self, user: str) -> bool:
        with self._lock:
            n = self.asked.get(user, 0)
            self.asked[user] = n + 1
        return random.Random(f"{self.seed}:{n}:{user}").random() < self.flip_rate

    def _answer(self, system: str, user: str, *, out_of_range: bool) -> str:
        if "conflict_avoidance" in user:
            response = self._section(user, "THERAPIST RESPONSE") or self._section(user, "COUNSELOR RESPONSE")
            if self.fault == "solution-blind":
                sentences = re.split(r"(?<=[.!?])\s+", response.strip())
                response = " ".join(sentences[:-1]) if len(sentences) > 1 else response
            label = int("you should" in response.lower())
            if self.fault == "flip":
                label = 1 - label if self._flip(user) else label
            return json.dumps({"conflict_avoidance": label})
        if "aversive_count" in user:
            return super()._answer(system, user, out_of_range=out_of_range)
        keys = _AFFECT_KEYS.search(user)
        assert keys is not None, "an affect prompt names its two answer keys"
        slope = 0.02 if self.fault == "longer" else 0.0
        first = affect_score(self._section(user, "TEXT A"), slope)
        second = first if self.fault == "ignore-second" else affect_score(self._section(user, "TEXT B"), slope)
        return json.dumps({keys.group(1): first, keys.group(2): second})
