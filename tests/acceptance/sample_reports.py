"""Reports made by real runs for the report writers' tests: each turn's JSON form carries
the sample it graded (`input`, `output`, `expected`, `tool_calls`, `messages` for
transcripts) and each case its `metadata` (DESIGN.md). Cases have no `tags` of their own yet:
`with_tags` moves those the suite writes as metadata to the case's `tags` key.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path
from typing import Any

import gradekit
from gradekit.report.model import CaseReport, SuiteReport

NASTY = (
    "</script><script>window.pwned = 1</script> <!-- <script> & &amp; <b>bold</b> ]]> "
    "nul\x00 bell\x07 esc\x1b[31m vt\x0b ff\x0c nonchar\ufffe\uffff del\x7f "
    "`tick` *star* _u_ | pipe"
)
"""An output full of what breaks reports: markup, entities, CDATA ends, control characters,
characters XML cannot hold, Markdown's emphasis and code marks."""

TRANSCRIPT = [
    {"role": "system", "content": "You are a support agent. Be brief."},
    {"role": "user", "content": "Where is my order A17?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "lookup_order", "arguments": '{"order": "A17"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"status": "shipped"}'},
    {"role": "assistant", "content": "Your order A17 has shipped."},
    {"role": "user", "content": "Thanks! Can I get a refund anyway?"},
    {"role": "assistant", "content": "Sure, refunds are always possible."},
]

AGENT_GRADERS = """
def explode(ctx):
    raise ValueError("no luck <&>")
"""


def agent_suite(folder: Path) -> Path:
    """A suite with every outcome: passing, failing, errored, skipped turns, tool calls, a
    transcript, tags, and outputs full of markup and control characters."""
    # One module name per folder: code graders' modules are shared by a whole process.
    module = "agent_graders_" + hashlib.sha1(str(folder).encode()).hexdigest()[:12]
    (folder / f"{module}.py").write_text(textwrap.dedent(AGENT_GRADERS))
    dataset = [
        {
            "name": "transcript-refund",
            "messages": TRANSCRIPT,
            "tags": ["support", "transcript"],
            "metadata": {"ticket": 4411},
            "graders": [{"kind": "not_contains", "name": "no-promises", "values": ["always"]}],
        },
        {
            "name": "nasty <b>&amp;</b> `name` *bold*",
            "output": NASTY,
            "expected": "clean & simple",
            "graders": [{"kind": "equality"}],
        },
    ]
    (folder / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in dataset))
    (folder / "suite.yaml").write_text(
        textwrap.dedent(
            """
            name: agent
            dataset: cases.jsonl
            cases:
              - name: weather
                input: "What's the weather in Paris?"
                output: "It is 18°C and sunny in Paris."
                tags: [smoke]
                tool_calls:
                  - {name: get_weather, arguments: {city: Paris}, result: {temp_c: 18, sky: sunny}}
                graders:
                  - {kind: behavior, required_tools: [get_weather]}
                  - {kind: contains, values: ["18"]}
              - name: refund
                input: "Refund order A17 (500 EUR)"
                output: "Refunded <b>500</b> & done"
                expected: "refused: over the limit"
                tags: [smoke, money]
                tool_calls:
                  - {name: lookup_order, arguments: {order: A17}, result: {total: 500}, turn: 0}
                  - {name: issue_refund, arguments: {order: A17, amount: 500},
                     error: "PermissionError: over the refund limit", turn: 1}
                graders:
                  - {kind: behavior, forbidden_tools: [issue_refund]}
                  - {kind: contains, name: polite, values: [sorry], advisory: true}
              - name: crash
                output: "x"
                graders: [{kind: code, name: explode, grader: "graders:explode"}]
              - name: stops-early
                turns:
                  - output: "a"
                    graders:
                      - {kind: code, name: explode, grader: "graders:explode", fail_on_error: true}
                  - output: "b"
                    graders: [{kind: contains, values: [b]}]
            """
        ).replace("graders:explode", f"{module}:explode")
    )
    return folder / "suite.yaml"


def run(suite_path: Path) -> SuiteReport:
    """A real run of the suite (gradekit.run_suite)."""
    return gradekit.run_suite(gradekit.load_suite(suite_path))


def with_tags(report: SuiteReport) -> list[dict[str, Any]]:
    """The report's cases in their JSON form: each turn's sample, each case's metadata and
    tags, all from the real run."""
    return [case.to_dict() for case in report.cases]


def as_reports(cases: list[dict[str, Any]]) -> list[CaseReport]:
    """Case reports read back from their JSON forms, as a results log's are (the writers take
    case reports only)."""
    return [CaseReport.from_dict(case) for case in cases]
