"""YAML with positions and limits: safe loading that can tell where any value or key was
written, and the limits a suite is checked against before it is built.

The suite loader reports every problem as `FILE:LINE:COLUMN`, so it needs the position of a
node by its path (`("cases", 2, "graders", 0)`). `load_located` parses with a safe loader (never
an unsafe one): libyaml's C parser where pyyaml was built with it (`yaml.__with_libyaml__`,
as the wheels are), else the pure-Python one. It checks the node graph against the limits
below, builds the plain data, and keeps the node tree, so that `Located.where` finds a position
by walking the path down it, only for the paths it is asked about.

The limits make hostile or broken input a clean error at its position: never a hang, a
traceback or a crash (dataset lines, read as JSON by `gradekit.suite.dataset`, keep the same):

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

import attrs
import yaml
from yaml.constructor import SafeConstructor

from gradekit.core.errors import ConfigError, Problem
from gradekit.core.values import overflow_problem

__all__ = [
    "MAX_ALIAS_VALUES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "LimitError",
    "Located",
    "LocatingLoader",
    "OverflowingNumber",
    "bounded",
    "check_aliases",
    "line_column",
    "load_located",
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


_STR_TAG: Final = "tag:yaml.org,2002:str"
_FAST: Final = bool(getattr(yaml, "__with_libyaml__", False))
_NO_KEY: Final = object()


class _Located:
    """What both loaders add to pyyaml's: `located()`."""

    def located(self, text: str) -> Located:
        """Load the single document of the stream, with positions (raises yaml.YAMLError)."""
        node = self.get_single_node()  # type: ignore[attr-defined]
        if node is None:
            return Located(None, None, ())
        # An alias needs an anchor: without `&` there is no sharing, no cycle, no expansion.
        if "&" in text:
            check_aliases(node, text)
        duplicates = walk_checks(node)
        try:
            data = self.construct_document(node)  # type: ignore[attr-defined]
        except OverflowingNumber as error:
            error.path = path_to(node, error.node)  # looked up only for the error
            raise
        return Located(data, node, tuple(duplicates))


@bounded
class PyLocatingLoader(_Located, yaml.SafeLoader):
    """The safe loader with positions, in pure Python."""


LocatingLoader: type[Any] = PyLocatingLoader
if _FAST:

    @bounded
    class CLocatingLoader(_Located, yaml.CSafeLoader):
        """The safe loader with positions, parsed and composed by libyaml (C)."""

    LocatingLoader = CLocatingLoader


@bounded
class _KeyConstructor(SafeConstructor):
    """Constructs key nodes again when a path is looked up (keys that are not plain text)."""


@attrs.frozen
class Located:
    """A parsed YAML document: `data`, and the node tree it was built from (`root`), for the
    1-based (line, column) of any value or key by its path. `duplicates` are the keys written
    twice in one mapping: (path, position, message)."""

    data: Any
    root: yaml.Node | None
    duplicates: tuple[tuple[Path, Mark, str], ...] = ()
    _index: dict[int, dict[Any, tuple[yaml.Node, yaml.Node]]] = attrs.field(
        factory=dict, init=False, repr=False, eq=False
    )

    def where(self, path: Path, *, key: bool = False) -> Mark:
        """The position of the key (when `key` and it was written) or value at `path`, else of
        the nearest ancestor that was written (a missing key points at its mapping)."""
        node, key_node, found = self._descend(path)
        if key and found and key_node is not None:
            return mark(key_node)
        return (1, 1) if node is None else mark(node)

    def has_key(self, path: Path) -> bool:
        """Whether the last part of `path` is a key written in the file."""
        _, key_node, found = self._descend(path)
        return found and key_node is not None

    def _descend(self, path: Path) -> tuple[yaml.Node | None, yaml.Node | None, bool]:
        """(the deepest node on `path`, the key node that led to it, whether it is the end)."""
        node, key_node = self.root, None
        for part in path:
            child = child_key = None
            if isinstance(node, yaml.MappingNode):
                entry = self._entries(node).get(part) if _hashable(part) else None
                if entry is not None:
                    child_key, child = entry
            elif (
                isinstance(node, yaml.SequenceNode)
                and isinstance(part, int)
                and 0 <= part < len(node.value)
            ):
                child = node.value[part]
            if child is None:
                return node, key_node, False
            node, key_node = child, child_key
        return node, key_node, True

    def _entries(self, node: yaml.MappingNode) -> dict[Any, tuple[yaml.Node, yaml.Node]]:
        """key -> (key node, value node) of a mapping, indexed on first use. Merges (`<<`) were
        flattened into node.value by construction, merged entries first: the last entry for a
        key is the one whose value was kept."""
        entries = self._index.get(id(node))
        if entries is None:
            entries = {}
            for key_node, value_node in node.value:
                key = _key_of(key_node)
                if key is not _NO_KEY:
                    entries[key] = (key_node, value_node)
            self._index[id(node)] = entries
        return entries


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _key_of(node: yaml.Node) -> Any:
    """The key a key node stands for (`null: x` is None), or `_NO_KEY`."""
    if isinstance(node, yaml.ScalarNode) and node.tag == _STR_TAG:
        return node.value
    try:
        key = _KeyConstructor().construct_object(node, deep=True)
        hash(key)
    except (yaml.YAMLError, TypeError):
        return _NO_KEY
    return key


def load_located(text: str, source: str, *, fast: bool = True) -> Located:
    """Parse `text` (the file `source`) safely; a syntax error is a ConfigError at its position.

    `fast` uses libyaml's C parser when pyyaml has it; False forces the pure-Python one.
    """
    loader: Any = None
    try:
        loader = (LocatingLoader if fast else PyLocatingLoader)(text)
        located: Located = loader.located(text)
        return located
    except OverflowingNumber as error:
        line, column = mark(error.node)
        problem = Problem(error.path, error.problem or "", where=f"{source}:{line}:{column}")
        raise ConfigError(f"invalid suite file {source}", [problem], source=source) from None
    except yaml.MarkedYAMLError as error:
        raise _marked_error(error, text, source) from None
    except yaml.reader.ReaderError as error:
        position = error.position
        if LocatingLoader is not PyLocatingLoader and fast:  # libyaml gives a byte offset
            position = len(text.encode("utf-8")[:position].decode("utf-8", errors="ignore"))
        line, column = line_column(text, position)
        character = error.character
        shown = f"#x{character:04x}" if isinstance(character, int) else repr(character)
        message = (
            f"invalid YAML: unacceptable character {shown} ({error.reason}); remove it, or "
            "write it as an escape in a double-quoted string"
        )
        raise _syntax_error(source, line, column, message) from None
    except yaml.YAMLError as error:
        message = f"invalid YAML: {' '.join(str(error).split())}; fix the YAML syntax"
        raise _syntax_error(source, 1, 1, message) from None
    except RecursionError:  # the pure-Python composer nests a call per level
        index = loader.get_mark().index if loader is not None and not fast else 0
        line, column = line_column(text, index)
        raise _syntax_error(source, line, column, f"invalid YAML: {too_deep()}") from None
    finally:
        if loader is not None:
            loader.dispose()


def _marked_error(error: yaml.MarkedYAMLError, text: str, source: str) -> ConfigError:
    """A syntax error or a limit, placed; libyaml's messages worded like pyyaml's."""
    mark = error.problem_mark or error.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = error.problem or error.context or ""
    context = error.context if error.context_mark is not None else None
    if "maximum nesting depth" in problem:  # libyaml's own limit (1000 levels)
        return _syntax_error(source, line, column, f"invalid YAML: {too_deep()}")
    if isinstance(error, LimitError):
        return _syntax_error(source, line, column, f"invalid YAML: {problem}")
    if problem == "found character that cannot start any token" and mark is not None:
        # libyaml does not say which (the pure-Python parser does): a tab, most often.
        found = text[offset(text, mark.line, mark.column) :][:1]
        problem, context = f"found character {found!r} that cannot start any token", None
    message = f"invalid YAML: {problem}"
    if context and error.problem and error.context_mark is not None:
        at = error.context_mark
        message += f" ({context} at line {at.line + 1}, column {at.column + 1})"
    return _syntax_error(source, line, column, message + "; fix the YAML syntax")


def _syntax_error(source: str, line: int, column: int, message: str) -> ConfigError:
    problem = Problem((), message, where=f"{source}:{line}:{column}")
    return ConfigError(f"invalid suite file {source}", [problem], source=source)
