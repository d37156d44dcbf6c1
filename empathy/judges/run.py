"""Run a judge over an outputs table and return long-form ratings (see :func:`run_judge`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .. import __version__
from ..io import OUTPUT_REQUIRED, RATING_COLUMNS
from . import lexicon
from .cache import JudgeCache
from .config import JudgeConfig, JudgesFile, api_key, resolve_judge
from .evidence import Evidence, answer_evidence
from .llm import JudgeStats, LLMEngine, Outcome, Request, make_request
from .prompts import (
    COUNSELING_TASK,
    EVIDENCE_DEPARTURE,
    PROTOCOL_DIMENSIONS,
    PROTOCOLS,
    affect_protocol,
    conflict_text,
)
from .sentences import SPLITTER_VERSION, split_sentences

Progress = Callable[[int, int], None]
#: The protocols the paper applies per task (Section 4, Tables 3-5): news -> SA, EGM; translation -> SA (and LD,
#: not a judge); counseling -> SA, CA. ``task_protocols="paper"`` judges each task only on these (restricted to
#: the protocols asked for); as a mapping, each task's rows get exactly these.
PAPER_TASK_PROTOCOLS: dict[str, tuple[str, ...]] = {
    "news": ("affect", "disturbing"), "translation": ("affect",), COUNSELING_TASK: ("affect", "conflict")}
#: Named task policies of ``task_protocols``: ``paper`` (:data:`PAPER_TASK_PROTOCOLS`) and ``all`` (every
#: protocol asked for on every row, the same as ``None``).
TASK_POLICIES: tuple[str, ...] = ("paper", "all")
CacheArg = JudgeCache | str | Path | bool | None
TaskProtocols = Mapping[str, Iterable[str] | str] | str | None
#: The columns of :attr:`JudgeRun.evidence`.
EVIDENCE_COLUMNS: tuple[str, ...] = ("item_id", "model", "status", "quote", "start", "end", "given")
#: Reason recorded for a text with nothing to rate (e.g. a conversation whose text is not public). Affect and
#: conflict avoidance of an empty text are missing, never 0; its disturbing-content count is a true 0.
EMPTY_TEXT = "empty text: nothing to rate"


def _blank(text: object) -> bool:
    return not isinstance(text, str) or not text.strip()


@dataclass
class JudgeRun:
    """The result of :func:`run_judge`.

    Attributes
    ----------
    ratings
        Long-form ratings with the :mod:`empathy.io` columns (``item_id, model, rater, dimension, value,
        rater_kind, reason, signature``); a missing rating has ``value`` NaN and a ``reason``.
    stats
        Requests, calls, cache hits, retries, failures and tokens (:class:`JudgeStats`).
    judge
        The judge configuration used (holds no key).
    signature
        The signature written into every rating of the run: judge, model, endpoint (no credentials),
        ``id@version#hash`` of each protocol run, temperature, splitter and package version.
    sentences
        Sentence counts per (item_id, model): ``n_sent_ref``, ``n_sent_gen``: the sentences the judge
        rated. Under the default segmentation (``spacy``, :mod:`empathy.judges.segment`) they equal ``d``
        and ``q`` of Eq. 2 as :mod:`empathy.evaluate` computes them; under ``regex`` they may differ. NaN
        for rows an LLM judge rated without the disturbing protocol (their texts are not segmented).
    evidence
        Under ``conflict_evidence``: per rated (item_id, model), the judge's quote for its ``ca`` label, checked
        against the response (:data:`EVIDENCE_COLUMNS`, :func:`empathy.judges.evidence.answer_evidence`): the
        response's own characters where the quote was found, else a status saying why it is missing. Empty
        otherwise.
    """

    ratings: pd.DataFrame
    stats: JudgeStats
    judge: JudgeConfig
    signature: str = ""
    sentences: pd.DataFrame = field(default_factory=pd.DataFrame)
    evidence: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def missing(self) -> pd.DataFrame:
        """The missing ratings with their reasons."""
        return self.ratings[self.ratings["value"].isna()]


def _normalise_protocols(protocols: Iterable[str] | str | None) -> tuple[str, ...]:
    if protocols is None:
        return tuple(PROTOCOLS)
    if isinstance(protocols, str):
        protocols = [p for p in protocols.split(",") if p.strip()]
    names = tuple(dict.fromkeys(p.strip() for p in protocols))
    unknown = [p for p in names if p not in PROTOCOLS]
    if unknown or not names:
        raise ValueError(f"unknown protocol(s) {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(PROTOCOLS)}")
    return names


def _check_outputs(outputs: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(outputs, pd.DataFrame):
        raise TypeError(f"outputs must be a pandas DataFrame, got {type(outputs).__name__}")
    missing = [c for c in OUTPUT_REQUIRED if c not in outputs.columns]
    if missing:
        raise ValueError(f"outputs lacks column(s) {', '.join(missing)}")
    columns = list(OUTPUT_REQUIRED) + (["task"] if "task" in outputs.columns else [])
    frame = outputs[columns].copy()
    if "task" not in frame.columns:
        frame["task"] = ""
    for column in (*OUTPUT_REQUIRED, "task"):
        frame[column] = frame[column].map(
            lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    return frame.reset_index(drop=True)


def _open_cache(cache: CacheArg) -> tuple[JudgeCache | None, bool]:
    """The cache to use and whether this run owns (and must close) it."""
    if cache is None or cache is False:
        return None, False
    if isinstance(cache, JudgeCache):
        return cache, False
    if cache is True:
        return JudgeCache(), True
    if isinstance(cache, str | Path):
        return JudgeCache(cache), True
    raise TypeError(f"cache must be a JudgeCache, a path, True or None, got {type(cache).__name__}")


def _llm_signature(judge: JudgeConfig, names: tuple[str, ...], split: str, tasks: str,
                   affect_rows: frozenset[bool]) -> str:
    """One signature for every rating of a run (so :func:`empathy.signature.judge_signatures` sees one).

    ``affect_rows`` says which affect texts the rows needed: ``True`` for counseling rows, ``False`` for others.
    """
    signature = (f"rater={judge.name};kind=llm;model={judge.model};endpoint={judge.endpoint};"
                 f"protocols={_protocol_tags(judge, names, affect_rows)};"
                 f"T={f'{judge.temperature:g}' if judge.send_temperature else 'default'}")
    if "affect" in names:
        order = judge.affect_order
        signature += f";affect_order={order}" + (f"/seed-{judge.affect_order_seed}" if order == "random" else "")
    if "disturbing" in names:
        signature += f";split={split}"
    if "conflict" in names and judge.conflict_evidence:
        signature += f";departures={EVIDENCE_DEPARTURE}"
    return f"{signature};tasks={tasks};empathy={__version__}"


def _row(item_id: str, model: str, rater: str, dimension: str, value: float, kind: str, reason: str,
         signature: str) -> dict[str, Any]:
    return {"item_id": item_id, "model": model, "rater": rater, "dimension": dimension, "value": value,
            "rater_kind": kind, "reason": reason, "signature": signature}


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(RATING_COLUMNS))
    frame["value"] = frame["value"].astype(float)
    return frame


Sentences = dict[str, list[str]]


def _segment(texts: Iterable[str], segmentation: str) -> tuple[Sentences, str]:
    """The sentences of each distinct text and the segmentation's signature."""
    texts = list(dict.fromkeys(texts))
    if segmentation == "regex":
        return {text: split_sentences(text) for text in texts}, SPLITTER_VERSION
    if segmentation != "spacy":
        raise ValueError(f"segmentation must be 'spacy' or 'regex', got {segmentation!r}")
    if not texts:  # nothing to parse: do not import spaCy just to name the model
        return {}, "spacy"
    from .segment import segmentation_signature, spacy_sentences

    return dict(zip(texts, spacy_sentences(texts), strict=True)), segmentation_signature()


def _sentence_table(frame: pd.DataFrame, sentences: Sentences) -> pd.DataFrame:
    """Sentence counts per row; NaN for a text the run did not segment (an LLM row without ``disturbing``)."""
    def count(text: str) -> float:
        return float(len(sentences[text])) if text in sentences else math.nan

    return pd.DataFrame({"item_id": frame["item_id"], "model": frame["model"],
                         "n_sent_ref": [count(t) for t in frame["reference"]],
                         "n_sent_gen": [count(t) for t in frame["generation"]]})


def affect_orders(judge: JudgeConfig, item_id: str) -> tuple[bool, ...]:
    """The orders in which the affect texts of ``item_id`` are shown: ``True`` = the generation as Text A.

    One order, except under ``affect_order = "both"`` (``(False, True)``: both orders, averaged). Under
    ``random`` a coin from SHA-256 of the seed and the item: the same for every model's output of the item, so
    that comparisons between models never rest on different orders, and independent of the row order, so that
    a subset or a re-ordered table gets the same orders (and the same cache keys).
    """
    if judge.affect_order == "reference-first":
        return (False,)
    if judge.affect_order == "generation-first":
        return (True,)
    if judge.affect_order == "both":
        return (False, True)
    digest = hashlib.sha256(f"{judge.affect_order_seed}\x00{item_id}".encode()).digest()
    return (bool(digest[0] & 1),)


def _protocol_tags(judge: JudgeConfig, names: tuple[str, ...], affect_rows: frozenset[bool]) -> str:
    tags = []
    for name in names:
        if name == "affect":
            orders = {"reference-first": (False,), "generation-first": (True,)}.get(judge.affect_order, (False, True))
            tags.extend(affect_protocol(COUNSELING_TASK if counseling else "", first).tag
                        for counseling in sorted(affect_rows) for first in orders)
        elif name == "conflict":
            tags.append(conflict_text(judge.conflict_protocol, judge.conflict_evidence).tag)
        else:
            tags.append(PROTOCOLS[name].tag)
    return ",".join(tags)


def _row_protocols(frame: pd.DataFrame, names: tuple[str, ...], task_protocols: TaskProtocols
                   ) -> tuple[list[tuple[str, ...]], tuple[str, ...], str]:
    """The protocols of each row, all protocols used (in canonical order) and the policy's signature field."""
    if task_protocols is None or task_protocols == "all":
        return [names] * len(frame), names, "all"
    if isinstance(task_protocols, str):
        if task_protocols != "paper":
            raise ValueError(f"task_protocols must be one of {', '.join(TASK_POLICIES)}, a mapping or None, "
                             f"got {task_protocols!r}")
        by_task = {task: tuple(p for p in protocols if p in names) for task, protocols in PAPER_TASK_PROTOCOLS.items()}
        policy = "paper"
    else:
        by_task = {str(task): _normalise_protocols(value) for task, value in task_protocols.items()}
        # a digest, not the mapping: task names come from the data and do not belong in a signature
        digest = hashlib.sha256(json.dumps(sorted(by_task.items())).encode()).hexdigest()[:8]
        policy = f"custom#{digest}"
    per_row = [by_task.get(task, names) for task in frame["task"]]
    used = {name for row in per_row for name in row}
    return per_row, tuple(name for name in PROTOCOLS if name in used), policy


def _affect_rows(frame: pd.DataFrame, per_row: list[tuple[str, ...]]) -> frozenset[bool]:
    """Whether counseling rows (``True``) and other rows (``False``) are rated on affect."""
    return frozenset(task == COUNSELING_TASK for task, names in zip(frame["task"], per_row, strict=True)
                     if "affect" in names)


def _run_lexicon(frame: pd.DataFrame, judge: JudgeConfig, per_row: list[tuple[str, ...]],
                 used: tuple[str, ...], tasks: str, progress: Progress | None) -> JudgeRun:
    start = time.perf_counter()
    sentences, split = _segment([*frame["reference"], *frame["generation"]], judge.segmentation)
    signature = lexicon.signature(used, split, tasks)
    rows: list[dict[str, Any]] = []
    total = len(frame)
    if progress is not None:
        progress(0, total)
    for position, (record, names) in enumerate(zip(frame.itertuples(index=False), per_row, strict=True)):
        item, model, reference, generation = record.item_id, record.model, record.reference, record.generation
        if "affect" in names:
            for dimension, text in (("e_ref", reference), ("e_gen", generation)):
                value, reason = ((math.nan, EMPTY_TEXT) if _blank(text)
                                 else (lexicon.affect_intensity(text, sentences[text]), ""))
                rows.append(_row(item, model, judge.name, dimension, value, "lexicon", reason, signature))
        if "disturbing" in names:
            for dimension, text in (("u_ref", reference), ("u_gen", generation)):
                rows.append(_row(item, model, judge.name, dimension,
                                 float(lexicon.disturbing_count(text, sentences[text])), "lexicon", "", signature))
        if "conflict" in names:
            value, reason = ((math.nan, EMPTY_TEXT) if _blank(generation)
                             else (float(lexicon.conflict_avoidance(generation, sentences[generation])), ""))
            rows.append(_row(item, model, judge.name, "ca", value, "lexicon", reason, signature))
        if progress is not None:
            progress(position + 1, total)
    stats = JudgeStats(requests=total, seconds=time.perf_counter() - start)
    return JudgeRun(ratings=_frame(rows), stats=stats, judge=judge, signature=signature,
                    sentences=_sentence_table(frame, sentences))


def _plan(frame: pd.DataFrame, judge: JudgeConfig, per_row: list[tuple[str, ...]], sentences: Sentences
          ) -> tuple[list[Request], list[tuple[str, str, str, list[str]]]]:
    """Requests to make and, per rating, the request keys it depends on."""
    requests: list[Request] = []
    needs: list[tuple[str, str, str, list[str]]] = []  # (item, model, dimension, keys)
    for record, names in zip(frame.itertuples(index=False), per_row, strict=True):
        item, model = record.item_id, record.model
        if "affect" in names:
            if _blank(record.reference) or _blank(record.generation):
                needs += [(item, model, "e_ref", []), (item, model, "e_gen", [])]  # recorded as EMPTY_TEXT
            else:
                shown = [make_request(judge, affect_protocol(record.task, first), reference=record.reference,
                                      generation=record.generation) for first in affect_orders(judge, item)]
                requests += shown
                keys = [request.key for request in shown]
                needs += [(item, model, "e_ref", keys), (item, model, "e_gen", keys)]
        if "disturbing" in names:
            for dimension, text in (("u_ref", record.reference), ("u_gen", record.generation)):
                keys = []
                for sentence in sentences[text]:
                    request = make_request(judge, PROTOCOLS["disturbing"], sentence=sentence)
                    requests.append(request)
                    keys.append(request.key)
                needs.append((item, model, dimension, keys))
        if "conflict" in names:
            if _blank(record.generation):
                needs.append((item, model, "ca", []))
            else:
                request = make_request(judge, conflict_text(judge.conflict_protocol, judge.conflict_evidence),
                                       reference=record.reference, generation=record.generation)
                requests.append(request)
                needs.append((item, model, "ca", [request.key]))
    return requests, needs


def _combine(outcomes: list[Outcome], dimension: str, name: str) -> tuple[float, str]:
    """The value of a rating from its requests' outcomes (with a reason when missing).

    Disturbing content: the sum over the text's sentences (an empty text has none: a true 0). Affect under
    ``affect_order = "both"``: the mean of the two orders' answers. Any failed request makes the rating missing:
    a partial sum would undercount, and one order alone would bring back the position effect.
    """
    failed = [outcome for outcome in outcomes if outcome.values is None]
    if failed:
        if name != "disturbing" and len(outcomes) == 1:
            return math.nan, failed[0].reason
        unit = "sentences" if name == "disturbing" else "orders"
        return math.nan, f"{len(failed)} of {len(outcomes)} {unit} unrated; first: {failed[0].reason}"
    values = [float(outcome.values[dimension]) for outcome in outcomes]  # type: ignore[index]
    return (float(sum(values)) if name == "disturbing" else sum(values) / len(values)), ""


def _assemble(needs: list[tuple[str, str, str, list[str]]], outcomes: Mapping[str, Outcome],
              judge: JudgeConfig, signature: str) -> pd.DataFrame:
    protocol_of = {d: name for name, dims in PROTOCOL_DIMENSIONS.items() for d in dims}
    answer_key = {"u_ref": "u", "u_gen": "u"}  # one sentence's answer is "u", whichever text it is from
    rows = []
    for item, model, dimension, keys in needs:
        name = protocol_of[dimension]
        if not keys and name != "disturbing":
            rows.append(_row(item, model, judge.name, dimension, math.nan, "llm", EMPTY_TEXT, signature))
            continue
        value, reason = _combine([outcomes[k] for k in keys], answer_key.get(dimension, dimension), name)
        rows.append(_row(item, model, judge.name, dimension, value, "llm", reason, signature))
    return _frame(rows)


async def arun_judge(outputs: pd.DataFrame, judge: JudgeConfig | str | None = None, *,
                     protocols: Iterable[str] | str | None = None, progress: Progress | None = None,
                     cache: CacheArg = True, config: str | Path | JudgesFile | None = None,
                     secrets: Mapping[str, Any] | None = None, concurrency: int | None = None,
                     task_protocols: TaskProtocols = None, segmentation: str | None = None) -> JudgeRun:
    """Async form of :func:`run_judge` (for callers that already run an event loop)."""
    judge_config = resolve_judge(judge, config)
    if concurrency is not None:
        judge_config = judge_config.replace(concurrency=concurrency)
    if segmentation is not None:
        judge_config = judge_config.replace(segmentation=segmentation)
    frame = _check_outputs(outputs)
    per_row, names, tasks = _row_protocols(frame, _normalise_protocols(protocols), task_protocols)
    if judge_config.kind == "lexicon":
        return _run_lexicon(frame, judge_config, per_row, names, tasks, progress)
    key = api_key(judge_config, secrets)
    start = time.perf_counter()
    # Only the disturbing protocol works per sentence for an LLM judge: parse only the texts it rates (a parse
    # costs about a minute per MB, too much to spend on a sentence table nobody asked for).
    counted = [text for record, row in zip(frame.itertuples(index=False), per_row, strict=True)
               if "disturbing" in row for text in (record.reference, record.generation)]
    sentences, split = _segment(counted, judge_config.segmentation)
    requests, needs = _plan(frame, judge_config, per_row, sentences)
    store, owned = _open_cache(cache)
    stats = JudgeStats()
    try:
        engine = LLMEngine(judge_config, api_key=key, cache=store, stats=stats)
        outcomes = await engine.run(requests, progress)
    finally:
        if owned and store is not None:
            store.close()
    stats.seconds = time.perf_counter() - start
    signature = _llm_signature(judge_config, names, split, tasks, _affect_rows(frame, per_row))
    return JudgeRun(ratings=_assemble(needs, outcomes, judge_config, signature), stats=stats,
                    judge=judge_config, signature=signature, sentences=_sentence_table(frame, sentences),
                    evidence=_evidence_table(frame, needs, outcomes, judge_config))


def planned_requests(outputs: pd.DataFrame, judge: JudgeConfig, *, protocols: Iterable[str] | str | None = None,
                     task_protocols: TaskProtocols = None) -> int:
    """The distinct requests :func:`run_judge` would send for ``outputs`` (0 for the lexicon judge), counted
    without a call: each is one call unless retried or already cached, so a cost shown before a paid endpoint is
    called rests on it."""
    if judge.kind == "lexicon":
        return 0
    frame = _check_outputs(outputs)
    per_row, _, _ = _row_protocols(frame, _normalise_protocols(protocols), task_protocols)
    counted = [text for record, row in zip(frame.itertuples(index=False), per_row, strict=True)
               if "disturbing" in row for text in (record.reference, record.generation)]
    sentences, _ = _segment(counted, judge.segmentation)
    requests, _ = _plan(frame, judge, per_row, sentences)
    return len({request.key for request in requests})


def _evidence_row(item: str, model: str, evidence: Evidence) -> dict[str, Any]:
    return {"item_id": item, "model": model, "status": evidence.status, "quote": evidence.quote,
            "start": evidence.start, "end": evidence.end, "given": evidence.given}


def _evidence_table(frame: pd.DataFrame, needs: list[tuple[str, str, str, list[str]]],
                    outcomes: Mapping[str, Outcome], judge: JudgeConfig) -> pd.DataFrame:
    """:attr:`JudgeRun.evidence`: the checked quote of every ``ca`` request (empty without the evidence text)."""
    if not judge.conflict_evidence:
        return pd.DataFrame(columns=list(EVIDENCE_COLUMNS))
    protocol = conflict_text(judge.conflict_protocol, evidence=True)
    responses = dict(zip(zip(frame["item_id"], frame["model"], strict=True), frame["generation"], strict=True))
    rows = []
    for item, model, dimension, keys in needs:
        if dimension != "ca" or not keys:
            continue
        outcome = outcomes[keys[0]]
        answer = outcome.raw if outcome.values is not None else None
        rows.append(_evidence_row(item, model, answer_evidence(protocol, answer, responses[(item, model)])))
    return pd.DataFrame(rows, columns=list(EVIDENCE_COLUMNS))


def run_judge(outputs: pd.DataFrame, judge: JudgeConfig | str | None = None, *,
              protocols: Iterable[str] | str | None = None, progress: Progress | None = None,
              cache: CacheArg = True, config: str | Path | JudgesFile | None = None,
              secrets: Mapping[str, Any] | None = None, concurrency: int | None = None,
              task_protocols: TaskProtocols = None, segmentation: str | None = None) -> JudgeRun:
    """Rate every (item, model) of ``outputs`` with a judge; return a :class:`JudgeRun`.

    Parameters
    ----------
    outputs
        A validated outputs table (:func:`empathy.io.load_outputs`): ``item_id, model, reference,
        generation`` (other columns ignored).
    judge
        A :class:`JudgeConfig`, a judge name from ``config`` or ``"lexicon"`` (the default, offline).
    protocols
        Short protocol names to run (``affect`` -> e_ref, e_gen; ``disturbing`` -> u_ref, u_gen;
        ``conflict`` -> ca), as a list or a comma-separated string; all three by default.
    progress
        Called as ``progress(done, total)`` (requests for an LLM judge, rows for the lexicon judge), in the
        calling thread unless an event loop is already running there.
    cache
        A :class:`JudgeCache`, a path to a SQLite file, ``True`` (the default file) or ``None`` (no cache).
    config
        Config file (or parsed :class:`JudgesFile`) in which to look up a judge given by name.
    secrets
        Fallback mapping for the API key (e.g. ``st.secrets``), after the environment.
    concurrency
        Overrides the judge's concurrency limit.
    task_protocols
        Which protocols each task's rows get, named in the signature (``tasks=``): ``None`` or ``"all"``
        (every row gets ``protocols``; the default here), ``"paper"`` (rows of a task the paper scores get
        what :data:`PAPER_TASK_PROTOCOLS` gives it, among ``protocols``; rows of other tasks get
        ``protocols``; the default of the CLI and the app), or a mapping task -> protocols (rows of a mapped
        task get exactly those; signed ``custom#<digest>``).
    segmentation
        Overrides the judge's ``segmentation``: ``spacy`` (the sentences whose count is ``d``/``q`` of Eq. 2)
        or ``regex`` (dependency-free, may disagree with ``d``/``q``).

    Raises
    ------
    JudgeConfigError
        Unknown judge, bad config, or the key variable is unset.
    JudgeRunError
        The endpoint refuses the judge (HTTP 401 / 403 / 404).
    """
    coroutine = arun_judge(outputs, judge, protocols=protocols, progress=progress, cache=cache, config=config,
                           secrets=secrets, concurrency=concurrency, task_protocols=task_protocols,
                           segmentation=segmentation)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    # Already inside an event loop (Jupyter, some app servers): run ours in a worker thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def cached_evidence(reference: str, generation: str, judge: JudgeConfig, cache: JudgeCache) -> Evidence:
    """The evidence quote a judge run under ``conflict_evidence`` gave for its ``ca`` label of this output, read
    from the answer cache (no call) and checked against the response (``not asked`` for a judge without the
    evidence text, ``no answer`` when the cache has none). Raises ValueError for the lexicon judge, whose cues are
    :func:`empathy.judges.lexicon.conflict_cues`."""
    if judge.kind == "lexicon":
        raise ValueError("the lexicon judge caches no answers; use empathy.judges.lexicon.conflict_cues")
    if not judge.conflict_evidence:
        return Evidence("not asked")
    protocol = conflict_text(judge.conflict_protocol, evidence=True)
    answer = cache.get(make_request(judge, protocol, reference=reference, generation=generation).key)
    return answer_evidence(protocol, None if answer is None else answer.raw, generation)


@dataclass(frozen=True)
class SentenceCount:
    """One sentence of a text as an LLM judge's disturbing-content protocol rated it.

    ``start``, ``end``: character offsets of the sentence in the text; ``count``: the judge's aversive count
    of the sentence from the answer cache, or ``None`` when the cache has no answer for it.
    """

    start: int
    end: int
    count: float | None


def cached_sentence_counts(text: str, judge: JudgeConfig, cache: JudgeCache) -> list[SentenceCount]:
    """The per-sentence disturbing counts an LLM judge gave ``text``, read from its answer cache (no call).

    The sentences are those :func:`run_judge` sends (the judge's ``segmentation``: the Eq. 2 parse of
    :mod:`empathy.judges.segment` or the regex splitter), each with the cache key of the very request the run
    made, so where the run succeeded the counts add up to the judge's ``u`` of the text. A sentence without a
    cached answer (the run failed there, or the cache was cleared) has ``count`` ``None``. Raises TypeError for a
    text that is not a string and ValueError for the offline lexicon judge (it has no per-sentence answers:
    its elements are located by :func:`empathy.judges.lexicon.disturbing_spans`).
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if judge.kind == "lexicon":
        raise ValueError("the lexicon judge caches no answers; use empathy.judges.lexicon.disturbing_spans")
    if judge.segmentation == "regex":
        sentences = split_sentences(text)
        spans = lexicon.locate_sentences(text, sentences)
    else:
        from .segment import sentence_spans

        spans = sentence_spans([text])[0]
        sentences = [" ".join(text[a:b].split()) for a, b in spans]
    out = []
    for (start, end), sentence in zip(spans, sentences, strict=True):
        answer = cache.get(make_request(judge, PROTOCOLS["disturbing"], sentence=sentence).key)
        count = None if answer is None or "u" not in answer.values else float(answer.values["u"])
        out.append(SentenceCount(start, end, count))
    return out
