"""The judge's transport limits: `timeout` bounds the whole call however the server sends,
a URL or reply that can never work is an error at once (not retried, never raised), and
`--judge-concurrency` is what the connection pool allows."""

from __future__ import annotations

import asyncio
import time

import pytest
from judge_server import Answer, JudgeServer, judged
from judge_support import Make, grade_one, statistics, use_options

import gradekit
from gradekit import ConfigError


def test_a_reply_sent_a_byte_at_a_time_is_cut_at_the_timeout(
    server: JudgeServer, make: Make
) -> None:
    # Every read is quick, the whole reply would take 30 s: per-read timeouts never fire.
    server.script(lambda request: Answer(200, judged(9)(request).body, trickle=0.1))
    grader = make(timeout=1, max_retries=0)  # made first: its imports are not the call's time
    started = time.monotonic()
    result = grade_one(grader)
    elapsed = time.monotonic() - started
    assert elapsed < 2.5
    assert result.outcome == "error"
    assert result.error == (
        f"JudgeTimeoutError: no reply from the judge at {server.openai_url}/chat/completions "
        "within the grader's timeout of 1s; raise request_timeout or timeout, or check the server"
    )


def test_request_timeout_bounds_a_trickling_attempt_too(server: JudgeServer, make: Make) -> None:
    server.script(lambda request: Answer(200, judged(9)(request).body, trickle=0.1))
    grader = make(timeout=10, request_timeout=0.5)  # the second attempt answers
    started = time.monotonic()
    result = grade_one(grader)
    assert time.monotonic() - started < 3
    assert (result.outcome, result.score) == ("pass", 0.8)
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    "url", ["localhost:11434/v1", "ftp://example.com/v1", "http://", "http://localhost:abc/v1"]
)
def test_a_base_url_that_is_not_http_is_refused_at_load(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        gradekit.create("prompt", "judge", {"rubric": "Right?", "model": "m", "base_url": url})
    assert [str(problem) for problem in caught.value.problems] == [
        f"$.base_url: must be an http:// or https:// URL with a host, got {url!r}; "
        "write it as http://HOST:PORT/v1 (e.g. http://localhost:11434/v1)"
    ]


def test_a_base_url_from_the_environment_is_checked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:8000/v1")
    with pytest.raises(ConfigError) as caught:
        gradekit.create("prompt", "judge", {"rubric": "Right?", "model": "m"})
    (problem,) = caught.value.problems
    assert str(problem).startswith(
        "$.base_url: $OPENAI_BASE_URL must be an http:// or https:// URL with a host, "
        "got 'localhost:8000/v1'"
    )


def test_a_reply_that_cannot_be_decoded_is_an_error_result_not_a_raise(
    server: JudgeServer, make: Make
) -> None:
    server.default = lambda request: Answer(
        200, "this is not gzip", headers={"content-encoding": "gzip"}
    )
    result = make().grade(gradekit.Sample(output="4"))  # called directly: no runner to catch
    assert result.outcome == "error"
    assert result.error is not None
    assert result.error.startswith(
        f"JudgeReplyError: the judge at {server.openai_url}/chat/completions sent a reply "
        "that cannot be read (ClientPayloadError: 400, message: Can not decode "
        "content-encoding: gzip)"
    )
    assert len(server.requests) == 1  # the same server would send the same body again
    stats = statistics()
    assert stats is not None
    assert (stats.calls, stats.errors) == (1, 1)


def test_concurrency_above_a_hundred_is_what_is_in_flight(server: JudgeServer, make: Make) -> None:
    use_options(judge_concurrency=150)
    # Long enough for all 150 to connect on a busy machine.
    server.default = lambda request: Answer(200, judged(8)(request).body, delay=3.0)
    grader = make(timeout=30)

    async def all_of_them() -> list[gradekit.GradeResult]:
        sample = gradekit.Sample(output="4")
        return await asyncio.gather(*(grader.agrade(sample) for _ in range(150)))

    results = asyncio.run(all_of_them())
    assert {result.outcome for result in results} == {"pass"}
    assert server.max_in_flight == 150


def test_a_base_url_with_a_newline_from_the_environment_is_used_without_it(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url + "\n")
    grader = gradekit.create("prompt", "judge", {"rubric": "Right?", "model": "gpt-test"})
    assert grade_one(grader).outcome == "pass"


def test_a_proxy_named_in_the_environment_carries_the_calls(
    server: JudgeServer, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test server is the proxy: a proxied request names the whole target URL in its path.
    server.default = judged(9)
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    result = grade_one(make(base_url="http://judge.example:8000/v1"))
    assert (result.outcome, result.score) == ("pass", 0.9)
    assert [request.path for request in server.requests] == [
        "http://judge.example:8000/v1/chat/completions"
    ]


def test_no_proxy_sends_the_calls_straight_to_the_judge(
    server: JudgeServer, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.default = judged(9)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nobody listens there
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    result = grade_one(make())
    assert (result.outcome, result.score) == ("pass", 0.9)
    assert [request.path for request in server.requests] == ["/v1/chat/completions"]
