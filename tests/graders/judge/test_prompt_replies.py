"""What the judge answers, and what the grade makes of it: plain JSON, a fenced block, JSON
in prose, no JSON (an error, never a fail), scores out of range (clamped), criteria, and
structured output with its fall-back to plain text."""

from __future__ import annotations

import json

import pytest
from judge_server import Answer, JudgeServer, judged, text
from judge_support import Make, grade_one

FORMATS = ["gpt-test", "claude-test"]


@pytest.mark.parametrize("model", FORMATS)
def test_a_plain_json_reply_gives_the_normalised_score(
    server: JudgeServer, make: Make, model: str
) -> None:
    server.script(judged(7, "mostly right"))
    result = grade_one(make(model=model, name="semantic"))
    assert (result.outcome, result.score) == ("pass", 0.7)
    assert result.message == "judge scored 7/10 (0.7, threshold 0.5): mostly right"
    details = result.details
    assert details is not None
    assert details["model"] == model
    assert details["provider"] == ("anthropic" if model.startswith("claude") else "openai")
    assert details["raw_score"] == 7
    assert details["reasoning"] == "mostly right"
    assert details["usage"] == {"input_tokens": 100, "output_tokens": 20}
    expected_path = "/v1/messages" if model.startswith("claude") else "/v1/chat/completions"
    assert [request.path for request in server.requests] == [expected_path]


@pytest.mark.parametrize("model", FORMATS)
def test_a_fenced_block_is_read(server: JudgeServer, make: Make, model: str) -> None:
    server.script(text('My verdict:\n```json\n{"reasoning": "fine", "score": 9}\n```\n'))
    result = grade_one(make(model=model))
    assert (result.outcome, result.score) == ("pass", 0.9)


@pytest.mark.parametrize("model", FORMATS)
def test_json_inside_prose_is_read_and_the_last_object_wins(
    server: JudgeServer, make: Make, model: str
) -> None:
    reply = (
        'At first I thought {"reasoning": "draft", "score": 9} but on reflection the answer '
        'misses a case, so {"reasoning": "misses the empty list", "score": 3}. Done.'
    )
    server.script(text(reply))
    result = grade_one(make(model=model))
    assert (result.outcome, result.score) == ("fail", 0.3)
    assert result.details is not None
    assert result.details["reasoning"] == "misses the empty list"


@pytest.mark.parametrize("model", FORMATS)
def test_a_reply_without_json_is_an_error_not_a_fail(
    server: JudgeServer, make: Make, model: str
) -> None:
    server.script(text("I would give it an eight out of ten."))
    result = grade_one(make(model=model))
    assert result.outcome == "error"
    assert result.error == (
        'JudgeReplyError: the judge\'s reply holds no JSON object with a "score": '
        "'I would give it an eight out of ten.'; a reply without a score cannot be graded "
        "(try another model, or a clearer rubric)"
    )


@pytest.mark.parametrize(
    ("score", "outcome", "normalised", "given"),
    [(12, "pass", 1.0, 12.0), (-3, "fail", 0.0, -3.0), ("6", "pass", 0.6, None)],
)
def test_scores_are_clamped_into_the_scale(
    server: JudgeServer,
    make: Make,
    *,
    score: object,
    outcome: str,
    normalised: float,
    given: object,
) -> None:
    server.script(judged(score))
    result = grade_one(make())
    assert (result.outcome, result.score) == (outcome, normalised)
    assert result.details is not None
    assert result.details.get("given_score") == given
    if given is not None:
        assert f"it wrote {given:g}, outside 0..10" in result.message


@pytest.mark.parametrize("score", ["high", None, True, "NaN"])
def test_a_score_that_is_not_a_number_is_an_error(
    server: JudgeServer, make: Make, score: object
) -> None:
    reply = '{"reasoning": "x", "score": NaN}' if score == "NaN" else None
    server.script(text(reply) if reply else judged(score))
    result = grade_one(make())
    assert result.outcome == "error"
    assert result.error is not None
    assert result.error.startswith("JudgeReplyError: the judge's score at $.score is not")


@pytest.mark.parametrize(
    ("score", "max_score", "outcome", "normalised"),
    [
        ("4/5", 10, "pass", 0.8),
        ("8/10", 5, "pass", 0.8),
        ("7 / 10", 10, "pass", 0.7),
        ("1/4", 10, "fail", 0.25),
    ],
)
def test_a_fraction_is_read_on_its_own_scale(
    server: JudgeServer, make: Make, *, score: str, max_score: int, outcome: str, normalised: float
) -> None:
    # "4/5" is four fifths whatever max_score is: not 4 on the grader's scale.
    server.script(judged(score))
    result = grade_one(make(max_score=max_score))
    assert (result.outcome, result.score) == (outcome, normalised)  # exact: 57/100 is 0.57
    assert result.details is not None
    assert "given_score" not in result.details


def test_a_fraction_over_zero_is_an_error(server: JudgeServer, make: Make) -> None:
    server.script(judged("3/0"))
    result = grade_one(make())
    assert result.outcome == "error"
    assert result.error == (
        "JudgeReplyError: the judge's score at $.score is a fraction over 0: '3/0'"
    )


def test_max_score_and_threshold_set_the_scale(server: JudgeServer, make: Make) -> None:
    server.script(judged(3), judged(3))
    assert grade_one(make(max_score=5, threshold=0.6)).outcome == "pass"  # 3/5 = 0.6
    assert grade_one(make(max_score=5, threshold=0.7)).outcome == "fail"


@pytest.mark.parametrize("model", FORMATS)
def test_criteria_are_scored_in_one_call_and_reported_one_by_one(
    server: JudgeServer, make: Make, model: str
) -> None:
    reply = {
        "criteria": {
            "correctness": {"reasoning": "right", "score": 8},
            "style": {"reasoning": "terse", "score": 2},
        }
    }
    server.script(text(json.dumps(reply)))
    grader = make(
        model=model,
        rubric=None,
        criteria=[
            {"name": "correctness", "description": "Is it right?", "weight": 3},
            {"name": "style", "description": "Is it clear?"},
        ],
    )
    result = grade_one(grader)
    assert len(server.requests) == 1
    assert result.score == pytest.approx((3 * 0.8 + 0.2) / 4)
    assert result.outcome == "pass"
    assert result.message == "judge scored 0.65 (correctness 8/10, style 2/10; threshold 0.5)"
    assert result.details is not None
    assert [
        (c["name"], c["weight"], c["score"], c["reasoning"]) for c in result.details["criteria"]
    ] == [("correctness", 3.0, 8.0, "right"), ("style", 1.0, 2.0, "terse")]
    prompt = server.requests[0].prompt
    assert "- correctness: Is it right?" in prompt
    assert "- style: Is it clear?" in prompt


def test_a_missing_criterion_is_an_error(server: JudgeServer, make: Make) -> None:
    server.script(text('{"criteria": {"correctness": {"reasoning": "", "score": 8}}}'))
    grader = make(
        rubric=None,
        criteria=[
            {"name": "correctness", "description": "right?"},
            {"name": "style", "description": "clear?"},
        ],
    )
    result = grade_one(grader)
    assert result.error == "JudgeReplyError: the judge's reply scores no criterion 'style'"


def test_structured_output_is_asked_for(server: JudgeServer, make: Make) -> None:
    grade_one(make())
    response_format = server.requests[0].body["response_format"]
    assert response_format["type"] == "json_schema"
    schema = response_format["json_schema"]["schema"]
    assert schema["required"] == ["reasoning", "score"]
    assert list(schema["properties"]) == ["reasoning", "score"]


def test_a_server_that_refuses_structured_output_gets_plain_text(
    server: JudgeServer, make: Make
) -> None:
    def refuse(request):  # vLLM / older servers answer 400 to an unknown response_format
        if "response_format" in request.body:
            return Answer(400, {"error": {"message": "response_format is not supported"}})
        return judged(6)(request)

    server.default = refuse
    grader = make()
    first = grade_one(grader)
    assert (first.outcome, first.score) == ("pass", 0.6)
    assert ["response_format" in r.body for r in server.requests] == [True, False]
    # Remembered: the next call goes straight to plain text.
    grade_one(grader, None)
    assert ["response_format" in r.body for r in server.requests] == [True, False, False]


def test_a_400_without_structured_output_is_reported(server: JudgeServer, make: Make) -> None:
    server.default = lambda request: Answer(400, {"error": {"message": "unknown model"}})
    result = grade_one(make())
    assert len(server.requests) == 2  # with response_format, then without
    assert result.error == (
        f"JudgeHTTPError: the judge at {server.openai_url}/chat/completions answered HTTP "
        "400: 'unknown model'; check the grader's options (model, max_tokens, temperature)"
    )


def test_what_the_judge_sees_follows_include(server: JudgeServer, make: Make) -> None:
    from gradekit import Sample, ToolCall

    sample = Sample(
        input="Add 2 and 2",
        output="4",
        expected="4",
        tool_calls=[ToolCall("calculator", {"expr": "2+2"}, result=4)],
    )
    grade_one(make(include=["output", "tool_calls"]), sample)
    user = server.requests[0].body["messages"][1]["content"]
    assert "<<<BEGIN OUTPUT" in user
    assert '"name": "calculator"' in user
    assert "Add 2 and 2" not in user
    assert "EXPECTED" not in user


def test_grade_works_from_sync_code_and_inside_a_running_loop(
    server: JudgeServer, make: Make
) -> None:
    import asyncio

    from gradekit import Sample

    grader = make()
    assert grader.grade(Sample(output="4")).score == 0.8

    async def inside_a_loop() -> tuple[float, float]:
        blocking = grader.grade(Sample(output="5"))  # a notebook calling the sync method
        awaited = await grader.agrade(Sample(output="6"))
        return blocking.score, awaited.score

    assert asyncio.run(inside_a_loop()) == (0.8, 0.8)
    assert len(server.requests) == 3
