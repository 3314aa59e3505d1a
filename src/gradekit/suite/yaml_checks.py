"""The limits a YAML suite is checked against before it is built, so that hostile or broken
input is a clean error at its position: never a hang, a traceback or a crash.

- `MAX_DEPTH` levels of nested mappings and lists (gradekit's own code walks values
  recursively; libyaml itself stops at 1000);
- `MAX_ALIAS_VALUES` values added by aliases beyond the ones written (a "billion laughs"
  document expands a few lines into billions of values), and no alias inside the value it
  names;
- integers of at most `MAX_INT_DIGITS` digits (Python's own limit for reading them), dates
  that exist, and floats that fit one: `1.0e+999` is an error (`OverflowingNumber`), not an
  infinity no one wrote (`.inf` is written, and kept).
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterator
from typing import Any, Final

import yaml
from yaml.constructor import SafeConstructor

from gradekit._numbers import overflow_problem

__all__ = [
    "MAX_ALIAS_VALUES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "LimitError",
    "OverflowingNumber",
    "bounded",
    "check_aliases",
    "line_column",
    "mark",
    "offset",
    "path_to",
    "too_deep",
    "walk_checks",
]

Path = tuple[Any, ...]
Mark = tuple[int, int]

MAX_DEPTH: Final = 100
MAX_ALIAS_VALUES: Final = 1_000_000
MAX_INT_DIGITS: Final = 4300
_MERGE_TAG: Final = "tag:yaml.org,2002:merge"
_ANCHOR: Final = re.compile(r"&([^\s,\[\]{}]+)")
_BREAK: Final = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # YAML 1.1's line breaks


class LimitError(yaml.MarkedYAMLError):
    """A document past one of the limits, at the node where it is."""

    def __init__(self, node: yaml.Node, problem: str) -> None:
        super().__init__(problem=problem, problem_mark=node.start_mark)


class OverflowingNumber(LimitError):
    """A float literal too large for a float, at its node; `path` is set once it is found."""

    def __init__(self, node: yaml.Node, problem: str) -> None:
        super().__init__(node, problem)
        self.node = node
        self.path: Path = ()


def _construct_float(loader: Any, node: yaml.ScalarNode) -> float:
    value: float = SafeConstructor.construct_yaml_float(loader, node)
    if math.isinf(value) and ".inf" not in node.value.lower():
        raise OverflowingNumber(
            node,
            f"{overflow_problem(node.value)}; write .inf if infinity is meant, or quote it to "
            "keep it as text",
        )
    return value


def path_to(root: yaml.Node, target: yaml.Node) -> Path:
    """The path (keys and indexes) from `root` to the node `target`; () when not found."""
    stack: list[tuple[yaml.Node, Path]] = [(root, ())]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
                stack.append((value_node, (*path, key)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, (*path, index)) for index, item in enumerate(node.value))
    return ()


def _construct_int(loader: Any, node: yaml.ScalarNode) -> int:
    digits = sum(character.isdigit() for character in node.value)
    if digits > MAX_INT_DIGITS:
        raise LimitError(
            node,
            f"an integer of {digits} digits (at most {MAX_INT_DIGITS}); quote it to keep it as "
            "text",
        )
    value: int = SafeConstructor.construct_yaml_int(loader, node)
    return value


def _construct_timestamp(loader: Any, node: yaml.ScalarNode) -> datetime.date | datetime.datetime:
    try:
        value: datetime.date | datetime.datetime = SafeConstructor.construct_yaml_timestamp(
            loader, node
        )
    except (ValueError, OverflowError) as error:
        problem = f"'{node.value}' is not a valid date or time ({error})"
        raise LimitError(node, f"{problem}; quote it to keep it as text") from None
    return value


def bounded(cls: type[Any]) -> type[Any]:
    """`cls` with integers, dates and floats that fail as a YAML error at their node (not a
    bare ValueError from the middle of pyyaml, nor a silent infinity)."""
    cls.add_constructor("tag:yaml.org,2002:int", _construct_int)
    cls.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)
    cls.add_constructor("tag:yaml.org,2002:float", _construct_float)
    return cls


def mark(node: yaml.Node) -> Mark:
    """1-based (line, column) where `node` starts, as errors name it."""
    return node.start_mark.line + 1, node.start_mark.column + 1


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            yield key_node
            yield value_node
    elif isinstance(node, yaml.SequenceNode):
        yield from node.value


def check_aliases(root: yaml.Node, text: str) -> None:
    """Refuse an alias used inside the value it names, and aliases that add more than
    `MAX_ALIAS_VALUES` values: one pass over the distinct nodes (each alias is the node it
    names), sizing each subtree as aliases expand it."""
    size: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        ident = id(node)
        if children_done:
            open_nodes.discard(ident)
            total = 1 + sum(size[id(child)] for child in _children(node))
            size[ident] = total
            if total > MAX_ALIAS_VALUES + len(size):
                raise LimitError(
                    node,
                    f"aliases expand this document to more than {MAX_ALIAS_VALUES:,} values "
                    "beyond the ones written; write the values out, or reuse fewer of them",
                )
            continue
        if ident in size:
            continue
        if ident in open_nodes:
            raise LimitError(node, _recursive(node, text))
        open_nodes.add(ident)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                raise LimitError(child, _recursive(child, text))
            if id(child) not in size:
                stack.append((child, False))


def _recursive(node: yaml.Node, text: str) -> str:
    """The problem of a recursive alias, naming its anchor (the node starts at `&name`)."""
    match = _ANCHOR.match(text, offset(text, node.start_mark.line, node.start_mark.column))
    named = f"the alias '*{match.group(1)}'" if match else "an alias"
    return f"{named} is used inside the value it names (a recursive alias); write the value out"


def offset(text: str, line: int, column: int) -> int:
    """The index in `text` of 0-based (line, column), lines broken as YAML breaks them."""
    start = 0
    for number, found in enumerate(_BREAK.finditer(text), start=1):
        if number > line:
            break
        start = found.end()
    return start + column


def walk_checks(root: yaml.Node) -> list[tuple[Path, Mark, str]]:
    """Nesting within `MAX_DEPTH`, and keys written twice in one mapping (pyyaml would keep
    the last one silently), in one pass over the document as aliases expand it (bounded by
    `check_aliases`). Scalars are not visited: only collections nest or hold keys."""
    found: list[tuple[Path, Mark, str]] = []
    stack: list[tuple[yaml.Node, Path]] = [(root, ())]
    seen: set[int] = set()  # a shared mapping's duplicates are reported once
    while stack:
        node, path = stack.pop()
        if len(path) >= MAX_DEPTH:
            raise LimitError(node, too_deep())
        if isinstance(node, yaml.MappingNode):
            pairs = node.value
            if id(node) not in seen:
                seen.add(id(node))
                _duplicates(pairs, path, found)
            for key_node, value_node in pairs:
                if not isinstance(key_node, yaml.ScalarNode):
                    stack.append((key_node, (*path, None)))
                if not isinstance(value_node, yaml.ScalarNode):
                    key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
                    stack.append((value_node, (*path, key)))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                if not isinstance(item, yaml.ScalarNode):
                    stack.append((item, (*path, index)))
    found.sort(key=lambda item: item[1])  # file order
    return found


def _duplicates(
    pairs: list[tuple[yaml.Node, yaml.Node]], path: Path, found: list[tuple[Path, Mark, str]]
) -> None:
    first: dict[tuple[str, Any], Mark] = {}
    for key_node, _ in pairs:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
            continue
        ident = (key_node.tag, key_node.value)
        if ident in first:
            line, column = first[ident]
            message = (
                f"duplicate key '{key_node.value}' (first at line {line}, column {column}); "
                "remove one of them"
            )
            found.append(((*path, key_node.value), mark(key_node), message))
        else:
            first[ident] = mark(key_node)


def too_deep() -> str:
    """The message for a value nested past `MAX_DEPTH`, saying what to do."""
    return f"values are nested more than {MAX_DEPTH} levels deep; flatten this value"


def line_column(text: str, position: int) -> Mark:
    """1-based (line, column) of the index `position` in `text`."""
    line, start = 1, 0
    for found in _BREAK.finditer(text, 0, position):
        line, start = line + 1, found.end()
    return line, position - start + 1
