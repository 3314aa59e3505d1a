"""Cases given as an OpenAI chat transcript (`messages:`)."""

from __future__ import annotations

import json

import pytest

from gradekit import ConfigError, ToolCall
from gradekit.suite.load import load_suite

TRANSCRIPT = [
    {"role": "system", "content": "You are a finance assistant."},
    {"role": "user", "content": "What was revenue in 2023?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"year": 2023}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"year": 2022}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_2", "content": "90"},
    {"role": "tool", "tool_call_id": "call_1", "content": "100"},
    {"role": "assistant", "content": "Let me check."},
    {"role": "assistant", "content": "Revenue was 100."},
    {"role": "user", "content": [{"type": "text", "text": "And the growth?"}]},
    {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_3",
                "type": "function",
                "function": {"name": "calculator", "arguments": '{"expr": "100/90-1"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_3", "content": "0.111"},
    {"role": "assistant", "content": "About 11.1%."},
    {"role": "user", "content": "Thanks"},
]


def test_turns_from_a_transcript(write, registry):
    # JSON is YAML: the transcript is pasted as it was saved.
    path = write(
        "graders: [{kind: exact}]\n"
        "cases:\n"
        f"  - name: finance\n    expected: done\n    messages: {json.dumps(TRANSCRIPT)}\n"
    )
    (case,) = load_suite(path, registry=registry).cases()
    first, second, third = (turn.sample for turn in case.turns)

    assert (first.turn, first.input, first.output) == (
        0,
        "What was revenue in 2023?",
        "Revenue was 100.",
    )
    assert first.tool_calls == (
        ToolCall("lookup", {"year": 2023}, result="100", turn=0),
        ToolCall("lookup", {"year": 2022}, result="90", turn=0),
    )
    assert (second.turn, second.input, second.output) == (1, "And the growth?", "About 11.1%.")
    assert second.tool_calls == (
        ToolCall("calculator", {"expr": "100/90-1"}, result="0.111", turn=1),
    )
    assert (third.input, third.output, third.tool_calls) == ("Thanks", None, ())
    assert third.history == (first, second)
    assert {s.case for s in (first, second, third)} == {"finance"}
    assert first.metadata == {"system": "You are a finance assistant."}
    assert {s.expected for s in (first, second, third)} == {"done"}
    assert [entry.kind for entry in case.turns[2].graders] == ["exact"]


def test_transcript_in_yaml_block_form(write, registry):
    path = write(
        """
        cases:
          - name: weather
            messages:
              - role: user
                content: Weather in Paris?
              - role: assistant
                tool_calls:
                  - id: w1
                    type: function
                    function: {name: get_weather, arguments: '{"city": "Paris"}'}
              - {role: tool, tool_call_id: w1, content: '{"temp": 21}'}
              - {role: assistant, content: It is 21 degrees.}
        graders: [{kind: exact}]
        """
    )
    (case,) = load_suite(path, registry=registry).cases()
    (turn,) = case.turns
    assert turn.sample.output == "It is 21 degrees."
    assert turn.sample.tool_calls == (
        ToolCall("get_weather", {"city": "Paris"}, result='{"temp": 21}', turn=0),
    )


def test_a_call_without_result_and_empty_arguments(write, registry):
    path = write(
        """
        cases:
          - messages:
              - {role: user, content: go}
              - role: assistant
                tool_calls: [{id: a, type: function, function: {name: ping, arguments: ""}}]
        graders: [{kind: exact}]
        """
    )
    (case,) = load_suite(path, registry=registry).cases()
    assert case.turns[0].sample.tool_calls == (ToolCall("ping", {}, turn=0),)
    assert case.turns[0].sample.output is None


def failures(path, registry) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_suite(path, registry=registry)
    return [str(p).replace(f"{path}:", "suite.yaml:") for p in caught.value.problems]


def test_malformed_json_arguments_are_a_load_error_with_location(write, registry):
    path = write(
        """
        cases:
          - name: broken
            messages:
              - {role: user, content: hi}
              - role: assistant
                tool_calls:
                  - id: c1
                    type: function
                    function:
                      name: calc
                      arguments: '{"expr": 1+}'
        """
    )
    assert failures(path, registry) == [
        "suite.yaml:11:26: cases[0].messages[1].tool_calls[0].function.arguments: "
        "invalid JSON in tool call arguments: Expecting ',' delimiter "
        "(column 11); arguments must be a JSON object encoded as a string"
    ]


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        (
            "[{role: user, content: hi}, {role: tool, tool_call_id: x, content: '1'}]",
            "suite.yaml:2:71: cases[0].messages[1].tool_call_id: no earlier "
            "assistant tool call has id 'x'; a tool message answers a call of the assistant "
            "message before it",
        ),
        (
            "[{role: assistant, content: hello}, {role: user, content: hi}]",
            "suite.yaml:2:17: cases[0].messages[0]: a message with role "
            "'assistant' before the first user message; each turn of a transcript starts with "
            "a user message",
        ),
        (
            "[{role: usr, content: hi}]",
            "suite.yaml:2:24: cases[0].messages[0].role: a message needs a role: "
            "system, developer, user, assistant, tool; got 'usr' (did you mean 'user'?)",
        ),
        (
            "[{role: system, content: be brief}]",
            "suite.yaml:2:16: cases[0].messages: the transcript has no user message; add one",
        ),
        (
            "[]",
            "suite.yaml:2:16: cases[0].messages: expected a non-empty list of "
            "chat messages, got []",
        ),
        (
            "[{role: user, content: hi}, {role: assistant, tool_calls: [{id: a}]}]",
            "suite.yaml:2:75: cases[0].messages[1].tool_calls[0]: a tool call "
            "needs 'function' with a 'name' and 'arguments', got {'id': 'a'}",
        ),
        (
            "[{role: user, content: hi}, {role: assistant, tool_calls: [{id: a, function: "
            "{name: f, arguments: '[1]'}}]}]",
            "suite.yaml:2:114: cases[0].messages[1].tool_calls[0].function.arguments: "
            "tool call arguments must be a JSON object, got '[1]'",
        ),
        (
            "[{role: user, content: 5}]",
            "suite.yaml:2:39: cases[0].messages[0].content: expected a string or "
            "a list of content parts, got 5",
        ),
    ],
)
def test_transcript_problems(write, registry, messages, expected):
    path = write(f"cases:\n  - {{messages: {messages}}}\n")
    assert failures(path, registry) == [expected]


def test_turn_fields_beside_messages_are_errors(write, registry):
    path = write("cases:\n  - {input: x, messages: [{role: user, content: hi}]}\n")
    assert failures(path, registry) == [
        "suite.yaml:2:6: cases[0]: a case with 'messages' gives 'input' per "
        "turn; move it into the turns"
    ]
