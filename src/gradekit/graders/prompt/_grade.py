"""A prompt grader's grade: build the prompt, ask the judge `samples` times, read each reply,
and combine the judgements into one result."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

from gradekit import GradeResult, Sample
from gradekit._types import error_text
from gradekit.graders.prompt import shared as _budget
from gradekit.graders.prompt._cache import ReplyCache
from gradekit.graders.prompt._calls import ask
from gradekit.graders.prompt._errors import JudgeError, JudgeReplyError
from gradekit.graders.prompt.grade import SampleOutcome, judged_result
from gradekit.graders.prompt.text import Criterion, build_prompt, reply_schema
from gradekit.graders.prompt.providers import JudgeRequest
from gradekit.graders.prompt.reply import read_judgement
from gradekit.graders.prompt._sections import FileLimits, sections

if TYPE_CHECKING:
    from gradekit.graders.prompt.kind import Prompt

__all__ = ["CACHE_FOLDER", "judge"]

CACHE_FOLDER = ".gradekit-cache"
"""The cache's folder beside the suite file, unless `--cache-dir` names another."""


async def judge(grader: Prompt, sample: Sample) -> GradeResult:
    """Grade `sample` with `grader`; every failure is an error result naming its cause."""
    deadline = time.monotonic() + grader.timeout
    limits = FileLimits(grader.max_file_bytes, grader.max_files_bytes)
    try:
        shown = sections(sample, grader.include, limits)
    except ValueError as error:
        return GradeResult.of_error(grader.kind, grader.name, f"ValueError: {error}")
    criteria = tuple(Criterion(c.name, c.description, c.weight) for c in grader.criteria or ())
    prompt = build_prompt(
        rubric=grader.rubric, criteria=criteria, max_score=grader.max_score, sections=shown
    )
    requests = [
        JudgeRequest(
            provider=grader.judge_provider,
            base_url=grader._base_url,
            model=grader.model,
            system=prompt.system,
            user=prompt.user,
            temperature=grader.temperature,
            max_tokens=grader.max_tokens,
            schema=reply_schema(criteria),
            logprobs=grader.scoring == "logprobs",
            sample=index,
        )
        for index in range(grader.samples)
    ]
    cache = _cache(grader)
    outcomes = await asyncio.gather(
        *(_one(grader, request, cache, deadline) for request in requests),
        return_exceptions=True,
    )
    judged: list[SampleOutcome] = []
    for outcome in outcomes:
        if isinstance(outcome, JudgeError):
            details = {"model": grader.model, "provider": grader.judge_provider}
            return GradeResult.of_error(grader.kind, grader.name, error_text(outcome), "", details)
        if isinstance(outcome, BaseException):
            raise outcome
        judged.append(outcome)
    return judged_result(grader, criteria, judged)


async def _one(
    grader: Prompt, request: JudgeRequest, cache: ReplyCache | None, deadline: float
) -> SampleOutcome:
    asked = await ask(request, grader._connection, cache, deadline)
    reply = asked.reply
    text = reply.text
    if request.logprobs:
        if not reply.tokens:
            _budget.count(errors=1)
            raise JudgeReplyError(
                f"the judge at {grader._connection.url} returned no logprobs; scoring: "
                "logprobs needs a server that returns them (OpenAI, vLLM, llama.cpp), or use "
                "scoring: text"
            )
        text = "".join(token.text for token in reply.tokens)
    try:
        judgement = read_judgement(
            text,
            max_score=grader.max_score,
            criteria=[c.name for c in grader.criteria or ()],
            tokens=reply.tokens if request.logprobs else None,
        )
    except JudgeReplyError:
        if not asked.cached:
            _budget.count(errors=1)
        raise
    if cache is not None and not asked.cached:
        cache.put(asked.key, reply, provider=request.provider, model=request.model)
    return SampleOutcome(judgement, asked.cached, reply.input_tokens, reply.output_tokens)


def _cache(grader: Prompt) -> ReplyCache | None:
    settings = _budget.current_settings()
    if not settings.cache:
        return None
    if settings.cache_dir is not None:
        return ReplyCache(settings.cache_dir)
    suite_dir: Path | None = grader._suite_dir
    return None if suite_dir is None else ReplyCache(suite_dir / CACHE_FOLDER)
