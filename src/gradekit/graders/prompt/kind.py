"""The `prompt` kind: a language model judges the output against a rubric (LLM-as-judge).

The judge is any OpenAI-compatible chat completions server (OpenAI, vLLM, Ollama, LM Studio,
LiteLLM...) or Anthropic's messages API, asked for `{"reasoning": ..., "score": 0..max_score}`.
The HTTP client is aiohttp (`pip install 'gradekit[llm]'`), imported when a prompt grader is
created, never by `import gradekit` or by listing kinds.

`Prompt` holds the options and their checks, and a grade: build the prompt (`text`), ask the
judge `samples` times (`grade.ask`, within the run's state: `shared.judge_run`), read each
reply (`reply`), and combine the judgements into one result (`grade.judged_result`).

Imports the core and every module of this package; `client` (aiohttp) when a grader is made.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import attrs

from gradekit.core.context import current_suite_dir
from gradekit.core.errors import JudgeError, JudgeReplyError, OptionError
from gradekit.core.types import GradeResult, Sample, error_text
from gradekit.graders.prompt.providers import (
    BASE_URL_ENV,
    DEFAULT_BASE_URLS,
    DEFAULT_KEY_ENV,
    JudgeRequest,
    endpoint,
)
from gradekit.graders.prompt.reply import read_judgement
from gradekit.graders.prompt.shared import JudgeRun, ReplyCache, judge_run
from gradekit.graders.prompt.text import (
    FILES_FOR_OUTPUT,
    Criterion,
    FileLimits,
    Includable,
    at_least,
    build_prompt,
    files_for_output,
    non_empty,
    reply_schema,
    sections,
)
from gradekit.graders.results import rebuilt

if TYPE_CHECKING:
    from gradekit.graders.prompt.grade import SampleOutcome

__all__ = ["Prompt"]


def _positive(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not value > 0:
        raise OptionError(attribute.name, f"must be > 0, got {value!r}")


def _fraction(instance: Any, attribute: attrs.Attribute[Any], value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise OptionError(attribute.name, f"must be between 0 and 1, got {value!r}")


def _help(text: str) -> dict[str, str]:
    return {"help": text}


@attrs.frozen(kw_only=True)
class Prompt:
    """Asks a judge model to score the output from 0 to `max_score` against `rubric` (or each
    of `criteria`); passes when the normalised score is >= `threshold`.

    A reply without a usable score, a server error or no reply in time is an error result,
    never a fail. See docs/judge.md.
    """

    kind: ClassVar[str] = "prompt"
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {
            "model": "judge",
            "base_url": "http://127.0.0.1:9",
            "rubric": "Correct?",
            "max_retries": 0,
        },
    )

    name: str = "prompt"
    model: str = attrs.field(validator=non_empty, metadata=_help("The judge model."))
    rubric: str | None = attrs.field(
        default=None, validator=non_empty, metadata=_help("What the judge checks.")
    )
    criteria: tuple[Criterion, ...] | None = attrs.field(
        default=None, metadata=_help("Named criteria, each scored on its own.")
    )
    provider: Literal["openai", "anthropic"] | None = attrs.field(
        default=None, metadata=_help("Default: anthropic for claude* models, else openai.")
    )
    base_url: str | None = attrs.field(
        default=None,
        validator=non_empty,
        metadata=_help("An OpenAI-compatible or Anthropic server."),
    )
    api_key_env: str | None = attrs.field(
        default=None, validator=non_empty, metadata=_help("Environment variable with the API key.")
    )
    max_score: int = attrs.field(default=10, validator=at_least(1))
    """The top of the scale the judge scores on (a whole number >= 1)."""
    threshold: float = attrs.field(default=0.5, validator=_fraction)
    temperature: float = attrs.field(default=0.0, validator=at_least(0))
    """The judge's sampling temperature."""
    max_tokens: int | None = attrs.field(default=None, validator=at_least(1))
    """The judge's reply length limit (default: none; Anthropic: 1024)."""
    timeout: float = attrs.field(
        default=60.0, validator=_positive, metadata=_help("Seconds for the whole grade.")
    )
    request_timeout: float | None = attrs.field(
        default=None, validator=_positive, metadata=_help("Seconds for one HTTP attempt.")
    )
    max_retries: int = attrs.field(default=3, validator=at_least(0))
    """Attempts after the first, for 429, 5xx, timeouts and lost connections."""
    retry_base_delay: float = attrs.field(default=1.0, validator=at_least(0))
    """Seconds before the first retry; doubled at each retry (at most 30)."""
    samples: int = attrs.field(default=1, validator=at_least(1))
    """How many times the judge is asked about the same output."""
    aggregate: Literal["mean", "median", "majority"] = "mean"
    """How samples combine: mean, median or majority."""
    scoring: Literal["text", "logprobs"] = "text"
    """text: the score the judge wrote; logprobs: the probability-weighted score."""
    include: tuple[Includable, ...] = ("input", "output", "expected")
    """What the judge sees: input, output, expected, tool_calls, messages, files."""
    max_file_bytes: int = attrs.field(default=20_000, validator=at_least(1))
    """With `files`: bytes of one file shown."""
    max_files_bytes: int = attrs.field(default=100_000, validator=at_least(1))
    """With `files`: bytes of all files together."""

    suite_dir: Path | None = attrs.field(
        init=False, factory=current_suite_dir, repr=False, eq=False
    )
    """The folder of the suite file the grader was loaded from (its cache goes beside it)."""
    connection: Any = attrs.field(init=False, repr=False, eq=False)
    """Where and how its calls go (a `client.Connection`, made when the grader is created,
    once aiohttp is known to be installed; `Any` keeps aiohttp's module out of this one)."""

    def __attrs_post_init__(self) -> None:
        _check_options(self)
        try:
            import aiohttp  # noqa: F401
        except ImportError:
            raise OptionError(
                "kind",
                "the prompt kind needs the aiohttp library; install it with "
                "pip install 'gradekit[llm]'",
            ) from None
        from gradekit.graders.prompt.client import Connection, RetryPolicy, UnusableKey, api_key

        provider = self.judge_provider
        base_url = self.base_url or os.environ.get(BASE_URL_ENV[provider]) or None
        key_env = self.api_key_env or DEFAULT_KEY_ENV[provider]
        key_required = self.api_key_env is not None or base_url is None
        try:
            key = api_key(key_env)
        except UnusableKey as error:
            raise OptionError("api_key_env", str(error)) from None
        if key_required and key is None:
            raise OptionError(
                "api_key_env",
                f"the environment variable {key_env} is not set: the {provider} API needs a "
                f"key; set {key_env}, name another variable with api_key_env, or point "
                "base_url at a server that needs none",
            )
        if base_url is not None:
            base_url = base_url.strip()
            _check_base_url(base_url, None if self.base_url else BASE_URL_ENV[provider])
        base_url = base_url or DEFAULT_BASE_URLS[provider]
        policy = RetryPolicy(
            max_retries=self.max_retries,
            base_delay=self.retry_base_delay,
            request_timeout=self.request_timeout,
            timeout=self.timeout,
        )
        connection = Connection(
            endpoint(provider, base_url), base_url, key_env, key_required, policy
        )
        object.__setattr__(self, "connection", connection)  # attrs' way for a derived field

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its options (a child process builds it again, without the suite's
        cache: see docs/judge.md)."""
        return rebuilt(self)

    @property
    def judge_provider(self) -> Literal["openai", "anthropic"]:
        """`provider`, or the one the model's name implies: `claude*` is anthropic."""
        if self.provider is not None:
            return self.provider
        return "anthropic" if self.model.strip().lower().startswith("claude") else "openai"

    async def agrade(self, sample: Sample) -> GradeResult:
        """Ask the judge (`samples` times) and grade by its score; never raises for the
        judge's fault: every failure is an error result naming its cause."""
        from gradekit.graders.prompt.grade import judged_result

        deadline = time.monotonic() + self.timeout
        limits = FileLimits(self.max_file_bytes, self.max_files_bytes)
        try:
            shown = sections(sample, self.include, limits)
        except ValueError as error:
            return GradeResult.of_error(self.kind, self.name, f"ValueError: {error}")
        criteria = self.criteria or ()
        prompt = build_prompt(
            rubric=self.rubric, criteria=criteria, max_score=self.max_score, sections=shown
        )
        requests = [
            JudgeRequest(
                provider=self.judge_provider,
                base_url=self.connection.base_url,
                model=self.model,
                system=prompt.system,
                user=prompt.user,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                schema=reply_schema(criteria),
                logprobs=self.scoring == "logprobs",
                sample=index,
            )
            for index in range(self.samples)
        ]
        run = judge_run()
        cache = run.cache(self.suite_dir)
        outcomes = await asyncio.gather(
            *(self._one(request, run, cache, deadline) for request in requests),
            return_exceptions=True,
        )
        judged: list[SampleOutcome] = []
        for outcome in outcomes:
            if isinstance(outcome, JudgeError):
                details = {"model": self.model, "provider": self.judge_provider}
                return GradeResult.of_error(self.kind, self.name, error_text(outcome), "", details)
            if isinstance(outcome, BaseException):
                raise outcome
            judged.append(outcome)
        result = judged_result(self, criteria, judged)
        if files_for_output(sample, self.include) and result.details is not None:
            details = {**result.details, "shown": FILES_FOR_OUTPUT}
            return attrs.evolve(result, details=details)
        return result

    async def _one(
        self, request: JudgeRequest, run: JudgeRun, cache: ReplyCache | None, deadline: float
    ) -> SampleOutcome:
        """One sample's judgement (a JudgeError when there is none)."""
        from gradekit.graders.prompt.grade import SampleOutcome, ask

        asked = await ask(request, self.connection, run, cache, deadline)
        reply = asked.reply
        text = reply.text
        if request.logprobs:
            if not reply.tokens:
                run.count(errors=1)
                raise JudgeReplyError(
                    f"the judge at {self.connection.url} returned no logprobs; scoring: "
                    "logprobs needs a server that returns them (OpenAI, vLLM, llama.cpp), or use "
                    "scoring: text"
                )
            text = "".join(token.text for token in reply.tokens)
        try:
            judgement = read_judgement(
                text,
                max_score=self.max_score,
                criteria=[c.name for c in self.criteria or ()],
                tokens=reply.tokens if request.logprobs else None,
            )
        except JudgeReplyError:
            if not asked.cached:
                run.count(errors=1)
            raise
        if cache is not None and not asked.cached:
            cache.put(asked.key, reply, provider=request.provider, model=request.model)
        return SampleOutcome(judgement, asked.cached, reply.input_tokens, reply.output_tokens)

    def grade(self, sample: Sample) -> GradeResult:
        """`agrade` from sync code."""
        from gradekit.core.coroutines import run_sync

        return run_sync(lambda: self.agrade(sample))


def _check_base_url(url: str, from_env: str | None) -> None:
    """An http:// or https:// URL with a host: anything else fails on every call."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.hostname and parts.port != 0:
            return
    except ValueError:  # `http://[::1` (an unclosed bracket), `http://host:abc` (the port)
        pass
    where = f"${from_env} " if from_env else ""
    raise OptionError(
        "base_url",
        f"{where}must be an http:// or https:// URL with a host, got {url!r}; write it as "
        "http://HOST:PORT/v1 (e.g. http://localhost:11434/v1)",
    )


def _check_options(grader: Prompt) -> None:
    """The rules between options (each option's own rule is its validator)."""
    if grader.rubric is None and not grader.criteria:
        raise OptionError(
            "rubric",
            'this option is required: give the judge a rubric (rubric: "Is the answer '
            'correct?") or a list of criteria',
        )
    criteria = grader.criteria or ()
    names = [criterion.name for criterion in criteria]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise OptionError("criteria", f"criterion names must differ; {repeated[0]!r} is repeated")
    if criteria and not any(criterion.weight > 0 for criterion in criteria):
        raise OptionError("criteria", "give at least one criterion a weight above 0")
    if grader.aggregate == "majority" and grader.samples % 2 == 0:
        raise OptionError(
            "samples",
            f"aggregate: majority needs an odd number of samples (no ties), got {grader.samples}",
        )
    if grader.scoring == "logprobs" and grader.judge_provider == "anthropic":
        raise OptionError(
            "scoring",
            "Anthropic's messages API returns no logprobs; use scoring: text, or an "
            "OpenAI-compatible server (provider: openai)",
        )
    if not grader.include:
        raise OptionError("include", "give the judge something to see, such as [output]")
    if len(set(grader.include)) != len(grader.include):
        raise OptionError("include", "each part may be listed once")
