"""The judge over HTTP: retries with backoff on 429 (honouring Retry-After), 5xx, timeouts
and lost connections; no retry on other 4xx; a server that never answers is an error within
the configured time. Every failure is an error result naming its cause."""

from __future__ import annotations

import socket
import time

from judge_server import Answer, JudgeServer, judged
from judge_support import Make, grade_one, statistics, use_options


def test_a_429_is_retried_after_what_retry_after_asks(server: JudgeServer, make: Make) -> None:
    server.script(Answer(429, {"error": {"message": "slow down"}}, {"retry-after": "1"}))
    # A backoff of its own would wait at least 2.5 s: the server's 1 s is what is honoured.
    result = grade_one(make(retry_base_delay=5))
    assert (result.outcome, result.score) == ("pass", 0.8)
    first, second = server.requests
    assert 0.9 <= second.at - first.at < 2.4
    stats = statistics()
    assert stats is not None
    assert (stats.calls, stats.retries, stats.errors) == (1, 1, 0)


def test_a_500_twice_then_success(server: JudgeServer, make: Make) -> None:
    server.script(Answer(500, "oops"), Answer(503, {"error": {"message": "overloaded"}}))
    result = grade_one(make())
    assert result.outcome == "pass"
    assert len(server.requests) == 3
    stats = statistics()
    assert stats is not None
    assert (stats.calls, stats.retries) == (1, 2)


def test_retries_give_up_after_max_retries(server: JudgeServer, make: Make) -> None:
    server.default = lambda request: Answer(503, {"error": {"message": "overloaded"}})
    result = grade_one(make(max_retries=2))
    assert len(server.requests) == 3
    assert result.outcome == "error"
    assert result.error == (
        f"JudgeHTTPError: the judge at {server.openai_url}/chat/completions answered HTTP "
        "503: 'overloaded' (after 3 attempts); the server is failing: try again later or "
        "raise max_retries"
    )
    stats = statistics()
    assert stats is not None
    assert (stats.calls, stats.retries, stats.errors) == (1, 2, 1)


def test_a_401_is_an_error_at_once(server: JudgeServer, make: Make, monkeypatch: object) -> None:
    server.default = lambda request: Answer(401, {"error": {"message": "invalid x-api-key"}})
    result = grade_one(make(model="claude-test"))
    assert len(server.requests) == 1
    assert result.outcome == "error"
    assert result.error == (
        f"JudgeHTTPError: the judge at {server.url}/v1/messages answered HTTP 401: "
        "'invalid x-api-key'; check the API key in $ANTHROPIC_API_KEY"
    )
    assert result.details == {"model": "claude-test", "provider": "anthropic"}


def test_a_server_that_never_answers_is_a_timeout_error_in_time(
    server: JudgeServer, make: Make
) -> None:
    server.default = lambda request: Answer(hang=True)
    started = time.monotonic()
    result = grade_one(make(timeout=1))
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 2.0
    assert result.outcome == "error"
    assert result.error == (
        f"JudgeTimeoutError: no reply from the judge at {server.openai_url}/chat/completions "
        "within the grader's timeout of 1s; raise timeout, or check the server"
    )


def test_a_request_that_times_out_is_retried(server: JudgeServer, make: Make) -> None:
    server.script(Answer(hang=True))
    started = time.monotonic()
    result = grade_one(make(timeout=5, request_timeout=0.3))
    assert result.outcome == "pass"
    assert len(server.requests) == 2
    assert time.monotonic() - started < 2.0


def test_a_server_that_is_not_there_is_a_connection_error(make: Make) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = grade_one(make(base_url=f"http://127.0.0.1:{port}/v1", max_retries=1))
    assert result.outcome == "error"
    assert result.error is not None
    assert result.error.startswith(
        f"JudgeConnectionError: cannot reach the judge at http://127.0.0.1:{port}/v1/chat/"
        "completions (ClientConnectorError: Cannot connect to host "
    )
    assert result.error.endswith(
        "(after 2 attempts); check base_url and that the server is running"
    )
    stats = statistics()
    assert stats is not None
    assert (stats.retries, stats.errors) == (1, 1)


def test_a_reply_that_is_not_json_is_an_error(server: JudgeServer, make: Make) -> None:
    server.script(Answer(200, "<html>a proxy page</html>"))
    result = grade_one(make())
    assert len(server.requests) == 1
    assert result.error == (
        f"JudgeReplyError: the judge at {server.openai_url}/chat/completions answered HTTP "
        "200 with a body that is not JSON: '<html>a proxy page</html>'; check that base_url "
        "points at the API (with its /v1 for an OpenAI-compatible server)"
    )


def test_a_retry_after_beyond_the_timeout_gives_up_at_once(server: JudgeServer, make: Make) -> None:
    server.script(Answer(429, {"error": {"message": "slow down"}}, {"retry-after": "120"}))
    started = time.monotonic()
    result = grade_one(make(timeout=5))
    assert time.monotonic() - started < 1.0
    assert result.outcome == "error"
    assert result.error == (
        f"JudgeTimeoutError: the judge at {server.openai_url}/chat/completions answered "
        "HTTP 429: 'slow down'; no time is left for another attempt within the grader's "
        "timeout of 5s; raise timeout, or lower --judge-concurrency: the server is rate "
        "limiting"
    )


def test_tokens_and_calls_are_counted(server: JudgeServer, make: Make) -> None:
    grader = make()
    for _ in range(3):
        grade_one(grader)
    stats = statistics()
    assert stats is not None
    assert stats.to_dict() == {
        "calls": 3,
        "cached": 0,
        "retries": 0,
        "errors": 0,
        "input_tokens": 300,
        "output_tokens": 60,
    }
    assert stats.describe() == (
        "judge: 3 calls made, 0 from cache, 0 retried, 0 failed; 300 tokens in, 60 out"
    )


def test_no_judge_no_statistics() -> None:
    assert statistics() is None


def test_anthropic_requests_carry_the_key_and_version(
    server: JudgeServer, make: Make, monkeypatch: object
) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-1")
    server.script(judged(9))
    grade_one(make(model="claude-opus-4.6", max_tokens=300, temperature=0.2))
    request = server.requests[0]
    assert request.headers["x-api-key"] == "test-key-1"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body["model"] == "claude-opus-4.6"
    assert request.body["max_tokens"] == 300
    assert request.body["temperature"] == 0.2
    assert request.body["messages"][0]["role"] == "user"
    assert "Is the answer correct?" in request.body["system"]


def test_waiting_for_a_judge_slot_counts_against_the_timeout(
    server: JudgeServer, make: Make
) -> None:
    from gradekit import Sample, grade

    use_options(judge_concurrency=1)
    server.script(lambda request: Answer(200, judged(8)(request).body, delay=0.8))
    holder = make(name="holder", timeout=5)
    waiter = make(name="waiter", timeout=0.3)
    held, starved = grade(Sample(output="4"), [holder, waiter])
    assert held.outcome == "pass"
    assert len(server.requests) == 1
    assert starved.error == (
        "JudgeTimeoutError: no free judge slot within the grader's timeout of 0.3s: more judge "
        "calls are waiting than --judge-concurrency lets through; raise timeout or "
        "--judge-concurrency"
    )
