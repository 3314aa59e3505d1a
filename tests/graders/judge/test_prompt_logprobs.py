"""`scoring: logprobs`: the score is the expectation over the judge's probabilities at the
token where it wrote the score (G-Eval), never at a digit of the reasoning; a server that
sends no logprobs is an error, never a silent fall-back to the written score."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from judge_server import JudgeServer, text
from judge_support import Make, grade_one


def tokens_of(reply: str, alternatives: dict[int, dict[str, float]]) -> list[dict[str, Any]]:
    """The reply cut into tokens the way tokenizers cut numbers (each run of digits its own
    token), as OpenAI's `logprobs.content`; token i gets `alternatives[i]` (token ->
    probability) as its top_logprobs."""
    pieces = re.findall(r"\d+|\s?[A-Za-z]+|\s|[^\w\s]+", reply)
    assert "".join(pieces) == reply
    content = []
    for index, piece in enumerate(pieces):
        top = alternatives.get(index, {piece: 1.0})
        content.append(
            {
                "token": piece,
                "logprob": math.log(top.get(piece, 1e-9)),
                "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top.items()],
            }
        )
    return content


def index_of(reply: str, digit: str, occurrence: int) -> int:
    pieces = re.findall(r"\d+|\s?[A-Za-z]+|\s|[^\w\s]+", reply)
    return [i for i, piece in enumerate(pieces) if piece == digit][occurrence]


@pytest.mark.parametrize("score_first", [False, True])
def test_the_score_is_the_expectation_at_the_score_token(
    server: JudgeServer, make: Make, score_first: bool
) -> None:
    reasoning = "7 of the 8 tests pass, so I score it"
    judgement = (
        {"score": 7, "reasoning": reasoning}
        if score_first
        else {"reasoning": reasoning, "score": 7}
    )
    reply = json.dumps(judgement)
    # The reasoning's "7" is sure of itself; the score's "7" is not.
    in_reasoning = index_of(reply, "7", 1 if score_first else 0)
    at_score = index_of(reply, "7", 0 if score_first else 1)
    alternatives = {
        in_reasoning: {"7": 0.99, "1": 0.01},
        at_score: {"7": 0.5, "8": 0.3, "6": 0.1, " seven": 0.1},
    }
    server.script(text(reply, tokens=tokens_of(reply, alternatives)))
    result = grade_one(make(scoring="logprobs"))
    # By hand: the score tokens carry 0.9 of the probability; normalised, 7: 5/9, 8: 3/9,
    # 6: 1/9, so the expected score is (35 + 24 + 6) / 9 = 65 / 9.
    assert result.score == pytest.approx(65 / 9 / 10)
    assert result.outcome == "pass"
    details = result.details
    assert details is not None
    assert details["written_score"] == 7
    assert details["distribution"] == pytest.approx({"6": 1 / 9, "7": 5 / 9, "8": 3 / 9})
    assert details["score_token_mass"] == pytest.approx(0.9)
    body = server.requests[0].body
    assert (body["logprobs"], body["top_logprobs"]) == (True, 20)


def test_a_server_without_logprobs_is_an_error(server: JudgeServer, make: Make) -> None:
    server.script(text('{"reasoning": "fine", "score": 7}'))  # logprobs: null
    result = grade_one(make(scoring="logprobs"))
    assert result.outcome == "error"
    assert result.error == (
        f"JudgeReplyError: the judge at {server.openai_url}/chat/completions returned no "
        "logprobs; scoring: logprobs needs a server that returns them (OpenAI, vLLM, "
        "llama.cpp), or use scoring: text"
    )


def test_a_score_split_across_tokens_is_an_error(server: JudgeServer, make: Make) -> None:
    reply = '{"reasoning": "perfect", "score": 10}'
    content = tokens_of(reply, {})
    position = next(i for i, t in enumerate(content) if t["token"] == "10")
    content[position : position + 1] = [
        {"token": "1", "logprob": 0.0, "top_logprobs": []},
        {"token": "0", "logprob": 0.0, "top_logprobs": []},
    ]
    server.script(text(reply, tokens=content))
    result = grade_one(make(scoring="logprobs"))
    assert result.error == (
        "JudgeReplyError: the score '10' is not one token of its own (the token is '1'); "
        "scoring by logprobs reads one token: use a max_score of 9 or less, or scoring: text"
    )


def test_criteria_each_get_their_expectation(server: JudgeServer, make: Make) -> None:
    reply = json.dumps(
        {"criteria": {"a": {"reasoning": "ok", "score": 4}, "b": {"reasoning": "ok", "score": 2}}}
    )
    alternatives = {
        index_of(reply, "4", 0): {"4": 0.5, "5": 0.5},
        index_of(reply, "2", 0): {"2": 1.0},
    }
    server.script(text(reply, tokens=tokens_of(reply, alternatives)))
    grader = make(
        scoring="logprobs",
        max_score=5,
        rubric=None,
        criteria=[{"name": "a", "description": "A?"}, {"name": "b", "description": "B?"}],
    )
    result = grade_one(grader)
    assert result.score == pytest.approx((4.5 / 5 + 2 / 5) / 2)
    assert result.details is not None
    first, second = result.details["criteria"]
    assert (first["score"], first["distribution"]) == (4.5, {"4": 0.5, "5": 0.5})
    assert (second["score"], second["distribution"]) == (2.0, {"2": 1.0})


def test_a_character_split_across_tokens_is_rebuilt_from_their_bytes(
    server: JudgeServer, make: Make
) -> None:
    # OpenAI sends a token holding part of a UTF-8 character as escapes (`\xe2\x80`), the
    # real bytes in `bytes`: joined as text, the reply would be JSON no more.
    reply = json.dumps({"reasoning": "good \u2014 ok", "score": 7}, ensure_ascii=False)
    score_at = index_of(reply, "7", 0)
    content = tokens_of(reply, {score_at: {"7": 0.6, "6": 0.4}})
    dash = next(i for i, token in enumerate(content) if "\u2014" in token["token"])
    whole = content[dash]
    assert whole["token"] == "\u2014"
    split = [
        {**whole, "token": "\\xe2\\x80", "bytes": [0xE2, 0x80]},
        {**whole, "token": "\\x94", "bytes": [0x94]},
    ]
    for token in content:
        token.setdefault("bytes", list(token["token"].encode()))
    content[dash : dash + 1] = split
    server.script(text(reply, tokens=content))
    result = grade_one(make(scoring="logprobs"))
    assert result.error is None
    assert result.score == pytest.approx(0.66)
    assert result.details is not None
    assert result.details["reasoning"] == "good \u2014 ok"
