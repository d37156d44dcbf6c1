"""LLM judges through the ``openai`` client against any OpenAI-compatible endpoint.

:class:`LLMEngine` sends protocol requests concurrently (``asyncio``, at most ``config.concurrency`` in
flight), retries 429 / 408 / 409 / 5xx / timeouts / connection errors / invalid answers with exponential
backoff and full jitter (honouring ``Retry-After`` up to ``backoff_max``), and after the last retry returns
a missing outcome with the reason. Valid answers are stored in the :class:`~empathy.judges.cache.JudgeCache`;
cached requests make no call.

Authentication, permission and unknown-model errors (HTTP 401 / 403 / 404) are configuration errors: the
run stops with :class:`JudgeRunError` rather than recording thousands of identical missing ratings. So is an
endpoint that cannot be reached at all, a refused connection or a host name that does not resolve, while it has
not answered a single call of the run (a mistyped ``base_url``): retrying every output would take minutes and
end in a table of missing ratings. Once the endpoint has answered, the same errors are transient (a server
restarting mid-run) and retried like 429, 5xx and timeouts.

The key is passed to the client and nowhere else; every reason and error message goes through
:func:`~empathy.judges.config.redact` with the key.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
from collections.abc import Callable
from dataclasses import dataclass, field

import openai

from .cache import CachedAnswer, JudgeCache, cache_key
from .config import JudgeConfig, redact
from .prompts import Protocol

logger = logging.getLogger("empathy.judges")

_RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
_SCHEMA_HINTS = ("response_format", "json_schema", "schema", "structured", "grammar")
#: Worker coroutines per concurrency slot: enough that requests waiting out a retry backoff leave the
#: connections busy, bounded so that memory does not grow with the number of requests.
_WORKERS_PER_SLOT = 4


class JudgeRunError(RuntimeError):
    """A judge run cannot go on (bad key, no permission, unknown model, endpoint unreachable or rejecting)."""


def unreachable(exc: BaseException) -> str | None:
    """``"connection refused"`` or ``"unknown host"`` when a connection error is one of those, else ``None``.

    Reads the exception's chain (the client wraps the socket's ``ConnectionRefusedError`` or
    ``socket.gaierror`` in its own errors).
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        if isinstance(current, socket.gaierror):
            return "unknown host"
        current = current.__cause__ or current.__context__
    return None


@dataclass
class JudgeStats:
    """What a judge run cost: requests, HTTP calls, cache hits, retries, failures and tokens."""

    requests: int = 0
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, float]:
        """The counters as a plain dict (for JSON, tables and the app)."""
        return {"requests": self.requests, "calls": self.calls, "cache_hits": self.cache_hits,
                "retries": self.retries, "failures": self.failures, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "total_tokens": self.total_tokens,
                "seconds": round(self.seconds, 3)}

    def summary(self) -> str:
        """One line for a terminal or a status box."""
        return (f"{self.requests} requests: {self.calls} calls, {self.cache_hits} cache hits, "
                f"{self.retries} retries, {self.failures} missing; tokens {self.prompt_tokens} prompt + "
                f"{self.completion_tokens} completion; {self.seconds:.1f} s")


@dataclass(frozen=True, slots=True)
class Request:
    """One protocol request: its cache key, protocol and the texts it rates.

    The chat messages are rendered when the request is sent (:attr:`messages`), not kept: a rendered prompt
    (instructions plus texts) is 1-3 KB, and a run of 10^6 requests held them all before the first call.
    The texts are the caller's own strings, shared, not copied.
    """

    key: str
    protocol: Protocol
    texts: tuple[tuple[str, str], ...]

    @property
    def messages(self) -> list[dict[str, str]]:
        """The rendered chat messages (the same every time: rendering is deterministic)."""
        return self.protocol.render(**dict(self.texts))


@dataclass(slots=True)
class Outcome:
    """A request's result: validated values by dimension, or ``None`` with the reason."""

    values: dict[str, float] | None
    reason: str = ""
    cached: bool = False
    raw: str = field(default="", repr=False)


def make_request(config: JudgeConfig, protocol: Protocol, **texts: str) -> Request:
    """Render ``protocol`` with ``texts`` and compute the cache key for ``config``."""
    messages = protocol.render(**texts)
    temperature = config.temperature if config.send_temperature else -1.0  # -1: the endpoint's default
    key = cache_key(config.endpoint, config.model, protocol.hash, messages, temperature)
    return Request(key=key, protocol=protocol, texts=tuple(texts.items()))


def _retry_after(exc: openai.APIStatusError) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


def _int(value: object) -> int:
    try:
        return int(value or 0)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


@dataclass(frozen=True)
class _Failure:
    """What a failed call means for its request: ``retry`` (spends an attempt), ``again`` (the same attempt in
    another mode), ``stop`` (not worth retrying) or ``fatal`` (the judge is refused for the whole run)."""

    action: str
    reason: str = ""
    retry_after: float | None = None


class LLMEngine:
    """Runs protocol requests against one judge endpoint; see the module docstring."""

    def __init__(self, config: JudgeConfig, *, api_key: str | None, cache: JudgeCache | None,
                 stats: JudgeStats | None = None, http_client: object | None = None):
        if config.kind != "llm":
            raise ValueError(f"judge {config.name!r} is not an LLM judge (kind={config.kind!r})")
        self.config = config
        self._key = api_key
        self.cache = cache
        self.stats = stats if stats is not None else JudgeStats()
        self._http_client = http_client
        self._mode = "json_schema" if config.structured_output == "auto" else config.structured_output
        self._fatal: str | None = None
        self._answered = False  # has the endpoint answered any call of this run (with any status)?

    def _redact(self, text: object) -> str:
        return redact(text, (self._key,) if self._key else ())

    async def run(self, requests: list[Request],
                  progress: Callable[[int, int], None] | None = None) -> dict[str, Outcome]:
        """Resolve every distinct request (cache first); return outcomes by cache key."""
        unique: dict[str, Request] = {}
        for request in requests:
            unique.setdefault(request.key, request)
        total = len(unique)
        self.stats.requests += total
        outcomes: dict[str, Outcome] = {}
        pending: list[Request] = []
        for key, request in unique.items():
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None and set(hit.values) == set(request.protocol.dimensions):
                outcomes[key] = Outcome(values=hit.values, cached=True, raw=hit.raw)
                self.stats.cache_hits += 1
            else:
                pending.append(request)
        done = len(outcomes)
        if progress is not None:
            progress(done, total)
        if pending:
            semaphore = asyncio.Semaphore(self.config.concurrency)
            client = openai.AsyncOpenAI(api_key=self._key or "no-key", base_url=self.config.base_url,
                                        timeout=self.config.timeout, max_retries=0,
                                        **({"http_client": self._http_client} if self._http_client else {}))
            queue = iter(pending)

            async def worker() -> None:
                # A fixed pool of workers pulls the requests: a task (and coroutine frame) per request made
                # memory grow by about 3 KB per pending request, 3 GB for 10^6 (bench/bench_judge_memory.py).
                nonlocal done
                for request in queue:
                    outcomes[request.key] = await self._resolve(client, semaphore, request)
                    done += 1
                    if progress is not None:
                        progress(done, total)

            try:
                # More workers than connections: a request sleeping in its retry backoff holds a worker but
                # not a connection (the semaphore), as with one task per request.
                await asyncio.gather(*(worker() for _ in range(min(len(pending), _WORKERS_PER_SLOT
                                                                   * self.config.concurrency))))
            finally:
                await client.close()
                if self.cache is not None:
                    self.cache.flush()
        if self._fatal is not None:
            raise JudgeRunError(self._fatal)
        return outcomes

    async def _resolve(self, client: openai.AsyncOpenAI, semaphore: asyncio.Semaphore,
                       request: Request) -> Outcome:
        """One request's answer: calls (at most ``max_retries`` + 1 attempts, with jittered exponential
        back-off) until a valid answer, a fatal refusal of the judge, or a failure not worth retrying."""
        config = self.config
        reason = "no attempt made"
        retry_after: float | None = None
        attempt = 0
        made = 0
        while attempt <= config.max_retries:
            if self._fatal is not None:
                return Outcome(values=None, reason=self._fatal)
            if attempt:
                await self._back_off(attempt, retry_after)
            retry_after = None
            async with semaphore:
                if self._fatal is not None:
                    return Outcome(values=None, reason=self._fatal)
                self.stats.calls += 1
                made += 1
                response, failure = await self._post(client, request)
            if failure is not None:
                if failure.action == "fatal":
                    return Outcome(values=None, reason=self._fatal or failure.reason)
                if failure.action == "again":
                    continue  # the same attempt in plain-text mode: no retry spent
                reason, retry_after = failure.reason, failure.retry_after
                if failure.action == "stop":
                    break
                attempt += 1
                continue
            answer = self._answer(request, response)
            if isinstance(answer, Outcome):
                return answer
            reason = answer
            attempt += 1
        self.stats.failures += 1
        final = f"{reason} (after {made} attempt{'s' if made != 1 else ''})"
        logger.warning("judge %s: rating missing: %s", config.name, final)
        return Outcome(values=None, reason=final)

    async def _back_off(self, attempt: int, retry_after: float | None) -> None:
        """Wait before retry ``attempt``: full jitter up to the exponential cap, at least the server's
        ``Retry-After`` (itself capped)."""
        config = self.config
        self.stats.retries += 1
        cap = min(config.backoff_max, config.backoff * 2 ** (attempt - 1))
        delay = random.uniform(0, cap)
        if retry_after is not None:
            delay = max(delay, min(retry_after, config.backoff_max))
        await asyncio.sleep(delay)

    async def _post(self, client: openai.AsyncOpenAI, request: Request) -> tuple[object, _Failure | None]:
        """One call: the response body, or ``None`` and what the failure means for the request."""
        config = self.config
        sent_mode = self._mode
        try:
            # The client's generic POST skips the SDK's per-request TypedDict transform of the
            # body (~3 ms of CPU per call, which capped throughput at high concurrency); auth,
            # timeouts and the mapping of HTTP errors to exceptions are the same as create().
            response = await client.post("/chat/completions", body=self._arguments(request), cast_to=object)
            self._answered = True
            return response, None
        except openai.APITimeoutError:
            return None, _Failure("retry", f"timeout after {config.timeout:g} s")
        except openai.APIConnectionError as exc:
            return None, self._connection_failure(exc)
        except openai.APIStatusError as exc:
            self._answered = True
            return None, self._status_failure(exc, sent_mode)
        except openai.OpenAIError as exc:
            return None, _Failure("retry", f"client error: {self._redact(exc)[:160]}")
        except ValueError as exc:
            # A 200 whose body is not JSON (a proxy's HTML page, a truncated body).
            return None, _Failure("retry", f"malformed HTTP response: {type(exc).__name__}")
        except Exception as exc:  # noqa: BLE001 - one odd response must not sink the whole run
            return None, _Failure("retry", f"unexpected error: {type(exc).__name__}: {self._redact(exc)[:160]}")

    def _connection_failure(self, exc: openai.APIConnectionError) -> _Failure:
        """A refused connection or an unknown host before the endpoint ever answered stops the run (a mistyped
        endpoint); any other connection error, or one after the endpoint has answered, is retried."""
        what = unreachable(exc)
        if what is not None and not self._answered:
            config = self.config
            self._fatal = (f"judge {config.name!r}: cannot reach {config.endpoint} ({what}); check its base_url "
                           "and that the server is running")
            return _Failure("fatal", self._fatal)
        return _Failure("retry", f"connection error: {what or self._redact(exc)[:160]}")

    def _status_failure(self, exc: openai.APIStatusError, sent_mode: str) -> _Failure:
        """What an HTTP error status means: plain text instead of structured output, the judge refused for the
        whole run, a retry (429, 5xx, ...), or a failure of this request only."""
        config = self.config
        status = exc.status_code
        message = self._redact(getattr(exc, "message", exc))[:200]
        # Compare with the mode this request was sent with: with requests in flight, another one
        # may already have switched the run to plain text.
        if status == 400 and sent_mode != "none" and config.structured_output == "auto" and any(
                hint in message.lower() for hint in _SCHEMA_HINTS):
            # The endpoint rejects structured output: fall back to tolerant parsing of plain
            # text for the rest of the run, without spending a retry.
            if self._mode != "none":
                logger.info("judge %s: endpoint rejected structured output; using plain text", config.name)
            self._mode = "none"
            return _Failure("again")
        if status in (401, 403, 404):
            self._fatal = (f"judge {config.name!r}: HTTP {status} from {config.endpoint} "
                           f"({message}); check base_url, model and {config.api_key_env or 'key'}")
            return _Failure("fatal", self._fatal)
        if status in _RETRYABLE_STATUS or status >= 500:
            return _Failure("retry", f"HTTP {status}: {message}", _retry_after(exc))
        return _Failure("stop", f"HTTP {status}: {message}")

    def _answer(self, request: Request, response: object) -> Outcome | str:
        """The outcome of a response body (counted and cached), or why it is no valid answer (to retry)."""
        config = self.config
        if not isinstance(response, dict):
            return "malformed HTTP response: body is not a JSON object"
        usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
        prompt_tokens = _int(usage.get("prompt_tokens"))
        completion_tokens = _int(usage.get("completion_tokens"))
        self.stats.prompt_tokens += prompt_tokens
        self.stats.completion_tokens += completion_tokens
        try:
            text = response["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            text = None
        try:
            values = request.protocol.parse(text)
        except ValueError as exc:
            return f"invalid answer: {self._redact(exc)}"
        if self.cache is not None:
            self.cache.put(request.key, CachedAnswer(values, text or "", prompt_tokens, completion_tokens),
                           endpoint=config.endpoint, model=config.model, protocol=request.protocol.tag)
        return Outcome(values=values, raw=text or "")

    def _arguments(self, request: Request) -> dict[str, object]:
        """The request body for the current structured-output mode."""
        arguments: dict[str, object] = {"model": self.config.model, "messages": request.messages}
        if self.config.send_temperature:
            arguments["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            arguments[self.config.max_tokens_field] = self.config.max_tokens
        if self._mode == "json_schema":
            arguments["response_format"] = request.protocol.response_format()
        elif self._mode == "json_object":
            arguments["response_format"] = {"type": "json_object"}
        if self.config.extra_body:
            arguments.update(self.config.extra_body)
        return arguments
