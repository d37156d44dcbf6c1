"""A real, local OpenAI-compatible HTTP server for the judge tests and benchmark (127.0.0.1 only).

It speaks enough HTTP/1.1 (keep-alive, Content-Length) for the ``openai`` client and serves
``POST /v1/chat/completions`` and ``POST /v1/embeddings`` from an asyncio loop in a background thread.

Default answers are deterministic, so tests can assert values:

- affect intensity: each text's score under the key the prompt asks for it (``reference`` / ``generation``, or
  ``client`` / ``response`` for counseling): the number after ``E=`` in the text when it holds one (``E=0.65``),
  else 0.8 for the reference (client) and 0.4 for the generation (response), whichever is shown first; plus
  ``position_bias`` on the text shown as Text A (a judge that favours the first position);
- disturbing count: the number of the words ``dead``, ``killed``, ``blood`` in the sentence;
- conflict avoidance: 1 if the response contains "you should", else 0; asked for evidence (the evidence text,
  ``"evidence":`` in the prompt), the response's first sentence with its whitespace collapsed, or the text after
  ``QUOTE:`` in the client narrative (up to the end of its line) when it holds one (a quote not in the response);

Failure markers in the prompt text script misbehaviour per distinct prompt (deterministic under
concurrency): ``FAIL:<mode>*<n>`` makes the first ``n`` attempts of that prompt fail with ``mode``:
``429`` (with ``Retry-After: 0``), ``500``, ``503``, ``timeout`` (answers after ``hang`` seconds),
``malformed`` (answer text that is not JSON), ``range`` (values outside the rubric), ``echo`` (a 500 whose
body echoes the request's Authorization header, to test redaction), ``httpjunk`` (a 200 whose body is not
JSON). ``FAIL:prose`` always answers with the JSON wrapped in prose and a code fence.

Server-wide switches: ``position_bias`` (added to Text A's affect score, capped at 1; 0 by default),
``latency`` (seconds before every answer), ``api_key`` (401 unless the bearer token
matches, with the wrong key echoed in the message like real providers do), ``reject_json_schema`` (400 for
``response_format`` of type json_schema).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

_MARKER = re.compile(r"FAIL:(\w+)(?:\*(\d+))?")
_AFFECT_KEYS = re.compile(r'\{"(\w+)": <score of Text A>, "(\w+)": <score of Text B>\}')
_SCORE = re.compile(r"\bE=(\d+(?:\.\d+)?)")
_ROLE_SCORES = {"reference": 0.8, "client": 0.8, "generation": 0.4, "response": 0.4}


@dataclass
class FakeOpenAIServer:
    """See the module docstring. Use as a context manager: ``with FakeOpenAIServer() as server: ...``."""

    latency: float = 0.0
    position_bias: float = 0.0
    api_key: str | None = None
    reject_json_schema: bool = False
    hang: float = 5.0
    host: str = "127.0.0.1"
    port: int = 0
    calls: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers_seen: list[dict[str, str]] = field(default_factory=list)
    record: bool = True

    def __post_init__(self) -> None:
        self._attempts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._max_in_flight = 0
        self._in_flight = 0
        self._generation = 0

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def max_in_flight(self) -> int:
        """Most chat requests being answered at once (to check the client's concurrency limit)."""
        return self._max_in_flight

    def start(self) -> FakeOpenAIServer:
        """Start serving in a daemon thread; returns self once the port is bound."""
        self._thread = threading.Thread(target=self._serve, name="fake-openai", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start")
        return self

    def stop(self) -> None:
        """Stop the server and its thread."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget calls, requests and per-prompt attempt counts."""
        with self._lock:
            self.calls = 0
            self.requests.clear()
            self.headers_seen.clear()
            self._attempts.clear()
            self._max_in_flight = 0
            # requests still hanging from an earlier test must not count towards the next one's in-flight
            self._generation += 1
            self._in_flight = 0

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self._server = loop.run_until_complete(asyncio.start_server(self._handle, self.host, self.port,
                                                                    backlog=512))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            self._server.close()
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    # ------------------------------------------------------------------ HTTP
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request_line = await reader.readline()
                if not request_line:
                    break
                method, path, _ = request_line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                status, payload, extra = await self._route(method, path, headers, body)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                head = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}",
                        "Content-Type: application/json", f"Content-Length: {len(data)}",
                        "Connection: keep-alive"] + [f"{k}: {v}" for k, v in extra.items()]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, asyncio.CancelledError):
            pass
        finally:
            try:
                writer.close()
            except RuntimeError:
                pass

    async def _route(self, method: str, path: str, headers: dict[str, str], body: bytes
                     ) -> tuple[int, Any, dict[str, str]]:
        if method != "POST":
            return 404, {"error": {"message": "not found"}}, {}
        try:
            request = json.loads(body or b"{}")
        except json.JSONDecodeError:
            return 400, {"error": {"message": "invalid JSON body"}}, {}
        with self._lock:
            self.calls += 1
            if self.record:
                self.requests.append(request)
                self.headers_seen.append(headers)
        token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        if self.api_key is not None and token != self.api_key:
            return 401, {"error": {"message": f"Incorrect API key provided: {token}.",
                                   "type": "invalid_request_error", "code": "invalid_api_key"}}, {}
        if path.endswith("/embeddings"):
            return await self._embeddings(request)
        if path.endswith("/chat/completions"):
            generation = self._generation
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            try:
                return await self._chat(request, headers)
            finally:
                if generation == self._generation:
                    self._in_flight -= 1
        return 404, {"error": {"message": f"unknown path {path}"}}, {}

    async def _chat(self, request: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        if self.latency:
            await asyncio.sleep(self.latency)
        response_format = request.get("response_format") or {}
        if self.reject_json_schema and response_format.get("type") == "json_schema":
            return 400, {"error": {"message": "response_format json_schema is not supported by this server"}}, {}
        messages = request.get("messages", [])
        system = messages[0]["content"] if messages else ""
        user = messages[-1]["content"] if messages else ""
        digest = hashlib.sha256(user.encode()).hexdigest()
        with self._lock:
            self._attempts[digest] += 1
            attempt = self._attempts[digest]
        mode = None
        for match in _MARKER.finditer(user):
            times = int(match.group(2)) if match.group(2) else 10**9
            if match.group(1) == "prose" or attempt <= times:
                mode = match.group(1)
                break
        if mode == "429":
            return 429, {"error": {"message": "Rate limit reached", "type": "rate_limit"}}, {"Retry-After": "0"}
        if mode in ("500", "503"):
            return int(mode), {"error": {"message": "upstream failure"}}, {}
        if mode == "echo":
            return 500, {"error": {"message": f"debug: got header {headers.get('authorization', '')}"}}, {}
        if mode == "httpjunk":
            return 200, b"<html>gateway says hi</html>", {}
        if mode == "timeout":
            await asyncio.sleep(self.hang)
        content = self._answer(system, user, out_of_range=(mode == "range"))
        if mode == "malformed":
            content = "{'reference': 0.8, generation: "
        elif mode == "prose":
            content = f"Sure! Here is my rating:\n```json\n{content}\n```\nLet me know if you need more."
        usage = {"prompt_tokens": (len(system) + len(user)) // 4, "completion_tokens": max(1, len(content) // 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return 200, {
            "id": f"chatcmpl-{digest[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": request.get("model", ""),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": usage,
        }, {}

    @staticmethod
    def _section(user: str, name: str) -> str:
        match = re.search(rf"<<<{name}>>>\n(.*?)\n<<<END {name}>>>", user, re.S)
        return match.group(1) if match else ""

    def _answer(self, system: str, user: str, *, out_of_range: bool) -> str:
        if "aversive_count" in user:
            sentence = self._section(user, "SENTENCE").lower()
            count = sum(len(re.findall(rf"\b{w}\b", sentence)) for w in ("dead", "killed", "blood"))
            return json.dumps({"aversive_count": -3 if out_of_range else count})
        if "conflict_avoidance" in user:
            # conflict-avoidance@2 (the paper's criteria) names the response THERAPIST RESPONSE, @1 COUNSELOR
            response = self._section(user, "THERAPIST RESPONSE") or self._section(user, "COUNSELOR RESPONSE")
            label = 2 if out_of_range else int("you should" in response.lower())
            answer: dict[str, Any] = {"conflict_avoidance": label}
            if '"evidence":' in user:
                scripted = re.search(r"QUOTE:(.*)", self._section(user, "CLIENT NARRATIVE"))
                first = re.split(r"(?<=[.!?])\s", response.strip(), maxsplit=1)[0]
                answer["evidence"] = scripted.group(1).strip() if scripted else " ".join(first.split())
            return json.dumps(answer)
        return json.dumps(self._affect(user, out_of_range=out_of_range))

    def _affect(self, user: str, *, out_of_range: bool) -> dict[str, float]:
        """Each text's score under the key the prompt names for it, by position (see the module docstring)."""
        keys = _AFFECT_KEYS.search(user)
        if keys is None:
            return {"reference": 1.7 if out_of_range else 0.8, "generation": 0.4}
        answer = {}
        for key, section, bias in ((keys.group(1), "TEXT A", self.position_bias), (keys.group(2), "TEXT B", 0.0)):
            marker = _SCORE.search(self._section(user, section))
            score = float(marker.group(1)) if marker else _ROLE_SCORES.get(key, 0.5)
            answer[key] = round(min(1.0, score + bias), 9)
        if out_of_range:
            answer[next(k for k in answer if k in ("reference", "client"))] = 1.7
        return answer

    async def _embeddings(self, request: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if self.latency:
            await asyncio.sleep(self.latency)
        inputs = request.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        data = []
        for index, text in enumerate(inputs):
            # A bag-of-letters vector: texts sharing letters are similar; deterministic and hand-checkable.
            vector = [float(str(text).lower().count(c)) for c in "abcdefghijklmnopqrstuvwxyz"]
            data.append({"object": "embedding", "index": index, "embedding": vector})
        tokens = sum(len(str(t)) // 4 for t in inputs)
        return 200, {"object": "list", "data": data, "model": request.get("model", ""),
                     "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}, {}
