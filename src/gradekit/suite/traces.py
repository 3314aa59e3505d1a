"""Traces from OTLP JSON files: one trace (its spans, and the GenAI log records that carry its
content) per agent run, streamed.

Files are read as the OpenTelemetry Collector's `file` exporter writes them: one
`ExportTraceServiceRequest` (`resourceSpans`) or `ExportLogsServiceRequest` (`resourceLogs`)
as JSON per line, ids in hex (OTLP JSON) or base64 (protobuf's JSON mapping). A file holding one
request written over many lines (an OTLP/HTTP JSON body) is read whole, once.

Plain JSON, no protobuf: one line is read at a time and its spans are grouped by trace id. A
trace is open from its first span until its root span (a span with no parent) has been read
and `GRACE_LINES` more lines after it (log records and late batches come after the root span);
then it is handed out and forgotten. Memory grows with the open traces only, never with the
file. Files holding only log records (the Collector's logs pipeline writing a file of its own)
are read first, and their records held until their spans come: memory then grows with them.
A damaged line is handed out as a `LineProblem` naming `file:line`, and reading goes on.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Iterable, Iterator
from typing import Any, Final

import attrs

from gradekit.core.errors import GradekitError

__all__ = [
    "DEFAULT_CASE_ATTRIBUTE",
    "GRACE_LINES",
    "DialectError",
    "LineProblem",
    "LogRecord",
    "Span",
    "Trace",
    "any_value",
    "read_traces",
]

DEFAULT_CASE_ATTRIBUTE: Final = "gradekit.case"
GRACE_LINES: Final = 64
"""Lines read after a trace's root span before the trace is closed."""
WHOLE_FILE_LIMIT: Final = 256 << 20
"""The largest file read whole when its first line is not a request of its own."""
CONVERSATION_ID: Final = "gen_ai.conversation.id"


@attrs.frozen
class LogRecord:
    """A log record of a trace: its span id (hex, None when it names none), event name and
    decoded attributes and body."""

    span_id: str | None
    event: str | None
    attributes: dict[str, Any]
    body: Any = None


@attrs.define
class Span:
    """One span: ids in hex, times in Unix nanoseconds, decoded attributes, events as
    (name, attributes), `error` when its status is ERROR, and the log records joined to it."""

    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = attrs.field(factory=list)
    error: bool = False
    logs: list[LogRecord] = attrs.field(factory=list)


@attrs.define
class Trace:
    """One trace as read: its id (hex), `where` its first line (`file:line`), its spans in the
    order read, and log records whose span was not (yet) read."""

    id: str
    where: str
    spans: list[Span] = attrs.field(factory=list)
    orphan_logs: list[LogRecord] = attrs.field(factory=list)
    closing_at: int | None = None
    """The line count at which the trace is handed out (its root span read)."""

    def name(self, case_attribute: str = DEFAULT_CASE_ATTRIBUTE) -> str:
        """The case it is: the root's `case_attribute`, else any span's, else the
        conversation id, else the trace id."""
        spans = sorted(self.spans, key=lambda span: span.parent_id is not None)
        for key in (case_attribute, CONVERSATION_ID):
            for span in spans:
                value = span.attributes.get(key)
                if value is not None and value != "":
                    return str(value)
        return self.id

    def attach(self) -> None:
        """Join the waiting log records to their spans by span id."""
        by_id = {span.span_id: span for span in self.spans}
        waiting = []
        for record in self.orphan_logs:
            span = by_id.get(record.span_id) if record.span_id else None
            if span is None:
                waiting.append(record)
            else:
                span.logs.append(record)
        self.orphan_logs = waiting


@attrs.frozen
class LineProblem:
    """A line (or file) that could not be read: `where` is `file:line`."""

    where: str
    message: str


def read_traces(
    files: Iterable[tuple[str, str]], grace: int = GRACE_LINES
) -> Iterator[Trace | LineProblem]:
    """Every trace of `files` ((path, label) pairs, read in order as one stream; files of log
    records only first), each handed out once complete, and every damaged line, in the order
    found."""
    reader = _Reader(grace)
    listed = list(files)
    # Log records written to files of their own wait for their spans: read those files first.
    ordered = sorted(listed, key=lambda file: not _logs_only(file[0]))
    for path, label in ordered:
        yield from reader.file(path, label)
    yield from reader.rest()


def _logs_only(path: str) -> bool:
    """Whether the file's first line is an ExportLogsServiceRequest with no spans."""
    try:
        with open(path, "rb") as file:
            for line in file:
                if not line.isspace():
                    return b'"resourceLogs"' in line and b'"resourceSpans"' not in line
    except OSError:
        pass
    return False


class _Reader:
    def __init__(self, grace: int) -> None:
        self.grace = grace
        self.open: dict[str, Trace] = {}
        self.closed: set[str] = set()
        self.lines = 0

    def file(self, path: str, label: str) -> Iterator[Trace | LineProblem]:
        try:
            handle = open(path, "rb")  # noqa: SIM115 - closed below, a generator holds it
        except OSError as error:
            yield LineProblem(label, f"cannot read the trace file: {os.strerror(error.errno or 0)}")
            return
        with handle:
            first = True
            for number, line in enumerate(handle, start=1):
                if line.isspace():
                    continue
                where = f"{label}:{number}"
                try:
                    request = json.loads(line)
                except (ValueError, UnicodeDecodeError) as error:
                    if first and line.lstrip().startswith(b"{"):
                        whole = _whole(handle, path)
                        if whole is not None:
                            yield from self.request(whole, f"{label}:1")
                            return
                    yield LineProblem(where, f"not a JSON line ({_reason(error)})")
                    first = False
                    continue
                first = False
                yield from self.request(request, where)

    def request(self, request: Any, where: str) -> Iterator[Trace | LineProblem]:
        self.lines += 1
        problem = _request_problem(request)
        if problem is not None:
            yield LineProblem(where, problem)
        else:
            try:
                yield from self.spans(request.get("resourceSpans") or [], where)
                yield from self.logs(request.get("resourceLogs") or [], where)
            except _Bad as bad:
                yield LineProblem(where, str(bad))
        yield from self.due()

    def trace(self, trace_id: str, where: str) -> Trace | None:
        if trace_id in self.closed:
            return None
        trace = self.open.get(trace_id)
        if trace is None:
            trace = self.open[trace_id] = Trace(trace_id, where)
        return trace

    def spans(self, resources: Any, where: str) -> Iterator[LineProblem]:
        late: set[str] = set()
        for raw in _items(resources, "scopeSpans", "spans"):
            span_id = _id(raw.get("spanId"), "spanId", 8)
            trace_id = _id(raw.get("traceId"), "traceId", 16)
            parent = raw.get("parentSpanId")
            status = raw.get("status") or {}
            span = Span(
                span_id,
                _id(parent, "parentSpanId", 8) if parent else None,
                str(raw.get("name", "")),
                _nanos(raw.get("startTimeUnixNano")),
                _nanos(raw.get("endTimeUnixNano")),
                attributes(raw.get("attributes")),
                [
                    (str(event.get("name", "")), attributes(event.get("attributes")))
                    for event in raw.get("events") or []
                    if isinstance(event, dict)
                ],
                error=status.get("code") in ("STATUS_CODE_ERROR", 2),
            )
            trace = self.trace(trace_id, where)
            if trace is None:
                late.add(trace_id)
                continue
            trace.spans.append(span)
            if span.parent_id is None and trace.closing_at is None:
                trace.closing_at = self.lines + self.grace
        for trace_id in sorted(late):
            yield LineProblem(where, _late(trace_id, "a span", self.grace))

    def logs(self, resources: Any, where: str) -> Iterator[LineProblem]:
        late: set[str] = set()
        for raw in _items(resources, "scopeLogs", "logRecords"):
            if not raw.get("traceId"):
                continue  # a log record of no trace: not a GenAI content event
            trace_id = _id(raw.get("traceId"), "traceId", 16)
            span_id = _id(raw["spanId"], "spanId", 8) if raw.get("spanId") else None
            record = LogRecord(
                span_id,
                raw.get("eventName") or None,
                attributes(raw.get("attributes")),
                any_value(raw["body"]) if isinstance(raw.get("body"), dict) else None,
            )
            trace = self.trace(trace_id, where)
            if trace is None:
                late.add(trace_id)
                continue
            trace.orphan_logs.append(record)
        for trace_id in sorted(late):
            yield LineProblem(where, _late(trace_id, "a log record", self.grace))

    def due(self) -> Iterator[Trace]:
        done = [
            trace
            for trace in self.open.values()
            if trace.closing_at is not None and trace.closing_at <= self.lines
        ]
        for trace in done:
            yield self.close(trace)

    def close(self, trace: Trace) -> Trace:
        del self.open[trace.id]
        self.closed.add(trace.id)
        trace.attach()
        return trace

    def rest(self) -> Iterator[Trace]:
        for trace in list(self.open.values()):
            yield self.close(trace)


class DialectError(GradekitError, ValueError):
    """Content a trace holds in a form gradekit does not read (never dropped silently): the
    trace becomes an errored case with this message."""


class _Bad(ValueError):
    """A line whose spans or log records are not OTLP."""


def _late(trace_id: str, what: str, grace: int) -> str:
    return (
        f"{what} of trace {trace_id} came more than {grace} lines after the trace's root span, "
        "when the trace had been read already; write each trace's spans and log records close "
        "together (the Collector's file exporter does)"
    )


def _reason(error: Exception) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 at byte {error.start}"
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at column {error.colno}"
    return str(error)


def _whole(handle: Any, path: str) -> Any:
    """The file as one JSON request (an OTLP/HTTP body written over many lines), or None,
    the file then read on from where it was."""
    position = handle.tell()
    try:
        if os.path.getsize(path) > WHOLE_FILE_LIMIT:
            return None
        handle.seek(0)
        found = json.loads(handle.read())
    except (OSError, ValueError, UnicodeDecodeError):
        found = None
    if isinstance(found, dict):
        return found
    handle.seek(position)
    return None


def _request_problem(request: Any) -> str | None:
    if not isinstance(request, dict):
        return f"expected an OTLP JSON object, got {type(request).__name__}"
    if not ({"resourceSpans", "resourceLogs"} & request.keys()):
        keys = ", ".join(sorted(map(str, request))[:5]) or "none"
        return (
            "not an OTLP ExportTraceServiceRequest or ExportLogsServiceRequest: no "
            f"'resourceSpans' or 'resourceLogs' (keys: {keys})"
        )
    return None


def _items(resources: Any, scopes_key: str, items_key: str) -> Iterator[dict[str, Any]]:
    if not isinstance(resources, list):
        raise _Bad(f"expected a list of resources, got {type(resources).__name__}")
    for resource in resources:
        scopes = resource.get(scopes_key) if isinstance(resource, dict) else None
        for scope in scopes or []:
            items = scope.get(items_key) if isinstance(scope, dict) else None
            for item in items or []:
                if not isinstance(item, dict):
                    raise _Bad(f"a {items_key} entry is not an object: {item!r:.80}")
                yield item


def _id(value: Any, key: str, size: int) -> str:
    """An id as lowercase hex, from hex (OTLP JSON) or base64 (protobuf JSON)."""
    if isinstance(value, str):
        if len(value) == 2 * size:
            try:
                bytes.fromhex(value)
                return value.lower()
            except ValueError:
                pass
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) == size and raw.strip(b"\0"):
            return raw.hex()
    raise _Bad(
        f"{key} {value!r:.60} is not an id of {size} bytes in hex or base64; "
        "write the spans as OTLP JSON"
    )


def _nanos(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def attributes(raw: Any) -> dict[str, Any]:
    """OTLP `attributes` (a list of `{key, value}`) as a dict of plain values."""
    found: dict[str, Any] = {}
    for item in raw or []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            value = item.get("value")
            found[item["key"]] = any_value(value) if isinstance(value, dict) else None
    return found


def any_value(value: dict[str, Any]) -> Any:
    """An OTLP AnyValue as a plain value (lists and dicts for arrays and key-value lists)."""
    for kind, item in value.items():
        if kind in ("stringValue", "boolValue", "doubleValue"):
            return item
        if kind == "intValue":
            return int(item)
        if kind == "arrayValue":
            return [any_value(v) for v in (item or {}).get("values") or [] if isinstance(v, dict)]
        if kind == "kvlistValue":
            return attributes((item or {}).get("values"))
        if kind == "bytesValue":
            return item
    return None
