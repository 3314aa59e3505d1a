"""The sample in the report: a real `gradekit run` writes, in each turn of its JSON report and
of its `--resume` log, what the turn graded (input, output, expected, tool calls, a
transcript's messages) and each case's metadata once; long texts cut with a marker
(`--max-text`), none with `--no-samples`; the HTML page shows them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chromium import Browser, chromium, file_url
from cli_support import Run

import gradekit

Write = Callable[[str, str], Path]

GRADERS = """
def has_refund(ctx):
    return "refund" in str(ctx.agent_response)
"""

SUITE = """
name: samples
cases:
  - name: weather
    input: "Weather in Paris?"
    output: "18°C and sunny"
    expected: "sunny"
    ticket: 4411
    metadata: {team: support}
    tool_calls:
      - {name: get_weather, arguments: {city: Paris}, result: {temp_c: 18}}
      - {name: get_alerts, arguments: {city: Paris}, error: "TimeoutError: slow", turn: 0}
    graders: [{kind: contains, values: [sunny]}]
  - name: chat
    messages:
      - {role: system, content: "Be brief."}
      - {role: user, content: "Where is A17?"}
      - role: assistant
        content: null
        tool_calls:
          - {id: c1, type: function, function: {name: lookup, arguments: '{"order": "A17"}'}}
      - {role: tool, tool_call_id: c1, content: "shipped"}
      - {role: assistant, content: "It shipped."}
      - {role: user, content: "Refund it?"}
      - {role: assistant, content: "A refund is on its way."}
    graders: [{kind: code, grader: "graders:has_refund"}]
  - name: long
    output: LONG
    expected: .nan
    graders: [{kind: equality}]
"""

LONG = "é" * 3000 + "x" * 10_000  # 6,000 bytes of é, then ASCII


def _suite(write: Write) -> None:
    # One module name per folder: code graders' modules are shared by a whole process.
    module = "sample_graders_" + hashlib.sha1(str(write("x", "")).encode()).hexdigest()[:12]
    write(f"{module}.py", GRADERS)
    write(
        "suite.yaml",
        SUITE.replace("LONG", LONG).replace("graders:has_refund", module + ":has_refund"),
    )


def _strict(text: str) -> Any:
    """JSON that Python's lenient reader would take but strict JSON refuses (NaN) fails."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _turns(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {case["name"]: case["turns"] for case in report["cases"]}


def _check_samples(cases: dict[str, dict[str, Any]]) -> None:
    weather = cases["weather"]
    assert weather["metadata"] == {"ticket": 4411, "team": "support"}
    assert "tags" not in weather
    (turn,) = weather["turns"]
    assert (turn["input"], turn["output"], turn["expected"]) == (
        "Weather in Paris?",
        "18°C and sunny",
        "sunny",
    )
    assert turn["tool_calls"] == [
        {
            "name": "get_weather",
            "arguments": {"city": "Paris"},
            "result": {"temp_c": 18},
            "error": None,
            "turn": None,
        },
        {
            "name": "get_alerts",
            "arguments": {"city": "Paris"},
            "result": None,
            "error": "TimeoutError: slow",
            "turn": 0,
        },
    ]
    first, second = cases["chat"]["turns"]
    assert [m["role"] for m in first["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert first["messages"][2]["tool_calls"][0]["function"]["name"] == "lookup"
    assert second["messages"] == [
        {"role": "user", "content": "Refund it?"},
        {"role": "assistant", "content": "A refund is on its way."},
    ]
    assert (second["input"], second["output"]) == ("Refund it?", "A refund is on its way.")
    assert first["tool_calls"][0]["name"] == "lookup" and first["tool_calls"][0]["turn"] == 0
    assert second["results"][0]["passed"] is True
    (long,) = cases["long"]["turns"]
    assert long["output"] == "é" * 2048 + "…[cut 10,952 more characters]"
    assert long["expected"] == "nan"  # NaN is not JSON: its repr


def test_the_json_report_and_the_log_carry_each_turn_s_sample(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _suite(write)
    done = gradekit("run", "suite.yaml", "-o", "r.json", "--resume", "log.jsonl", "--quiet")
    assert done.returncode == 1, done.stderr  # `long` fails
    report = _strict((tmp_path / "r.json").read_text())
    _check_samples({case["name"]: case for case in report["cases"]})
    logged = [_strict(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    _check_samples({case["name"]: case for case in logged if "name" in case})
    # Resumed: nothing is graded again, and the report read back from the log is the same.
    again = gradekit("run", "suite.yaml", "-o", "r2.json", "--resume", "log.jsonl", "--quiet")
    assert again.returncode == 1, again.stderr
    resumed = _strict((tmp_path / "r2.json").read_text())
    assert _turns(resumed) == _turns(report)
    assert [c.get("metadata") for c in resumed["cases"]] == [
        c.get("metadata") for c in report["cases"]
    ]


def test_max_text_cuts_and_no_samples_leaves_them_out(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    _suite(write)
    done = gradekit("run", "suite.yaml", "-o", "r.json", "--max-text", "7", "--quiet")
    assert done.returncode == 1, done.stderr
    turns = _turns(_strict((tmp_path / "r.json").read_text()))
    assert turns["weather"][0]["input"] == "Weather…[cut 10 more characters]"
    assert turns["weather"][0]["output"] == "18°C a…[cut 8 more characters]"  # ° is 2 bytes
    assert turns["weather"][0]["expected"] == "sunny"
    assert turns["long"][0]["output"] == "ééé…[cut 12,997 more characters]"
    done = gradekit("run", "suite.yaml", "-o", "none.json", "--no-samples", "--quiet")
    assert done.returncode == 1, done.stderr
    bare = _strict((tmp_path / "none.json").read_text())
    for case in bare["cases"]:
        assert "metadata" not in case
        for turn in case["turns"]:
            assert set(turn) == {"index", "passed", "score", "errored", "results"}
    both = gradekit("run", "suite.yaml", "--no-samples", "--max-text", "9")
    assert both.returncode == 2 and "give one" in both.stderr


def test_run_suite_samples_and_max_text(write: Write, tmp_path: Path) -> None:
    _suite(write)
    suite = gradekit.load_suite(tmp_path / "suite.yaml")
    cut = gradekit.run_suite(suite, outputs=gradekit.Outputs(max_text=5)).cases[0].to_dict()
    assert cut["turns"][0]["input"] == "Weath…[cut 12 more characters]"
    assert cut["metadata"] == {"ticket": 4411, "team": "suppo…[cut 2 more characters]"}
    bare = gradekit.run_suite(suite, outputs=gradekit.Outputs(samples=False)).cases[0].to_dict()
    assert "input" not in bare["turns"][0] and "metadata" not in bare


def test_the_html_page_of_a_run_shows_each_case_s_output(
    gradekit: Run, write: Write, tmp_path: Path
) -> None:
    chromium()
    _suite(write)
    done = gradekit("run", "suite.yaml", "--html", "r.html", "--quiet")
    assert done.returncode == 1, done.stderr
    browser = Browser()
    try:
        browser.open(file_url(tmp_path / "r.html"))
        browser.evaluate("document.querySelector('.row.case[data-name=\"weather\"]').click()")
        detail = "document.getElementById('case-detail')"
        assert browser.evaluate(f"{detail}.dataset.name") == "weather"
        shown = browser.evaluate(f"{detail}.querySelector('.field-output pre').textContent")
        assert shown == "18°C and sunny"
        tools = browser.evaluate(
            f"Array.from({detail}.querySelectorAll('ol.timeline .tool')).map(e => e.textContent)"
        )
        assert tools == ["get_weather", "get_alerts"]
    finally:
        browser.close()
