"""YAML with positions: safe loading that can tell where any value or key was written.

The suite loader reports every problem as `FILE:LINE:COLUMN`, so it needs the position of a
node by its path (`("cases", 2, "graders", 0)`). `load_located` parses with a safe loader (never
an unsafe one): libyaml's C parser where pyyaml was built with it (`yaml.__with_libyaml__`,
as the wheels are), else the pure-Python one. It checks the node graph against the limits of
`gradekit.suite.yaml_checks` (nesting, aliases, integers, dates), builds the plain data, and keeps
the node tree, so that `Located.where` finds a position by walking the path down it, only for
the paths it is asked about.
"""

from __future__ import annotations

from typing import Any, Final

import attrs
import yaml
from yaml.constructor import SafeConstructor

from gradekit._errors import ConfigError, Problem
from gradekit.suite.yaml_checks import (
    MAX_ALIAS_VALUES,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    LimitError,
    OverflowingNumber,
    bounded,
    check_aliases,
    line_column,
    mark,
    offset,
    path_to,
    too_deep,
    walk_checks,
)

__all__ = [
    "MAX_ALIAS_VALUES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "Located",
    "LocatingLoader",
    "load_located",
]

Path = tuple[Any, ...]
Mark = tuple[int, int]

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
