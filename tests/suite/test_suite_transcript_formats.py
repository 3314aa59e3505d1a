"""Transcripts in the providers' own formats: OpenAI Chat (legacy function calls too), OpenAI
Responses items and Anthropic Messages, built with the `openai` and `anthropic` packages' own
types (`model_dump()` of their objects, their TypedDicts for what a caller sends)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradekit
from gradekit import ConfigError, ToolCall
from gradekit.suite.transcript import transcript_turns

anthropic_types = pytest.importorskip("anthropic.types")
chat_types = pytest.importorskip("openai.types.chat")
UserMessageParam = anthropic_types.user_message_param.UserMessageParam
responses_types = pytest.importorskip("openai.types.responses")

# A conversation, written once: (user text, [(tool, arguments, result, failed)], answer).
Conversation = list[tuple[str, list[tuple[str, dict[str, Any], str, bool]], str]]

CONVERSATION: Conversation = [
    (
        "Clean up the staging bucket",
        [("list_files", {"bucket": "staging"}, "a.txt b.txt", False)],
        "There are two files.",
    ),
    (
        "Delete them all",
        [("delete_all", {"bucket": "staging", "force": True}, "permission denied", True)],
        "I could not delete them.",
    ),
]


def _usage() -> Any:
    return anthropic_types.Usage(input_tokens=10, output_tokens=5)


def anthropic_messages(conversation: Conversation) -> list[Any]:
    """The conversation as the Anthropic SDK sends and returns it."""
    messages: list[Any] = []
    for turn, (question, calls, answer) in enumerate(conversation):
        messages.append(UserMessageParam(role="user", content=question))
        if calls:
            blocks = [
                anthropic_types.ToolUseBlock(
                    type="tool_use", id=f"toolu_{turn}_{index}", name=name, input=arguments
                )
                for index, (name, arguments, _, _) in enumerate(calls)
            ]
            messages.append(_anthropic_reply(blocks, "tool_use"))
            results = [
                anthropic_types.ToolResultBlockParam(
                    type="tool_result",
                    tool_use_id=f"toolu_{turn}_{index}",
                    content=result,
                    is_error=failed,
                )
                for index, (_, _, result, failed) in enumerate(calls)
            ]
            messages.append(UserMessageParam(role="user", content=results))
        reply = [anthropic_types.TextBlock(type="text", text=answer)]
        messages.append(_anthropic_reply(reply, "end_turn"))
    return messages


def _anthropic_reply(content: list[Any], stop: str) -> dict[str, Any]:
    message = anthropic_types.Message(
        id="msg_1",
        type="message",
        role="assistant",
        content=content,
        model="claude-test",
        stop_reason=stop,
        stop_sequence=None,
        usage=_usage(),
    )
    return message.model_dump()


def chat_messages(conversation: Conversation) -> list[Any]:
    """The conversation as the OpenAI SDK's Chat Completions sends and returns it. A failed
    tool's result is its text: Chat has no error flag."""
    messages: list[Any] = [{"role": "system", "content": "You manage storage."}]
    for turn, (question, calls, answer) in enumerate(conversation):
        messages.append({"role": "user", "content": question})
        if calls:
            tool_calls = [
                chat_types.ChatCompletionMessageFunctionToolCall(
                    id=f"call_{turn}_{index}",
                    type="function",
                    function={"name": name, "arguments": json.dumps(arguments)},
                )
                for index, (name, arguments, _, _) in enumerate(calls)
            ]
            reply = chat_types.ChatCompletionMessage(
                role="assistant", content=None, tool_calls=tool_calls
            )
            messages.append(reply.model_dump())
            for index, (_, _, result, _) in enumerate(calls):
                messages.append(
                    {"role": "tool", "tool_call_id": f"call_{turn}_{index}", "content": result}
                )
        text = chat_types.ChatCompletionMessage(role="assistant", content=answer)
        messages.append(text.model_dump())
    return messages


def responses_items(conversation: Conversation) -> list[Any]:
    """The conversation as a Responses API input list: the caller's messages and call
    outputs, the response's output items (`model_dump()`)."""
    items: list[Any] = []
    for turn, (question, calls, answer) in enumerate(conversation):
        items.append(responses_types.EasyInputMessageParam(role="user", content=question))
        for index, (name, arguments, result, _) in enumerate(calls):
            call = responses_types.ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{turn}_{index}",
                name=name,
                arguments=json.dumps(arguments),
                id=f"fc_{turn}_{index}",
                status="completed",
            )
            items.append(call.model_dump())
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": f"call_{turn}_{index}",
                    "output": result,
                }
            )
        message = responses_types.ResponseOutputMessage(
            id=f"msg_{turn}",
            type="message",
            role="assistant",
            status="completed",
            content=[
                responses_types.ResponseOutputText(type="output_text", text=answer, annotations=[])
            ],
        )
        items.append(message.model_dump())
    return items


def _turns(messages: Any, fmt: str | None = None) -> list[tuple[Any, Any, tuple[ToolCall, ...]]]:
    turns, problems = transcript_turns(messages, ("messages",), fmt, ("messages_format",))
    assert problems == []
    return [(turn.input, turn.output, turn.tool_calls(index)) for index, turn in enumerate(turns)]


def _expected(conversation: Conversation, errors: bool) -> list[Any]:
    expected = []
    for index, (question, calls, answer) in enumerate(conversation):
        tool_calls = tuple(
            ToolCall(name, arguments, error=result, turn=index)
            if failed and errors
            else ToolCall(name, arguments, result=result, turn=index)
            for name, arguments, result, failed in calls
        )
        expected.append((question, answer, tool_calls))
    return expected


def test_the_anthropic_format_is_read() -> None:
    # is_error marks the call's error; the user message of tool results continues the turn.
    assert _turns(anthropic_messages(CONVERSATION)) == _expected(CONVERSATION, errors=True)


def test_the_responses_format_is_read() -> None:
    assert _turns(responses_items(CONVERSATION)) == _expected(CONVERSATION, errors=False)


def test_the_chat_format_is_read_as_before() -> None:
    assert _turns(chat_messages(CONVERSATION)) == _expected(CONVERSATION, errors=False)


SUITE = """
name: storage-agent
graders:
  - kind: behavior
    forbidden_tools: [delete_all]
cases:
  - name: cleanup
    messages: {messages}
"""


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param(anthropic_messages, id="anthropic"),
        pytest.param(responses_items, id="openai-responses"),
        pytest.param(chat_messages, id="openai-chat"),
    ],
)
def test_a_forbidden_tool_called_in_any_format_fails(tmp_path, messages) -> None:
    # Before: an Anthropic transcript's tool_use blocks were dropped, and the case passed.
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE.format(messages=json.dumps(messages(CONVERSATION))))
    report = gradekit.run_suite(gradekit.load_suite(path))
    (case,) = report.cases
    assert not case.passed
    second = case.turns[1].results[0].result
    assert not second.passed and "delete_all" in second.message
    assert case.turns[0].results[0].result.passed


def test_a_legacy_function_call_is_read(tmp_path) -> None:
    messages = [
        {"role": "user", "content": "Wipe it"},
        chat_types.ChatCompletionMessage(
            role="assistant",
            content=None,
            function_call={"name": "delete_all", "arguments": '{"bucket": "prod"}'},
        ).model_dump(),
        {"role": "function", "name": "delete_all", "content": "done"},
        {"role": "assistant", "content": "Wiped."},
    ]
    assert _turns(messages) == [
        ("Wipe it", "Wiped.", (ToolCall("delete_all", {"bucket": "prod"}, "done", turn=0),))
    ]
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE.format(messages=json.dumps(messages)))
    report = gradekit.run_suite(gradekit.load_suite(path))
    assert not report.cases[0].passed


def test_an_anthropic_request_body_gives_its_system_text(tmp_path) -> None:
    body = {"system": "You manage storage.", "messages": anthropic_messages(CONVERSATION[:1])}
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE.format(messages=json.dumps(body)))
    (case,) = gradekit.load_suite(path).cases()
    assert case.turns[0].sample.metadata["system"] == "You manage storage."
    assert case.turns[0].sample.output == "There are two files."


def test_responses_items_that_are_not_messages_are_kept_in_metadata() -> None:
    reasoning = responses_types.ResponseReasoningItem(
        id="rs_1", type="reasoning", summary=[{"type": "summary_text", "text": "Check first."}]
    ).model_dump()
    items = responses_items(CONVERSATION[:1])
    items.insert(1, reasoning)
    turns, problems = transcript_turns(items, ("messages",))
    assert problems == []
    assert turns[0].metadata() == {"items": [reasoning]}
    assert [call.name for call in turns[0].tool_calls(0)] == ["list_files"]


def test_hosted_and_custom_tools_of_responses_are_tool_calls() -> None:
    items = [
        {"role": "user", "content": "Find it"},
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "bucket"},
        },
        {"type": "custom_tool_call", "call_id": "c1", "name": "grep", "input": "TODO"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "3 hits"},
        {"type": "message", "role": "assistant", "content": "Found."},
    ]
    ((_, output, calls),) = _turns(items)
    assert output == "Found."
    assert calls == (
        ToolCall("web_search", {"type": "search", "query": "bucket"}, turn=0),
        ToolCall("grep", {"input": "TODO"}, result="3 hits", turn=0),
    )


def failures(path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        gradekit.load_suite(path)
    return [str(p).replace(f"{path}:", "suite.yaml:") for p in caught.value.problems]


def _suite(tmp_path, case: str) -> Any:
    path = tmp_path / "suite.yaml"
    path.write_text(f"graders: [{{kind: equality}}]\ncases:\n  - {case}\n")
    return path


def test_an_unknown_block_is_an_error_at_its_position(tmp_path) -> None:
    path = _suite(
        tmp_path,
        "{messages: [{role: user, content: go}, {role: assistant, content: "
        "[{type: text, text: ok}, {type: tool_call, name: rm}]}]}",
    )
    (problem,) = failures(path)
    assert problem.startswith("suite.yaml:3:")
    assert "cases[0].messages[1].content[1]: gradekit does not read this content part" in problem
    assert "tool_call" in problem


def test_a_mixed_transcript_names_each_format(tmp_path) -> None:
    path = _suite(
        tmp_path,
        "{messages: [{role: user, content: go}, {role: assistant, content: "
        "[{type: tool_use, id: t1, name: rm, input: {}}]}, {role: tool, tool_call_id: t1, "
        "content: ok}]}",
    )
    assert failures(path) == [
        "suite.yaml:3:16: cases[0].messages: the transcript mixes formats (message 1: "
        "anthropic; message 2: openai-chat); give it in one format: openai-chat, "
        "openai-responses or anthropic (messages_format forces one)"
    ]


def test_a_key_of_another_format_is_not_dropped(tmp_path) -> None:
    # tool_calls on an Anthropic message: the reader would leave it unread.
    path = _suite(
        tmp_path,
        "{messages: [{role: user, content: go}, {role: assistant, content: [{type: tool_use, "
        "id: t1, name: ls, input: {}}]}, {role: user, content: [{type: tool_result, "
        "tool_use_id: t1, content: a}]}, {role: assistant, content: [{type: tool_use, id: t2, "
        "name: ls, input: {}}], tool_calls: [{id: c, type: function, function: "
        "{name: rm, arguments: '{}'}}]}]}",
    )
    problems = failures(path)
    assert any(
        "cases[0].messages[3]: this message does not read as anthropic, the format of the "
        "rest of the transcript: it mixes the keys or blocks of several formats" in p
        for p in problems
    ), problems


def test_messages_format_forces_a_format(tmp_path) -> None:
    path = _suite(
        tmp_path,
        "{messages_format: anthropic, messages: [{role: user, content: go}, "
        "{role: tool, tool_call_id: t1, content: ok}]}",
    )
    assert failures(path) == [
        "suite.yaml:3:72: cases[0].messages[1]: this message does not read as anthropic "
        "(messages_format): it looks like openai-chat; give the transcript in one format"
    ]
    path = _suite(tmp_path, "{messages_format: antropic, messages: [{role: user, content: go}]}")
    assert failures(path) == [
        "suite.yaml:3:23: cases[0].messages_format: messages_format must be one of "
        "openai-chat, openai-responses, anthropic, got 'antropic' (did you mean 'anthropic'?)"
    ]


def test_messages_format_needs_messages(tmp_path) -> None:
    path = _suite(tmp_path, "{messages_format: anthropic, output: hi}")
    assert failures(path) == [
        "suite.yaml:3:6: cases[0]: messages_format says how 'messages' is "
        "written, and this case has none; add messages or remove messages_format"
    ]


def test_a_dataset_line_in_the_anthropic_format(tmp_path) -> None:
    line = {"name": "cleanup", "messages": anthropic_messages(CONVERSATION)}
    (tmp_path / "runs.jsonl").write_text(json.dumps(line) + "\n")
    path = tmp_path / "suite.yaml"
    path.write_text(
        "graders: [{kind: behavior, forbidden_tools: [delete_all]}]\ndataset: runs.jsonl\n"
    )
    report = gradekit.run_suite(gradekit.load_suite(path))
    assert [case.passed for case in report.cases] == [False]


# Any conversation reads the same in the three formats.
_names = st.sampled_from(["search", "read_file", "delete_all", "calc"])
_texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)
_arguments = st.dictionaries(
    st.text("abcxyz_", min_size=1, max_size=5),
    st.one_of(st.integers(-5, 5), st.booleans(), _texts),
    max_size=3,
)
_calls = st.lists(st.tuples(_names, _arguments, _texts, st.just(False)), max_size=3)
_conversations = st.lists(st.tuples(_texts, _calls, _texts), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(_conversations)
def test_the_three_formats_give_the_same_turns(conversation: Conversation) -> None:
    expected = _expected(conversation, errors=False)
    assert _turns(chat_messages(conversation)) == expected
    assert _turns(responses_items(conversation)) == expected
    assert _turns(anthropic_messages(conversation)) == expected
