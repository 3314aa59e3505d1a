"""YAML with positions: safe loading that remembers where every value and key was written.

The suite loader reports every problem as `FILE:LINE:COLUMN`, so it needs the position of any
node by its path (`("cases", 2, "graders", 0)`). `load_located` parses with a `yaml.SafeLoader`
subclass (never the unsafe loaders), builds the plain data, then walks the node tree once to
record 1-based positions of each value node and each key node by path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs
import yaml

from gradekit._errors import ConfigError, Problem

__all__ = ["Located", "LocatingLoader", "load_located"]

Path = tuple[Any, ...]
Mark = tuple[int, int]

# Alias-heavy documents can expand to far more paths than nodes; stop recording past this many
# (problems then point at the nearest recorded ancestor).
MAX_PATHS: Final = 1_000_000
_MERGE_TAG: Final = "tag:yaml.org,2002:merge"


@attrs.frozen
class Located:
    """A parsed YAML document: `data` plus 1-based (line, column) of values and keys by path."""

    data: Any
    values: Mapping[Path, Mark]
    keys: Mapping[Path, Mark]
    duplicates: tuple[tuple[Path, Mark, str], ...] = ()

    def where(self, path: Path, *, key: bool = False) -> Mark:
        """The position of the key (when `key` and it was written) or value at `path`, else of
        the nearest ancestor that was written (a missing key points at its mapping)."""
        if key and path in self.keys:
            return self.keys[path]
        while path and path not in self.values:
            path = path[:-1]
        return self.values.get(path, (1, 1))


class LocatingLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that can also report the position of every node it loaded."""

    def located(self) -> Located:
        """Load the single document of the stream, with positions (raises yaml.YAMLError)."""
        node = self.get_single_node()
        if node is None:
            return Located(None, {(): (1, 1)}, {})
        duplicates: list[tuple[Path, Mark, str]] = []
        _find_duplicates(node, (), duplicates, set())
        data = self.construct_document(node)
        self._values: dict[Path, Mark] = {}
        self._keys: dict[Path, Mark] = {}
        self._record(node, (), set())
        return Located(data, self._values, self._keys, tuple(duplicates))

    def _record(self, node: yaml.Node, path: Path, stack: set[int]) -> None:
        if len(self._values) >= MAX_PATHS or id(node) in stack:
            return
        self._values[path] = _mark(node)
        stack.add(id(node))
        if isinstance(node, yaml.MappingNode):
            # Merges (`<<`) were flattened into node.value by construction, merged entries
            # first, so the last entry for a key is the one whose value was kept.
            for key_node, value_node in node.value:
                key = _key(self, key_node)
                self._keys[(*path, key)] = _mark(key_node)
                self._record(value_node, (*path, key), stack)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._record(item, (*path, index), stack)
        stack.discard(id(node))


def _mark(node: yaml.Node) -> Mark:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _key(loader: LocatingLoader, node: yaml.Node) -> Any:
    key = loader.construct_object(node, deep=True)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _find_duplicates(
    node: yaml.Node, path: Path, found: list[tuple[Path, Mark, str]], seen: set[int]
) -> None:
    """Keys written twice in one mapping (PyYAML would keep the last one silently)."""
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        first: dict[tuple[str, Any], Mark] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                continue
            ident = (key_node.tag, key_node.value)
            if ident in first:
                line, column = first[ident]
                message = (
                    f"duplicate key '{key_node.value}' (first at line {line}, column {column}); "
                    "remove one of them"
                )
                found.append(((*path, key_node.value), _mark(key_node), message))
            else:
                first[ident] = _mark(key_node)
            _find_duplicates(value_node, (*path, key_node.value), found, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _find_duplicates(item, (*path, index), found, seen)


def load_located(text: str, source: str) -> Located:
    """Parse `text` (the file `source`) safely; a syntax error is a ConfigError at its position."""
    loader = LocatingLoader(text)
    try:
        return loader.located()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        message = f"invalid YAML: {error.problem or error.context}"
        if error.context and error.problem and error.context_mark is not None:
            context = error.context_mark
            message += f" ({error.context} at line {context.line + 1}, column {context.column + 1})"
        raise _syntax_error(source, line, column, message + "; fix the YAML syntax") from None
    except yaml.YAMLError as error:
        position = getattr(error, "position", None)
        line, column = _line_column(text, position) if isinstance(position, int) else (1, 1)
        message = f"invalid YAML: {error}; fix the file's characters"
        raise _syntax_error(source, line, column, message) from None
    finally:
        loader.dispose()


def _line_column(text: str, position: int) -> Mark:
    line = text.count("\n", 0, position) + 1
    return line, position - (text.rfind("\n", 0, position) + 1) + 1


def _syntax_error(source: str, line: int, column: int, message: str) -> ConfigError:
    problem = Problem((), message, where=f"{source}:{line}:{column}")
    return ConfigError(f"invalid suite file {source}", [problem], source=source)
