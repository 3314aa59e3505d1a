"""The API key: surrounding whitespace (a key read from a file) is dropped, a key an HTTP
header cannot carry is refused without being shown, and no text a run writes holds the key,
however the server or the transport echoes it; a placeholder key changes no reply."""

from __future__ import annotations

import json

import pytest
from judge_server import Answer, JudgeServer, judged
from judge_support import Make, grade_one

import gradekit
from gradekit import ConfigError

KEY = "sk-proj-TOPSECRET42"


@pytest.mark.parametrize("written", [KEY + "\n", KEY + "\r", f"  {KEY}\t"])
def test_a_key_with_surrounding_whitespace_is_sent_without_it(
    server: JudgeServer, make: Make, monkeypatch: pytest.MonkeyPatch, written: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", written)
    result = grade_one(make())
    assert result.outcome == "pass", result.error
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("sk-proj\nTOPSECRET42", "a control character (U+000A) at character 8"),
        ("sk-proj-TOP\u2011SECRET42", "a non-ASCII character (U+2011) at character 12"),
        ("sk-proj-TOP\x7fSECRET42", "a control character (U+007F) at character 12"),
    ],
)
def test_a_key_a_header_cannot_carry_is_refused_at_load_without_showing_it(
    server: JudgeServer, monkeypatch: pytest.MonkeyPatch, written: str, said: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", written)
    with pytest.raises(ConfigError) as caught:
        gradekit.create("prompt", "j", {"rubric": "Right?", "model": "m", "base_url": server.url})
    assert [str(problem) for problem in caught.value.problems] == [
        f"$.api_key_env: the API key in $OPENAI_API_KEY holds {said}, which an HTTP header "
        "cannot carry; set $OPENAI_API_KEY to the key alone"
    ]
    assert "SECRET" not in str(caught.value)


def test_a_key_spoilt_after_loading_is_an_error_result_and_nothing_is_sent(
    server: JudgeServer, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    grader = make()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj\x1bTOPSECRET42")
    result = grader.grade(gradekit.Sample(output="4"))  # directly: it must not raise
    assert result.outcome == "error"
    assert result.error == (
        "JudgeError: the API key in $OPENAI_API_KEY holds a control character (U+001B) at "
        "character 8, which an HTTP header cannot carry; set $OPENAI_API_KEY to the key alone"
    )
    assert server.requests == []


def test_a_key_the_server_echoes_is_hidden_in_the_message(
    server: JudgeServer, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.script(
        judged(9, f"you sent {KEY}"),
        Answer(401, {"error": {"message": f"bad key {json.dumps(KEY)} for this project"}}),
    )
    echoed = grade_one(make())
    assert echoed.message == "judge scored 9/10 (0.9, threshold 0.5): you sent [redacted]"
    refused = grade_one(make())
    assert refused.error is not None
    assert KEY not in refused.error
    assert 'bad key "[redacted]" for this project' in refused.error


@pytest.mark.parametrize("placeholder", ["null", "9", "none"])
def test_a_placeholder_key_changes_nothing_in_the_reply(
    server: JudgeServer, make: Make, monkeypatch: pytest.MonkeyPatch, placeholder: str
) -> None:
    # The reply holds `null` (its logprobs) and the score 9: a key of those characters, if
    # hidden, would break the reply's JSON or its score.
    monkeypatch.setenv("OPENAI_API_KEY", placeholder)
    server.script(judged(9, "none missing"))
    result = grade_one(make())
    assert (result.outcome, result.score) == ("pass", 0.9)
    assert result.message == "judge scored 9/10 (0.9, threshold 0.5): none missing"


def test_a_placeholder_key_with_a_space_is_sent_as_it_is(
    server: JudgeServer, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "not needed")
    assert grade_one(make()).outcome == "pass"
    assert server.requests[0].headers["authorization"] == "Bearer not needed"


def test_a_key_the_server_escapes_in_its_json_error_is_hidden_too(
    server: JudgeServer, make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-abc/def+ghi&jkl0123"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    # As PHP (`\/`) and Go (`\u0026`) write it: decoded, it is the key again.
    escaped = key.replace("/", "\\/").replace("&", "\\u0026")
    body = '{"error": {"message": "Incorrect API key provided: ' + escaped + '"}}'
    server.script(Answer(401, body))
    result = grade_one(make())
    assert result.error is not None
    assert key not in result.error
    assert "Incorrect API key provided: [redacted]" in result.error
