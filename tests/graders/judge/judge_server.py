"""A real HTTP judge server for the tests: it listens on 127.0.0.1, speaks the OpenAI chat
completions (`/v1/chat/completions`) and Anthropic messages (`/v1/messages`) formats, records
every request, counts the requests in flight, and answers what the test scripts."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs


@attrs.frozen
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any
    at: float

    @property
    def anthropic(self) -> bool:
        return self.path.endswith("/messages")

    @property
    def prompt(self) -> str:
        """The system and user texts of the request, joined."""
        if self.anthropic:
            return self.body["system"] + "\n" + self.body["messages"][0]["content"]
        return "\n".join(message["content"] for message in self.body["messages"])


@attrs.define
class Answer:
    """What to answer: a status, a JSON (dict) or raw (str) body, headers; `delay` seconds
    first; `hang`: never answer (until the server stops)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = attrs.Factory(dict)
    delay: float = 0.0
    hang: bool = False


Script = Callable[[Received], Answer]


def text(reply: str, *, tokens: list[dict[str, Any]] | None = None) -> Script:
    """Answer `reply` as the judge's text, in the format of the request's path; `tokens` (the
    OpenAI `logprobs.content` list) are sent with an OpenAI answer."""

    def answer(request: Received) -> Answer:
        if request.anthropic:
            return Answer(
                body={
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": request.body["model"],
                    "content": [{"type": "text", "text": reply}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 100, "output_tokens": 20},
                }
            )
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": reply},
            "finish_reason": "stop",
            "logprobs": None if tokens is None else {"content": tokens},
        }
        return Answer(
            body={
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": request.body["model"],
                "choices": [choice],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            }
        )

    return answer


def judged(score: Any, reasoning: str = "looks right") -> Script:
    """Answer the plain JSON judgement `{"reasoning": ..., "score": score}`."""
    return text(json.dumps({"reasoning": reasoning, "score": score}))


class JudgeServer:
    """Start with `with JudgeServer() as server:`; `server.url` is the root,
    `server.openai_url` the OpenAI-style base URL (with /v1)."""

    def __init__(self, default: Script | None = None) -> None:
        self.default: Script = default or judged(8)
        self.answers: list[Answer | Script] = []
        self.requests: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    def script(self, *answers: Answer | Script) -> None:
        """Answer the next requests with these, in order, then with `default`."""
        with self._lock:
            self.answers.extend(answers)

    def __enter__(self) -> JudgeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def _next(self, request: Received) -> Answer:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            planned = self.answers.pop(0) if self.answers else self.default
        return planned if isinstance(planned, Answer) else planned(request)

    def _done(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                received = Received(
                    path=self.path,
                    headers={key.lower(): value for key, value in self.headers.items()},
                    body=json.loads(raw),
                    at=time.monotonic(),
                )
                answer = server._next(received)
                try:
                    if answer.hang:
                        server._stopping.wait(30)
                        return
                    if answer.delay:
                        time.sleep(answer.delay)
                    body = answer.body
                    data = (body if isinstance(body, str) else json.dumps(body)).encode()
                    self.send_response(answer.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in answer.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                finally:
                    server._done()

        return Handler


def each(requests: list[Received]) -> Iterator[str]:
    """The prompt of every request."""
    return (request.prompt for request in requests)
