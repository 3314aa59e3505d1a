"""`suite_schema`: a JSON Schema (draft 2020-12) of the suite file, for editors and CI checks.

A grader entry's `kind` is one of the installed kinds (an `enum`, so a wrong kind is named as
such, and an editor completes every kind); an `if`/`then` per kind applies that kind's own
schema, so only its errors are reported. A kind whose factory is an attrs class gets its
options from that class: types, defaults, enums from `Literal`, required options, descriptions
from a field's `metadata={"help": ...}` or its docstring (a string literal under the field),
extra keywords from `metadata={"schema": {...}}`, and no other keys. A kind whose factory is
not an attrs class accepts any extra keys (with the options its `options_class` declares, if
any), unless it declares `options_complete = True`. Composites' `graders` are grader entries
again, checked the same way at any depth. Kinds that fail to load are left out.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import json
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from gradekit.core.values import MAX_SECONDS
from gradekit.registry.options import option_fields
from gradekit.registry.registry import Registry, declares_every_option, default_registry
from gradekit.suite.transcript import FORMATS

__all__ = ["SCHEMA_DIALECT", "suite_schema"]

SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
_GRADER: Final = {"$ref": "#/$defs/grader"}
_ANY: Final[dict[str, Any]] = {}
_TAGS: Final = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "description": "Tags, for --select tag:NAME and the reports.",
}

COMMON: Final[dict[str, dict[str, Any]]] = {
    "name": {"type": "string", "description": "Name in reports (default: the kind)."},
    "weight": {"type": "number", "minimum": 0, "default": 1, "description": "Weight in policy."},
    "advisory": {
        "type": "boolean",
        "default": False,
        "description": "Reported, never part of the verdict.",
    },
    "threshold": {
        "type": "number",
        "minimum": 0,
        "maximum": 1,
        "description": "When set: passed = no error and score >= threshold.",
    },
    "timeout": {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": MAX_SECONDS,
        "description": "Seconds.",
    },
    "isolation": {"enum": ["thread", "process"], "description": "Where a sync grader runs."},
    "enabled": {"type": "boolean", "default": True, "description": "false: left out."},
    "fail_on_error": {
        "type": "boolean",
        "default": False,
        "description": "An error result ends the case; later turns are skipped.",
    },
    "sandbox": {
        "enum": ["auto", "bwrap", "none"],
        "description": "Agent code (commands, process isolation) in bubblewrap, or not.",
    },
}


def _policy() -> dict[str, Any]:
    modes = {"enum": ["all", "any", "weighted"]}
    return {
        "description": "How results combine into a verdict: all, any, or weighted (threshold).",
        "oneOf": [
            modes,
            {
                "type": "object",
                "properties": {"mode": modes, "threshold": COMMON["threshold"]},
                "required": ["mode"],
                "additionalProperties": False,
            },
        ],
    }


def _tool_call() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "arguments": {"type": "object"},
            "result": _ANY,
            "error": {"type": ["string", "null"]},
            "turn": {"type": ["integer", "null"]},
        },
        "required": ["name"],
        "additionalProperties": False,
    }


def _turn_properties() -> dict[str, Any]:
    return {
        "input": _ANY,
        "output": _ANY,
        "expected": _ANY,
        "tool_calls": {"type": "array", "items": {"$ref": "#/$defs/tool_call"}},
        "context": {"type": ["array", "string", "null"]},
        "workspace": {"type": "string", "description": "Folder, relative to the suite file."},
        "graders": {"type": "array", "items": _GRADER},
        "metadata": {"type": "object"},
    }


def _case() -> dict[str, Any]:
    properties = {
        "name": {"type": "string", "minLength": 1},
        "policy": {"$ref": "#/$defs/policy"},
        "threshold": COMMON["threshold"],
        "turns": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/turn"}},
        "messages": {"$ref": "#/$defs/messages"},
        "messages_format": _MESSAGES_FORMAT,
        "tags": _TAGS,
        "attempts": {
            "type": "array",
            "minItems": 1,
            "description": "Several attempts at the case's task, each graded as a case (same "
            "name, its index from 0) for pass@k: an output, or a mapping giving output / "
            "tool_calls, turns or messages, and metadata.",
            "items": {
                "anyOf": [
                    {"not": {"type": "object"}},
                    {
                        "type": "object",
                        "properties": {
                            "output": _ANY,
                            "tool_calls": {
                                "type": "array",
                                "items": {"$ref": "#/$defs/tool_call"},
                            },
                            "turns": {
                                "type": "array",
                                "minItems": 1,
                                "items": {"$ref": "#/$defs/turn"},
                            },
                            "messages": {"$ref": "#/$defs/messages"},
                            "messages_format": _MESSAGES_FORMAT,
                            "metadata": {"type": "object"},
                        },
                        "additionalProperties": False,
                    },
                ]
            },
        },
        **_turn_properties(),
    }
    return {
        "type": "object",
        "description": "A case; keys not listed here are kept as metadata for graders.",
        "properties": properties,
        "not": {"required": ["turns", "messages"]},
    }


_MESSAGES_FORMAT: Final = {
    "enum": list(FORMATS),
    "description": "The transcript's format, when it must not be found from its shape.",
}


def _messages() -> dict[str, Any]:
    listed = {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/message"}}
    return {
        "description": "A transcript: OpenAI Chat messages, OpenAI Responses items or Anthropic "
        "messages (or an Anthropic request body with its system text).",
        "anyOf": [
            listed,
            {
                "type": "object",
                "properties": {"system": {"type": ["string", "array"]}, "messages": listed},
                "required": ["messages"],
            },
        ],
    }


def _message() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "A message (OpenAI Chat, Anthropic) or a Responses item.",
        "properties": {
            "role": {"enum": ["system", "developer", "user", "assistant", "tool", "function"]},
            "type": {"type": "string"},
            "content": {"type": ["string", "array", "null"]},
            "tool_calls": {"type": ["array", "null"]},
            "tool_call_id": {"type": "string"},
        },
        "anyOf": [{"required": ["role"]}, {"required": ["type"]}],
    }


def _json_default(value: Any) -> tuple[bool, Any]:
    if value is attrs.NOTHING:
        return False, None
    if isinstance(value, attrs.Factory):  # type: ignore[arg-type]
        if value.takes_self:
            return False, None
        value = value.factory()
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False, None
    return True, value


def type_schema(type_: Any) -> dict[str, Any]:
    """The JSON Schema of a Python annotation, as the strict options converter reads it."""
    if type_ is Any or type_ is object:
        return {}
    origin = typing.get_origin(type_)
    args = typing.get_args(type_)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin is typing.Union or origin is types.UnionType:
        options = [type_schema(arg) for arg in args if arg is not type(None)]
        nullable = type(None) in args
        if (
            len(options) == 1
            and list(options[0]) == ["type"]
            and isinstance(options[0]["type"], str)
        ):
            return {"type": [options[0]["type"], "null"]} if nullable else options[0]
        if nullable:
            options.append({"type": "null"})
        return {"anyOf": options}
    simple = {bool: "boolean", int: "integer", float: "number", str: "string"}
    if type_ in simple:
        return {"type": simple[type_]}
    if type_ is type(None):
        return {"type": "null"}
    if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        items = [type_schema(arg) for arg in args]
        return {"type": "array", "prefixItems": items, "items": False}
    if (isinstance(origin, type) and issubclass(origin, Mapping)) or type_ in (dict, Mapping):
        value = type_schema(args[1]) if len(args) == 2 else {}
        return {"type": "object", "additionalProperties": value} if value else {"type": "object"}
    if isinstance(origin, type) and issubclass(origin, (Sequence, frozenset, set)):
        if issubclass(origin, (str, bytes)):
            return {"type": "string"}
        return {"type": "array", "items": type_schema(args[0])} if args else {"type": "array"}
    if type_ in (list, tuple, set, frozenset):
        return {"type": "array"}
    if isinstance(type_, type) and attrs.has(type_):
        return _options_object(type_)
    return {}


def _options_object(cls: type) -> dict[str, Any]:
    properties, required = _options(cls)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def field_docs(cls: type) -> dict[str, str]:
    """The docstrings of `cls`'s fields (a string literal right under a field, as Sphinx and
    griffe read them), from its source and its bases'; {} where the source is not available."""
    docs: dict[str, str] = {}
    for owner in reversed(cls.__mro__[:-1]):
        docs.update(_module_field_docs(owner.__module__).get(owner.__qualname__, {}))
    return docs


@functools.cache
def _module_field_docs(module: str) -> dict[str, dict[str, str]]:
    """Every class's field docstrings in `module`, by qualified name (its source read once)."""
    try:
        tree = ast.parse(inspect.getsource(sys.modules[module]))
    except (KeyError, OSError, TypeError, SyntaxError):
        return {}
    found: dict[str, dict[str, str]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                found[prefix + node.name] = _documented(node.body)
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, f"{prefix}{node.name}.<locals>.")

    visit(tree.body, "")
    return found


def _documented(body: list[ast.stmt]) -> dict[str, str]:
    """`name: type = ...` followed by a string literal, in a class body: name to that text."""
    docs: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = " ".join(inspect.cleandoc(after.value.value).split())
    return docs


def _options(cls: type) -> tuple[dict[str, Any], list[str]]:
    """Properties and required keys of an attrs options class."""
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field in option_fields(cls):
        key = field.alias or field.name
        schema = dict(type_schema(hints.get(field.name, Any)))
        if field.name == "graders" and schema.get("type") == "array":
            # Composite kinds nest grader entries.
            schema["items"] = _GRADER
        has_default, default = _json_default(field.default)
        if has_default:
            schema["default"] = default
        elif field.default is attrs.NOTHING:
            required.append(key)
        extra = field.metadata.get("schema")
        if isinstance(extra, Mapping):
            schema.update(extra)
        help_text = field.metadata.get("help", docs.get(field.name))
        if isinstance(help_text, str):
            schema["description"] = help_text
        properties[key] = schema
    return properties, required


def _kind(kind: str, registry: Registry) -> dict[str, Any] | None:
    """The entry schema of one kind, or None when the kind cannot be loaded."""
    try:
        factory = registry.factory(kind)
        options_class = registry.options_class(kind)
        options, required = _options(options_class) if options_class is not None else ({}, [])
    except Exception:  # a broken plugin is left out, as `gradekit kinds` reports it
        return None
    # The common keys win over a kind's own field of the same name (`threshold`): they mean
    # the same thing at every level, and the common schema carries the bounds.
    properties = {"kind": {"const": kind}, **options, **COMMON}
    described = factory if isinstance(factory, type) or options_class is None else options_class
    doc = (getattr(described, "__doc__", None) or "").strip().split("\n\n")[0]
    schema: dict[str, Any] = {"type": "object", "title": kind}
    if doc:
        schema["description"] = " ".join(doc.split())
    schema["properties"] = properties
    schema["required"] = ["kind", *required]
    # Only a factory that is the attrs class, or says its options class is complete, is known
    # to take no other keys; a function's `options_class` may declare only some of its options.
    schema["additionalProperties"] = not declares_every_option(factory)
    return schema


def _snippet(kind: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """An editor's snippet for a new entry of `kind`: the kind and its required options."""
    body: dict[str, Any] = {"kind": kind}
    for key in schema["required"][1:]:
        option = schema["properties"].get(key, {})
        shape = option.get("type")
        body[key] = [] if shape == "array" else {} if shape == "object" else ""
    snippet = {"label": kind, "body": body}
    if "description" in schema:
        snippet["description"] = schema["description"]
    return snippet


def _grader(kinds: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """A grader entry: `kind` one of `kinds`, then that kind's own schema (`$defs/kinds`)."""
    names = list(kinds)
    return {
        "type": "object",
        "description": "A grader entry: its kind, the kind's options and the common keys.",
        "required": ["kind"],
        "properties": {
            "kind": {
                "enum": names,
                "description": "The grader's kind (`gradekit kinds` lists the installed ones).",
                "enumDescriptions": [kinds[name].get("description", "") for name in names],
            }
        },
        "allOf": [
            {
                # `type` too: `required` holds for any non-object, so a blank entry (null)
                # would take every kind's `then` and an editor would offer every option.
                "if": {
                    "type": "object",
                    "properties": {"kind": {"const": name}},
                    "required": ["kind"],
                },
                "then": {"$ref": f"#/$defs/kinds/{name}"},
            }
            for name in names
        ],
        "defaultSnippets": [_snippet(name, kinds[name]) for name in names],
    }


def suite_schema(registry: Registry | None = None) -> dict[str, Any]:
    """The JSON Schema of a suite file, with the options of every kind `registry` knows."""
    registry = default_registry if registry is None else registry
    kinds = {
        kind: schema for kind in registry.kinds() if (schema := _kind(kind, registry)) is not None
    }
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": "https://gradekit.dev/schema/suite.json",
        "title": "gradekit suite",
        "description": "A gradekit suite file: graders, cases and an optional JSONL dataset.",
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Suite name (default: the file stem)."},
            "description": {"type": "string"},
            "policy": {"$ref": "#/$defs/policy"},
            "threshold": COMMON["threshold"],
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": MAX_SECONDS,
                "default": 60,
            },
            "graders": {"type": "array", "items": _GRADER},
            "cases": {"type": "array", "items": {"$ref": "#/$defs/case"}},
            "dataset": {"type": "string", "description": "JSONL file of more cases."},
            "traces": {
                "description": "OTLP JSON trace files (path or glob): one case per trace.",
                "oneOf": [
                    {"type": "string"},
                    {
                        "type": "object",
                        "required": ["path"],
                        "properties": {
                            "path": {"type": "string"},
                            "case_attribute": {"type": "string"},
                        },
                        "additionalProperties": False,
                    },
                ],
            },
            "sandbox": COMMON["sandbox"],
            "tags": {**_TAGS, "description": "Tags added to every case's."},
        },
        "additionalProperties": False,
        "anyOf": [{"required": ["cases"]}, {"required": ["dataset"]}, {"required": ["traces"]}],
        "$defs": {
            "grader": _grader(kinds),
            "kinds": kinds,
            "policy": _policy(),
            "case": _case(),
            "turn": {
                "type": "object",
                "description": "A turn; keys not listed here are kept as metadata for graders.",
                "properties": _turn_properties(),
            },
            "tool_call": _tool_call(),
            "message": _message(),
            "messages": _messages(),
        },
    }
