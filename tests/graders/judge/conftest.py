"""Fixtures for the prompt kind's tests: a real judge server on 127.0.0.1, a fresh run
context (judge options, limit and statistics) for every test, and no API key or base URL
from the environment."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from judge_server import JudgeServer
from judge_support import Make

import gradekit
from gradekit.core.context import RunContext

ENVIRONMENT = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


@pytest.fixture(autouse=True)
def fresh_judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A run context of the test's own (default judge options, zero statistics); the
    environment's keys left out."""
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    with RunContext():
        yield


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


@pytest.fixture
def make(server: JudgeServer) -> Make:
    """`make(**options)`: a prompt grader judged by `server` (OpenAI format unless the model
    is a claude), with tiny retry delays."""

    def create(**options: Any) -> Any:
        config: dict[str, Any] = {
            "rubric": "Is the answer correct?",
            "model": "gpt-test",
            "retry_base_delay": 0.01,
        }
        config.update(options)
        if "base_url" not in config:
            anthropic = str(config["model"]).startswith("claude")
            config["base_url"] = server.url if anthropic else server.openai_url
        return gradekit.create("prompt", config.pop("name", "judge"), config)

    return create
