"""`gradekit run` with the `prompt` kind, as a user runs it: the issue's block pasted as
written, the judge cache across runs, the run-wide judge limit, and the API key kept out of
every report, log and cache file."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_support import Run
from judge_server import Answer, JudgeServer, Received, judged, text

HYOKA = """
    name: hyoka
    graders:
      - kind: prompt
        name: semantic_correctness
        rubric: "Does the code correctly implement the requested feature?"
        model: claude-opus-4.6
    cases:
      - name: verbose-flag
        input: "Add a --verbose flag to the CLI"
        output: "parser.add_argument('--verbose', action='store_true')"
"""

Write = Callable[[str, str], Path]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeServer]:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with JudgeServer() as running:
        yield running


def judge_summary(path: Path) -> object:
    return json.loads(path.read_text())["summary"].get("judge")


def test_the_hyoka_block_grades_as_written(
    gradekit: Run,
    write: Write,
    server: JudgeServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-hyoka")
    suite = write("suite.yaml", HYOKA)
    done = gradekit("run", str(suite), "-o", "report.json")
    assert done.returncode == 0, done.stderr
    (request,) = server.requests
    assert request.path == "/v1/messages"
    assert request.body["model"] == "claude-opus-4.6"
    assert request.headers["x-api-key"] == "test-key-hyoka"
    assert "Does the code correctly implement the requested feature?" in request.body["system"]
    report = json.loads((tmp_path / "report.json").read_text())
    (result,) = report["cases"][0]["turns"][0]["results"]
    assert (result["kind"], result["name"], result["score"]) == (
        "prompt",
        "semantic_correctness",
        0.8,
    )
    assert report["summary"]["judge"] == {
        "calls": 1,
        "cached": 0,
        "retries": 0,
        "errors": 0,
        "input_tokens": 100,
        "output_tokens": 20,
    }
    assert "judge: 1 call made, 0 from cache, 0 retried, 0 failed; 100 tokens in, 20 out" in (
        done.stdout
    )

    again = gradekit("run", str(suite), "-o", "report.json")
    assert again.returncode == 0, again.stderr
    assert len(server.requests) == 1  # served from .gradekit-cache/ beside the suite
    assert judge_summary(tmp_path / "report.json") == {
        "calls": 0,
        "cached": 1,
        "retries": 0,
        "errors": 0,
        "input_tokens": 0,
        "output_tokens": 0,
    }
    assert (tmp_path / ".gradekit-cache" / ".gitignore").exists()

    fresh = gradekit("run", str(suite), "--no-cache", "-o", "report.json")
    assert fresh.returncode == 0, fresh.stderr
    assert len(server.requests) == 2


def test_a_base_url_in_the_suite_needs_no_key(
    gradekit: Run, write: Write, server: JudgeServer, tmp_path: Path
) -> None:
    block = HYOKA.replace(
        "model: claude-opus-4.6", f"model: claude-opus-4.6\n        base_url: {server.url}"
    )
    suite = write("suite.yaml", block)
    done = gradekit("run", str(suite), "--cache-dir", "judge-cache")
    assert done.returncode == 0, done.stderr
    (request,) = server.requests
    assert "x-api-key" not in request.headers
    assert list((tmp_path / "judge-cache").rglob("*.json"))
    assert not (tmp_path / ".gradekit-cache").exists()


def test_without_a_key_or_a_base_url_the_suite_is_invalid(
    gradekit: Run, write: Write, server: JudgeServer
) -> None:
    suite = write("suite.yaml", HYOKA)
    done = gradekit("validate", str(suite))
    assert done.returncode == 2
    assert (
        "api_key_env: the environment variable ANTHROPIC_API_KEY is not set: the anthropic API "
        "needs a key; set ANTHROPIC_API_KEY, name another variable with api_key_env, or point "
        "base_url at a server that needs none"
    ) in done.stderr


def judged_after(seconds: float) -> Callable[[Received], Answer]:
    """The judge's score of 8, answered after `seconds`."""

    def answer(request: Received) -> Answer:
        judged_now = judged(8)(request)
        return Answer(judged_now.status, judged_now.body, delay=seconds)

    return answer


def judged_suite(write: Write, server: JudgeServer, name: str, count: int) -> Path:
    """A suite of `count` cases, each judged by `server`."""
    grader = f'{{kind: prompt, rubric: "Right?", model: gpt-test, base_url: {server.openai_url}}}'
    lines = [f"name: {name}", "graders:", f"  - {grader}", "cases:"]
    lines += [f"  - {{name: c{i}, output: 'answer {i}'}}" for i in range(count)]
    return write("suite.yaml", "\n".join(lines) + "\n")


def test_judge_concurrency_limits_the_whole_run(
    gradekit: Run, write: Write, server: JudgeServer
) -> None:
    server.default = judged_after(0.05)
    suite = judged_suite(write, server, "limited", 12)
    done = gradekit("run", str(suite), "--jobs", "12", "--judge-concurrency", "3")
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 12
    assert server.max_in_flight == 3


@pytest.mark.parametrize(("jobs", "in_flight"), [((), 40), (("--jobs", "4"), 4)])
def test_judge_concurrency_without_jobs_grades_that_many_cases_at_once(
    gradekit: Run, write: Write, server: JudgeServer, jobs: tuple[str, ...], in_flight: int
) -> None:
    # Each case waits for its judge: with the default --jobs (CPU count + 4, 6 on two CPUs)
    # no more than that many requests could be in flight, whatever --judge-concurrency says.
    # An explicit --jobs is kept.
    server.default = judged_after(0.5)
    suite = judged_suite(write, server, "wide", 80)
    done = gradekit("run", str(suite), "--no-cache", "--judge-concurrency", "40", *jobs)
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 80
    assert server.max_in_flight == in_flight


def test_no_judge_no_judge_summary(gradekit: Run, write: Write, tmp_path: Path) -> None:
    suite = write(
        "suite.yaml",
        """
        name: plain
        cases: [{name: a, output: "1", expected: 1, graders: [{kind: numeric}]}]
        """,
    )
    done = gradekit("run", str(suite), "-o", "report.json")
    assert done.returncode == 0, done.stderr
    assert judge_summary(tmp_path / "report.json") is None
    assert "judge:" not in done.stdout


@pytest.mark.parametrize("model", ["claude-opus-4.6", "gpt-test"])
def test_the_api_key_appears_nowhere(
    gradekit: Run,
    write: Write,
    server: JudgeServer,
    *,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    model: str,
) -> None:
    secret = "sk-test-5f2c9a61e0b84d7f"
    anthropic = model.startswith("claude")
    monkeypatch.setenv("ANTHROPIC_API_KEY" if anthropic else "OPENAI_API_KEY", secret)

    def echo(request: Received) -> Answer:
        # A hostile or careless server sends the key back: in a reply, and in an error.
        sent = request.headers.get("x-api-key") or request.headers.get("authorization", "")
        if "denied" in request.prompt:
            return Answer(401, {"error": {"message": f"Incorrect API key provided: {sent}"}})
        return text(json.dumps({"reasoning": f"you sent {sent}", "score": 9}))(request)

    server.default = echo
    base_url = server.url if anthropic else server.openai_url
    suite = write(
        "suite.yaml",
        f"""
        name: secrets
        graders:
          - {{kind: prompt, rubric: "Right?", model: {model}, base_url: {base_url}}}
        cases:
          - {{name: echoed, output: "fine"}}
          - {{name: refused, output: "denied"}}
        """,
    )
    done = gradekit(
        "run",
        str(suite),
        "-o",
        "report.json",
        "--junit",
        "report.xml",
        "--markdown",
        "report.md",
        "--html",
        "report.html",
        "--resume",
        "results.jsonl",
    )
    assert done.returncode == 1, done.stderr  # the refused case is an error
    header = "x-api-key" if anthropic else "authorization"
    assert all(secret in request.headers[header] for request in server.requests)
    report = (tmp_path / "report.json").read_text()
    assert "you sent " in report
    assert "[redacted]" in report
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(".gradekit-cache" in path.parts for path in written)
    leaks = [str(path) for path in written if secret.encode() in path.read_bytes()]
    assert leaks == []
    assert secret not in done.stdout
    assert secret not in done.stderr


SPOILT_KEY = "sk-proj-TOPSECRET42"


def test_no_report_holds_a_key_that_the_transport_would_show(
    gradekit: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: JudgeServer
) -> None:
    # Without the whitespace rule the HTTP client refuses the header and quotes it, key and
    # all, in the error that went into every report.
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: keys\ncases:\n  - name: a\n    output: '4'\n    graders:\n"
        f"      - {{kind: prompt, model: gpt-test, rubric: Right?, base_url: '{server.openai_url}',"
        " max_retries: 0, api_key_env: JUDGE_SPOILT_KEY}\n"
    )
    monkeypatch.setenv("JUDGE_SPOILT_KEY", SPOILT_KEY + "\r")
    done = gradekit("run", str(suite), "--no-cache", "-o", "r.json", "--junit", "r.xml")
    assert done.returncode == 0, done.stderr
    assert server.requests[0].headers["authorization"] == f"Bearer {SPOILT_KEY}"
    for path in (tmp_path / "r.json", tmp_path / "r.xml"):
        assert SPOILT_KEY not in path.read_text()
    assert SPOILT_KEY not in done.stdout + done.stderr
