"""`traces:` cases: one case per trace of OTLP JSON files, joined by name to the suite's cases.

A trace's conversation (`gradekit.suite.trace_dialects`) becomes the case's `messages`, read by
the transcript rules like any other transcript, and every turn's metadata gets `trace` (the
trace's figures). A case under `cases:` that writes no turns of its own (no `input`, `output`,
`turns` or `messages`) waits for the trace of its name and gives it `expected`, graders, tags
and metadata; when no trace carries its name it is an errored case. A trace no case names is a
case of its own, graded by the suite's graders. Cases are handed out as traces are read.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from gradekit.core.errors import Problem
from gradekit.suite.cases import CaseBuilder
from gradekit.suite.dataset import problem_text
from gradekit.suite.model import Case, KeyPath, describe
from gradekit.suite.trace_dialects import LOOKED_FOR, DialectError, conversation, figures
from gradekit.suite.traces import DEFAULT_CASE_ATTRIBUTE, LineProblem, Trace, read_traces

__all__ = ["OWN_TURNS", "TraceCases", "TraceSource", "parse_traces", "trace_case"]

OWN_TURNS: Final = frozenset({"input", "output", "turns", "messages"})
"""A listed case writing one of these has turns of its own and takes no trace."""


@attrs.frozen
class TraceSource:
    """The files of `traces:` ((path, label) pairs, in order) and the attribute naming cases."""

    files: tuple[tuple[str, str], ...]
    case_attribute: str = DEFAULT_CASE_ATTRIBUTE

    @property
    def label(self) -> str:
        """The files as the user wrote them (the first ones)."""
        shown = ", ".join(label for _, label in self.files[:3])
        return shown + (f" and {len(self.files) - 3} more" if len(self.files) > 3 else "")


def parse_traces(
    value: Any, folder: Path, problems: list[Problem], path: KeyPath = ("traces",)
) -> TraceSource | None:
    """The `traces:` value: a path or glob relative to `folder`, or `{path, case_attribute}`."""
    attribute: Any = DEFAULT_CASE_ATTRIBUTE
    pattern: Any = value
    if isinstance(value, dict):
        unknown = sorted(str(key) for key in value if key not in ("path", "case_attribute"))
        if unknown:
            problems.append(
                Problem(
                    (*path, unknown[0]),
                    f"unknown key '{unknown[0]}'; traces: takes 'path' and 'case_attribute'",
                    key=True,
                )
            )
        pattern = value.get("path")
        attribute = value.get("case_attribute", DEFAULT_CASE_ATTRIBUTE)
        if not isinstance(attribute, str) or not attribute:
            problems.append(
                Problem(
                    (*path, "case_attribute"),
                    f"expected a span attribute's name, got {describe(attribute)}",
                )
            )
            return None
        path = (*path, "path")
    if not isinstance(pattern, str) or not pattern:
        problems.append(
            Problem(
                path,
                f"expected a path or glob of OTLP JSON files, got {describe(pattern)}; "
                "write `traces: traces/*.jsonl` or `traces: {path: ..., case_attribute: ...}`",
            )
        )
        return None
    full = os.path.join(os.path.abspath(folder), pattern)
    found = sorted(glob.glob(full, recursive=True)) if glob.has_magic(pattern) else [full]
    files = [name for name in found if os.path.isfile(name)]
    if not files:
        problems.append(
            Problem(
                path,
                f"no trace file matches '{pattern}' (looked for {full}); "
                "trace paths are relative to the suite file",
            )
        )
        return None
    labels = [
        os.path.relpath(name, folder) if glob.has_magic(pattern) else pattern for name in files
    ]
    return TraceSource(tuple(zip(files, labels, strict=True)), attribute)


@attrs.frozen
class _Template:
    """A listed case waiting for its trace: as written, where, and its location."""

    raw: Mapping[str, Any]
    base: KeyPath
    location: str | None


def trace_case(
    trace: Trace, case_attribute: str = DEFAULT_CASE_ATTRIBUTE
) -> tuple[str, dict[str, Any] | None, str | None]:
    """(name, the case as data: `name`, `messages`, `metadata.trace`, or None, the problem)."""
    name = trace.name(case_attribute)
    try:
        messages = conversation(trace)
    except DialectError as error:
        return name, None, f"{trace.where}: trace {trace.id}: {error}"
    if messages is None:
        return (
            name,
            None,
            f"{trace.where}: trace {trace.id}: no span holds a conversation; looked for "
            f"{LOOKED_FOR}",
        )
    data = {
        "name": name,
        "messages": messages,
        "messages_format": "openai-chat",
        "metadata": {"trace": figures(trace)},
    }
    return name, data, None


@attrs.frozen
class TraceCases:
    """The cases of `source`, built by `builder` (suite graders) or, for a listed case of the
    trace's name, by `listed_builder` from what that case writes (`templates`); `taken`: names
    of listed cases with turns of their own, which no trace may reuse."""

    source: TraceSource
    builder: CaseBuilder
    listed_builder: CaseBuilder
    templates: Mapping[str, _Template] = attrs.field(factory=dict)
    taken: Mapping[str, str] = attrs.field(factory=dict)

    @staticmethod
    def template(raw: Mapping[str, Any], base: KeyPath, location: str | None) -> _Template:
        """A listed case waiting for its trace."""
        return _Template(raw, base, location)

    def cases(self) -> Iterator[Case]:
        """A case per trace, as traces are read; then the listed cases no trace named."""
        seen: dict[str, str] = {}
        for item in read_traces(self.source.files):
            if isinstance(item, LineProblem):
                yield Case(
                    item.where, (), location=item.where, error=f"{item.where}: {item.message}"
                )
                continue
            yield self._case(item, seen)
        for name, template in self.templates.items():
            if name not in seen:
                message = (
                    f"no trace carried the name '{name}' (read the span attribute "
                    f"'{self.source.case_attribute}', then gen_ai.conversation.id, in "
                    f"{self.source.label}); tag the agent run's root span with it, or give the "
                    "case turns of its own"
                )
                yield Case(name, (), location=template.location, error=message)

    def _case(self, trace: Trace, seen: dict[str, str]) -> Case:
        name, data, problem = trace_case(trace, self.source.case_attribute)
        where = trace.where
        if name in seen or name in self.taken:
            also = seen.get(name) or self.taken[name]
            message = (
                f"{where}: trace {trace.id} is named '{name}' as the case at {also} is; "
                "give each agent run its own case name"
            )
            return Case(f"{where}:{trace.id}", (), location=where, error=message)
        seen[name] = where
        if data is None:
            return Case(name, (), location=where, error=problem)
        template = self.templates.get(name)
        if template is None:
            case, problems = self.builder.build(data, name=name, location=where)
        else:
            raw = dict(template.raw)
            metadata = raw.get("metadata")
            raw.update(data)
            raw["name"] = name
            raw["metadata"] = {
                **(metadata if isinstance(metadata, dict) else {}),
                **data["metadata"],
            }
            case, problems = self.listed_builder.build(
                raw, name=name, base=template.base, location=template.location or where
            )
        if case is None:
            base = () if template is None else template.base
            # Named from the rebuilt conversation (`messages[4]`), not from the listed case.
            message = "; ".join(
                problem_text(attrs.evolve(p, path=p.path[len(base) :]))
                if p.path[: len(base)] == base
                else problem_text(p)
                for p in problems
            )
            return Case(
                name,
                (),
                location=where,
                error=f"{where}: trace {trace.id}: {message} (in the conversation rebuilt from "
                "the trace: see it with `gradekit traces`)",
            )
        return case
