"""The prompt kind's options: what loads, what is refused at load time (with the key at
fault), and that nothing of it (aiohttp above all) is imported before a prompt grader is made."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gradekit
from gradekit import ConfigError

BASE = {"rubric": "Right?", "model": "gpt-test", "base_url": "http://127.0.0.1:9/v1"}


def problems(config: dict[str, object]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        gradekit.create("prompt", "judge", config)
    return [str(problem) for problem in caught.value.problems]


def test_the_hyoka_block_loads_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    path = tmp_path / "suite.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            name: hyoka
            graders:
              - kind: prompt
                name: semantic_correctness
                rubric: "Does the code correctly implement the requested feature?"
                model: claude-opus-4.6
            cases: [{name: a, output: "x"}]
            """
        )
    )
    suite = gradekit.load_suite(path)
    (entry,) = suite.graders
    assert (entry.kind, entry.name) == ("prompt", "semantic_correctness")
    assert entry.grader.judge_provider == "anthropic"  # type: ignore[attr-defined]
    assert entry.threshold is None  # the kind applies its own threshold
    assert entry.timeout == 65.0  # the runner's watchdog stays 5 s behind the kind's timeout


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("claude-opus-4.6", "anthropic"),
        ("Claude-3-haiku", "anthropic"),
        ("gpt-4o", "openai"),
        ("llama3.1:8b", "openai"),
    ],
)
def test_the_provider_follows_the_model(model: str, provider: str) -> None:
    grader = gradekit.create("prompt", "judge", {**BASE, "model": model})
    assert grader.judge_provider == provider  # type: ignore[attr-defined]


def test_an_explicit_provider_wins() -> None:
    grader = gradekit.create("prompt", "judge", {**BASE, "model": "claude-x", "provider": "openai"})
    assert grader.judge_provider == "openai"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {"model": "m", "base_url": "http://h"},
            "$.rubric: this option is required: give the judge a rubric (rubric: "
            '"Is the answer correct?") or a list of criteria',
        ),
        ({"rubric": "r", "base_url": "http://h"}, "$.model: this option is required"),
        (
            {**BASE, "rubrik": "x"},
            "$.rubrik: unknown option 'rubrik' for kind 'prompt' (did you mean 'rubric'?)",
        ),
        (
            {**BASE, "provider": "google"},
            "$.provider: expected one of 'openai', 'anthropic', got 'google'",
        ),
        (
            {**BASE, "scoring": "logprobs", "model": "claude-x"},
            "$.scoring: Anthropic's messages API returns no logprobs; use scoring: text, or an "
            "OpenAI-compatible server (provider: openai)",
        ),
        (
            {**BASE, "samples": 2, "aggregate": "majority"},
            "$.samples: aggregate: majority needs an odd number of samples (no ties), got 2",
        ),
        (
            {**BASE, "aggregate": "mode"},
            "$.aggregate: expected one of 'mean', 'median', 'majority', got 'mode'",
        ),
        (
            {**BASE, "include": ["output", "screenshots"]},
            "$.include[1]: expected one of 'input', 'output', 'expected', 'tool_calls', "
            "'messages', 'files', got 'screenshots'",
        ),
        ({**BASE, "include": []}, "$.include: give the judge something to see, such as [output]"),
        ({**BASE, "include": ["output", "output"]}, "$.include: each part may be listed once"),
        ({**BASE, "max_score": 0}, "$.max_score: must be >= 1, got 0"),
        ({**BASE, "threshold": 1.5}, "$.threshold: must be between 0 and 1, got 1.5"),
        ({**BASE, "timeout": 0}, "$.timeout: must be > 0, got 0.0"),
        ({**BASE, "samples": "three"}, "$.samples: expected a whole number, got 'three'"),
        ({**BASE, "rubric": "  "}, "$.rubric: must not be empty"),
    ],
)
def test_bad_options_are_refused_at_load(config: dict[str, object], expected: str) -> None:
    assert problems(config) == [expected]


def test_criteria_are_checked() -> None:
    two = [{"name": "a", "description": "A?"}, {"name": "a", "description": "B?"}]
    assert problems({**BASE, "rubric": None, "criteria": two}) == [
        "$.criteria: criterion names must differ; 'a' is repeated"
    ]
    zero = [{"name": "a", "description": "A?", "weight": 0}]
    assert problems({**BASE, "criteria": zero}) == [
        "$.criteria: give at least one criterion a weight above 0"
    ]
    assert problems({**BASE, "criteria": [{"name": "a"}]}) == [
        "$.criteria[0].description: this option is required"
    ]
    assert problems({**BASE, "criteria": [{"name": "a", "description": "A?", "weight": -1}]}) == [
        "$.criteria[0].weight: must be >= 0, got -1.0"
    ]


def test_a_key_is_needed_without_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    config = {"rubric": "Right?", "model": "gpt-4o"}
    assert problems(config) == [
        "$.api_key_env: the environment variable OPENAI_API_KEY is not set: the openai API "
        "needs a key; set OPENAI_API_KEY, name another variable with api_key_env, or point "
        "base_url at a server that needs none"
    ]
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    gradekit.create("prompt", "judge", config)
    # A variable named on purpose must be set, even with a base_url.
    named = {**BASE, "api_key_env": "MY_JUDGE_KEY"}
    monkeypatch.delenv("MY_JUDGE_KEY", raising=False)
    assert problems(named)[0].startswith("$.api_key_env: the environment variable MY_JUDGE_KEY")


def test_the_base_url_environment_variable_is_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    grader = gradekit.create("prompt", "judge", {"rubric": "Right?", "model": "claude-x"})
    assert grader.connection.url == "http://127.0.0.1:9/v1/messages"


@pytest.mark.parametrize(
    ("model", "base_url", "url"),
    [
        ("gpt-x", "http://h:1/v1", "http://h:1/v1/chat/completions"),
        ("gpt-x", "http://h:1/v1/", "http://h:1/v1/chat/completions"),
        ("claude-x", "http://h:1", "http://h:1/v1/messages"),
        ("claude-x", "http://h:1/v1", "http://h:1/v1/messages"),
    ],
)
def test_where_calls_go(model: str, base_url: str, url: str) -> None:
    grader = gradekit.create("prompt", "judge", {**BASE, "model": model, "base_url": base_url})
    assert grader.connection.url == url


def test_a_grader_survives_pickling_without_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-pickled")
    grader = gradekit.create("prompt", "judge", {"rubric": "Right?", "model": "gpt-4o"})
    data = pickle.dumps(grader)
    assert b"sk-never-pickled" not in data
    assert "sk-never-pickled" not in repr(grader)
    assert pickle.loads(data) == grader


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )


def test_aiohttp_is_imported_only_when_a_prompt_grader_is_made() -> None:
    done = run_python(
        """
        import sys, gradekit
        gradekit.create("equality")
        gradekit.kinds()
        import gradekit.graders.prompt.kind
        assert "aiohttp" not in sys.modules, "too early"
        gradekit.create("prompt", "j", {"rubric": "r", "model": "m", "base_url": "http://h"})
        assert "aiohttp" in sys.modules
        print("ok")
        """
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_without_aiohttp_the_error_says_what_to_install() -> None:
    done = run_python(
        """
        import sys
        sys.modules["aiohttp"] = None  # as if it were not installed
        import gradekit
        try:
            gradekit.create("prompt", "j", {"rubric": "r", "model": "m", "base_url": "http://h"})
        except gradekit.ConfigError as error:
            print(error.problems[0])
        """
    )
    assert done.stdout.strip() == (
        "$.kind: the prompt kind needs the aiohttp library; install it with pip install "
        "'gradekit[llm]'"
    ), done.stderr


def test_the_suite_schema_describes_the_kind() -> None:
    from gradekit.registry.registry import default_registry
    from gradekit.suite.schema import suite_schema

    schema = suite_schema(default_registry)
    text = str(schema)
    assert "'const': 'prompt'" in text
    assert "'rubric'" in text
    assert "'criteria'" in text
