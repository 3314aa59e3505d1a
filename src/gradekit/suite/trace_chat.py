"""What every trace dialect builds its Chat messages from: flattened attributes made nested
again (`unflatten`), and a tool call in Chat's form (`chat_call`). A module of its own because
the three dialect modules share these and the one that reads them all imports the others."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gradekit.suite.traces import DialectError

__all__ = ["chat_call", "unflatten"]


def chat_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """A tool call as an OpenAI Chat message holds it: `arguments` kept when they are JSON
    text already, else written as JSON (no arguments: `{}`)."""
    if not isinstance(arguments, str):
        arguments = json.dumps({} if arguments is None else arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def unflatten(attributes: Mapping[str, Any], prefix: str) -> list[Any]:
    """`prefix.0.message.role`-style attributes as a list of nested dicts (lists where all
    keys of a level are indices)."""
    root: dict[str, Any] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        node = root
        steps = key[len(prefix) :].split(".")
        for step in steps[:-1]:
            node = node.setdefault(step, {})
            if not isinstance(node, dict):
                raise DialectError(f"{key} is under a value: {value!r:.80}")
        node[steps[-1]] = value
    return [_listed(root[index]) for index in sorted(root, key=_index)]


def _index(step: str) -> int:
    if not step.isdigit():
        raise DialectError(f"'{step}' where a message index was expected")
    return int(step)


def _listed(node: Any) -> Any:
    """Dicts whose keys are all indices become lists."""
    if not isinstance(node, dict):
        return node
    if node and all(key.isdigit() for key in node):
        return [_listed(node[key]) for key in sorted(node, key=int)]
    return {key: _listed(value) for key, value in node.items()}
