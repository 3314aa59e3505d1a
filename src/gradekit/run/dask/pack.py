"""What travels between the driver and a Dask worker: the suite's spec, case lines, reports.

Only bytes travel, never pickled graders. A batch goes out as one blob, the JSONL text of its
cases, and its results come back as one blob, the JSONL text of their reports
(`CaseReport.to_dict()`): Dask walks a Python list element by element, so a list of case
reports costs it dozens of times what the same reports as bytes cost (bench/RESULTS.md).

A case line has the shape of a `dataset:` line (`name`, `policy`, and `turns:` with each turn's
input, output, expected, tool_calls, context, workspace and metadata), so a worker builds the
case with the suite loader's own `CaseBuilder`. Its grader entries are written as they were
built (`entry_spec`): kind, name, the common keys as resolved at load, and `config`, the
kind's own options. They cannot be written back as YAML: a kind that declares `threshold` or
`timeout` took those keys into its options at load, and the runner's watchdog timeout of such
a kind was derived from the kind's own. The suite-level entries, which head every turn's
list, travel once per batch in the suite's spec, not on every line.

The cases the driver sends, read from the suite (`CaseSource`): built cases, or a dataset's
lines as the file holds them (`LineBatch`), which the workers build.

A run that grades every case of a suite file into texts alone (`gradekit run -o`, see
`gradekit.run.executor.Routed`) reads its dataset here as bytes: lines are counted (each line
not blank is a case, its position the next one) and sent in blobs, never parsed; each worker
builds the cases of its lines with the suite loader's own `Dataset.case_at`. The suite
file's own cases, before the dataset, are sent built, as every case of any other run is.

The one thing a line's case depends on beyond the line is its `attempt` index, checked
against the lines before it of the same name (`DatasetAttempts`). From the first blob that may
give one (`attempt` in its bytes, or an escaped ASCII letter, which could spell it), the rest
of the file is built here and sent built: until then no line gave an attempt, so the check
starts from nothing, as it does in a local run.
"""

from __future__ import annotations

import collections
import json
import os
import re
from collections.abc import Iterator, Sequence
from typing import IO, Any, Final, NamedTuple

from gradekit.core.context import suite_dir
from gradekit.core.errors import GradekitError
from gradekit.core.types import Sample
from gradekit.core.values import json_problem, utf8
from gradekit.registry.entries import GraderEntry
from gradekit.registry.registry import default_registry
from gradekit.report.json import OUTCOME_LETTERS, CaseText, CaseTexts, case_json
from gradekit.report.model import CaseReport
from gradekit.report.summary import SummaryBuilder
from gradekit.run.collect import entry_kinds
from gradekit.run.executor import Routed
from gradekit.run.settings import Settings
from gradekit.suite.dataset import Dataset, DatasetAttempts, file_lines
from gradekit.suite.model import Case, Suite

__all__ = [
    "ATTEMPT",
    "FORMAT",
    "MESSAGES",
    "OWN_GRADERS",
    "CannotSend",
    "CasePacker",
    "CaseSource",
    "LineBatch",
    "PackedBatch",
    "RoutedBatch",
    "case_texts",
    "dataset_spec",
    "entry_spec",
    "line_cases",
    "pack_batch",
    "pack_reports",
    "routed_texts",
    "suite_folder",
    "suite_spec",
    "unpack_reports",
]

FORMAT: Final = 2
"""The version of this wire format; a worker refuses a spec of another."""

OWN_GRADERS: Final = "gradekit.own_graders"
"""Key of a case line whose turns list every entry (their lists do not start with the
suite-level entries): the worker builds it without prepending the suite's. A dotted key,
which no case field is; taken off the line before the case is built."""

ATTEMPT: Final = "gradekit.attempt"
"""Key of a case line holding the case's attempt index (`Case.attempt`); taken off the line
before the case is built."""

MESSAGES: Final = "gradekit.messages"
"""Key of a case line's turn holding the transcript messages of that turn (`Turn.messages`),
for its report; taken off the turn before the case is built."""

_CHECKED: Final = 4096
"""Distinct entries whose spec the packer remembers."""


class CannotSend(GradekitError, ValueError):
    """A case that cannot travel as a dataset line; the message says why and what to do."""


def entry_spec(entry: GraderEntry) -> dict[str, Any]:
    """A grader entry as data: kind, name, `config` and the common keys that differ from the
    defaults (as resolved at load: `timeout` is the runner's, after any kind's own)."""
    spec: dict[str, Any] = {"kind": entry.kind, "name": entry.name}
    if entry.weight != 1.0:
        spec["weight"] = entry.weight
    if entry.advisory:
        spec["advisory"] = True
    if entry.threshold is not None:
        spec["threshold"] = entry.threshold
    if entry.timeout is not None:
        spec["timeout"] = entry.timeout
    if entry.isolation is not None:
        spec["isolation"] = entry.isolation
    if entry.fail_on_error:
        spec["fail_on_error"] = True
    if entry.config:
        spec["config"] = entry.config
    if entry.location is not None:
        spec["location"] = entry.location
    return spec


def dataset_spec(dataset: Dataset) -> dict[str, Any]:
    """What a worker needs to build the cases of `dataset`'s lines as the suite loader does
    (`Dataset.case_at`): its label, the YAML cases' names it may not reuse, and its builder's
    strictness and suite tags."""
    builder = dataset.builder
    return {
        "label": dataset.label,
        "taken": dict(dataset.taken),
        "strict": builder.strict,
        "tags": list(builder.suite_tags),
    }


def suite_spec(
    suite: Suite,
    settings: Settings,
    jobs: int,
    packer: CasePacker,
    dataset: Dataset | None = None,
) -> bytes:
    """What every batch of `suite` needs on a worker besides its cases: the suite's name,
    file, policy, the run's settings and the suite-level grader entries (checked by
    `packer`), and with `dataset`, how its lines become cases (`dataset_spec`). Raises
    CannotSend when they cannot travel."""
    spec: dict[str, Any] = {
        "format": FORMAT,
        "suite": suite.name,
        # Absolute: a worker's working folder is not the driver's.
        "path": os.path.abspath(suite.path) if suite.path else None,
        "policy": {"mode": suite.policy.mode, "threshold": suite.policy.threshold},
        "timeout": settings.timeout,
        "isolation": settings.isolation,
        "memory_limit_mb": settings.memory_limit_mb,
        "max_text": settings.max_text,
        "jobs": jobs,
        "graders": [packer.entry(entry) for entry in suite.graders],
    }
    if dataset is not None:
        spec["dataset"] = dataset_spec(dataset)
    problem = json_problem(spec)
    if problem is not None:
        raise CannotSend(
            f"the suite's graders cannot be sent to Dask workers: {problem[1]} (their options "
            "must be JSON data); run the suite with executor local"
        )
    return utf8(json.dumps(spec, ensure_ascii=False))


class CasePacker:
    """Writes the cases of one suite as lines for its workers (see the module's docstring)."""

    def __init__(self, suite: Suite) -> None:
        self._shared = suite.graders
        self._folder = suite_folder(suite.path)
        self._specs: collections.OrderedDict[int, tuple[GraderEntry, dict[str, Any]]] = (
            collections.OrderedDict()
        )

    def line(self, case: Case) -> bytes:
        """The case as one JSON line; raises CannotSend when it cannot be one."""
        if not case.turns:
            raise CannotSend("a case without turns cannot be sent to a Dask worker")
        count = len(self._shared)
        shared = all(
            len(turn.graders) >= count
            and all(a is b for a, b in zip(turn.graders, self._shared, strict=False))
            for turn in case.turns
        )
        turns = [
            self._turn(case, index, turn.sample, turn.graders[count:] if shared else turn.graders)
            for index, turn in enumerate(case.turns)
        ]
        for data, turn in zip(turns, case.turns, strict=True):
            if turn.messages is not None:
                data[MESSAGES] = turn.messages
        line: dict[str, Any] = {"name": case.name, "turns": turns}
        if case.attempt is not None:
            line[ATTEMPT] = case.attempt
        if case.metadata:
            line["metadata"] = case.metadata
        if case.tags:
            line["tags"] = list(case.tags)
        if case.policy is not None:
            line["policy"] = {"mode": case.policy.mode, "threshold": case.policy.threshold}
        if not shared:
            line[OWN_GRADERS] = True
        problem = json_problem(line)
        if problem is not None:
            where = problem[1].replace("$", f"case '{case.name}'", 1)
            raise CannotSend(
                f"{problem[0]}: {where}: a case travels to Dask workers as a JSON line and "
                "JSON cannot hold this value; give the case JSON values or grade it with "
                "executor local"
            )
        return utf8(json.dumps(line, ensure_ascii=False))

    def _turn(
        self, case: Case, index: int, sample: Sample, entries: Sequence[GraderEntry]
    ) -> dict[str, Any]:
        if sample.case != case.name or sample.turn != index or len(sample.history) != index:
            raise CannotSend(
                f"case '{case.name}', turn {index}: its sample is not one a suite file gives "
                "(case name, turn index and earlier turns as its history), so it cannot be "
                "sent to a Dask worker as a dataset line; build the suite with "
                "gradekit.load_suite or grade it with executor local"
            )
        turn: dict[str, Any] = {}
        for key in ("input", "output", "expected", "context", "workspace"):
            value = getattr(sample, key)
            if value is not None:
                turn[key] = value
        if sample.tool_calls:
            turn["tool_calls"] = [_call(call) for call in sample.tool_calls]
        if sample.metadata:
            turn["metadata"] = sample.metadata
        if entries:
            turn["graders"] = [self.entry(entry) for entry in entries]
        return turn

    def entry(self, entry: GraderEntry) -> dict[str, Any]:
        """The spec of `entry` (see `entry_spec`), once it is checked to travel."""
        known = self._specs.get(id(entry))
        if known is not None and known[0] is entry:
            self._specs.move_to_end(id(entry))
            return known[1]
        _check_recreated(entry, self._folder)
        spec = entry_spec(entry)
        self._specs[id(entry)] = (entry, spec)
        if len(self._specs) > _CHECKED:
            self._specs.popitem(last=False)
        return spec


def _call(call: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
    for key in ("result", "error", "turn"):
        value = getattr(call, key)
        if value is not None:
            data[key] = value
    return data


def _check_recreated(entry: GraderEntry, folder: str | None) -> None:
    """Refuse an entry whose grader its kind and (empty) config would not give again.

    An entry built by hand around a grader (`GraderEntry(grader=...)`) keeps no options in
    `config`, and a worker would create the kind with its defaults: graded right here, wrong
    there. Checked where it can be: the entry has no options and its grader compares by value.
    """
    grader = entry.grader
    if entry.config or type(grader).__eq__ is object.__eq__:
        return
    try:
        with suite_dir(folder):
            again = default_registry.create(entry.kind, entry.name, entry.config)
    except Exception:  # unknown here too: the worker reports it, naming itself
        return
    if again != grader:
        raise CannotSend(
            f"grader '{entry.name}' (kind '{entry.kind}') cannot be sent to a Dask worker: "
            "its entry keeps no options in `config`, and a worker would create the kind with "
            "its defaults, which differ from this grader; give the entry its options "
            "(GraderEntry(config=...)) or grade it with executor local"
        )


def suite_folder(path: str | None) -> str | None:
    """The folder of the suite file at `path` (None for a suite built in Python)."""
    return os.path.dirname(os.path.abspath(path)) if path else None


def pack_reports(reports: Sequence[CaseReport]) -> bytes:
    """Case reports as one blob: their JSONL text (the lines of a results log)."""
    return utf8("\n".join(case_json(report) for report in reports))


class PackedBatch(NamedTuple):
    """What a worker returns for a batch: its reports as one blob (`pack_reports`), each
    case's outcome (one letter a case: `p`, `f` or `e`), and the batch's summary, counted
    by the worker. The driver can then hand each case on as its text alone, counted already,
    where the run writes only texts (a JSON report, a results log), and make no report of it:
    making the reports again from their JSON was a large part of the driver's work
    (bench/RESULTS.md, "The driver hands texts on")."""

    reports: bytes
    outcomes: str
    summary: SummaryBuilder


def pack_batch(reports: Sequence[CaseReport]) -> PackedBatch:
    """A worker's result for a batch of `reports` (see `PackedBatch`)."""
    summary = SummaryBuilder()
    for report in reports:
        summary.add(report)
    outcomes = "".join(_LETTERS[report.outcome] for report in reports)
    return PackedBatch(pack_reports(reports), outcomes, summary)


def case_texts(packed: PackedBatch, names: Sequence[tuple[str, int | None]]) -> list[CaseText]:
    """The cases of `packed` as their texts, with their outcomes and (`names`) the names and
    attempt indexes the driver sent them with. ValueError when the counts differ."""
    lines = packed.reports.decode().split("\n") if packed.reports else []
    if not len(lines) == len(packed.outcomes) == len(names):
        raise ValueError(
            f"a worker returned {len(lines)} reports and {len(packed.outcomes)} outcomes for "
            f"a batch of {len(names)} cases"
        )
    outcomes = packed.outcomes
    return [
        CaseText(line, OUTCOME_LETTERS[letter], name, attempt)
        for line, letter, (name, attempt) in zip(lines, outcomes, names, strict=True)
    ]


class RoutedBatch(NamedTuple):
    """What a worker returns for a batch of dataset lines it built the cases of itself
    (`gradekit.run.dask.worker.grade_lines`): `batch`, as for cases sent built (`PackedBatch`);
    `kinds`, the grader kinds the cases use (for the report's environment); `warnings`, the
    (key, warning) pairs of the peer frameworks' keys the lines use (`PeerWarnings.keyed`)."""

    batch: PackedBatch
    kinds: tuple[str, ...]
    warnings: tuple[tuple[str, str], ...]


def routed_texts(routed: RoutedBatch, count: int) -> CaseTexts:
    """The cases of `routed` as one text (`CaseTexts`, the worker's JSONL as it came):
    ValueError unless there are `count` of them, each with its outcome."""
    packed = routed.batch
    text = packed.reports.decode()
    lines = text.count("\n") + 1 if text else 0
    if not lines == len(packed.outcomes) == count:
        raise ValueError(
            f"a worker returned {lines} reports and {len(packed.outcomes)} outcomes for a "
            f"batch of {count} cases"
        )
    return CaseTexts(text, packed.outcomes)


_LETTERS: Final[dict[str, str]] = {outcome: letter for letter, outcome in OUTCOME_LETTERS.items()}


def unpack_reports(blob: bytes) -> list[CaseReport]:
    """The case reports of a blob made by `pack_reports`."""
    return [CaseReport.from_dict(json.loads(line)) for line in blob.split(b"\n") if line]


_MAY_ATTEMPT: Final = re.compile(rb"attempt|\\u00[67]")
"""Bytes of a blob whose lines may give an `attempt` (the key plainly, or a letter escaped)."""


class LineBatch(NamedTuple):
    """Dataset lines sent as the file holds them: `lines` from line number `first` (blank
    lines included), holding `total` cases, the first at position `start` of the run."""

    start: int
    total: int
    first: int
    lines: bytes


def line_cases(
    dataset: Dataset, first: int, lines: bytes, attempts: DatasetAttempts | None = None
) -> list[Case]:
    """The cases of the dataset's `lines` (as the file holds them, from line number `first`),
    built as `Dataset.cases()` builds them, their attempts checked by `attempts` (a batch
    sent as lines gives none): what a worker builds of a `LineBatch`."""
    checked = DatasetAttempts() if attempts is None else attempts
    numbered = enumerate(file_lines(lines), start=first)
    return [dataset.case_at(line, n, checked) for n, line in numbered if not line.isspace()]


class CaseSource:
    """The cases of `suite` to send, in order, `size` at a time (`take`): built (with their
    positions), or, with `routed`, the dataset's lines (`LineBatch`) where they can be."""

    def __init__(self, suite: Suite, routed: Routed | None) -> None:
        self._routed = routed
        self._cases: Iterator[Case] | None = iter(
            suite.cases() if routed is None else routed.cases.before
        )
        self._position = 0
        self._file: IO[bytes] | None = None
        self._number = 0  # the line number of the last line read
        self._attempts: DatasetAttempts | None = None  # once lines are built here
        self._opened = False  # the dataset was opened (or found unreadable)

    def take(self, size: int) -> list[tuple[int, Case]] | LineBatch | None:
        """Up to `size` cases: built, or a batch of lines; None once there are no more."""
        while True:
            if self._cases is not None:
                cases = self._built(self._cases, size)
                if cases:
                    return cases
                self._cases = None
                if self._opened or not self._open():
                    return None
                if self._cases is not None:  # the dataset could not be read: its case
                    continue
            assert self._routed is not None and self._routed.cases.dataset is not None
            batch = self._lines(size)
            if batch is None:
                return None
            if self._attempts is None and _MAY_ATTEMPT.search(batch.lines) is None:
                self._routed.reserve(batch.total)
                self._position += batch.total
                return batch
            return self._built_lines(self._routed.cases.dataset, batch)

    def close(self) -> None:
        """Close the dataset file (if open)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def _built(self, cases: Iterator[Case], size: int) -> list[tuple[int, Case]]:
        found: list[tuple[int, Case]] = []
        for case in cases:
            found.append((self._position, case))
            self._position += 1
            if len(found) >= size:
                break
        if self._routed is not None:  # cases built here: their kinds noted here
            self._routed.reserve(len(found))
            kinds: set[str] = set()
            for _, case in found:
                for turn in case.turns:
                    entry_kinds(turn.graders, kinds)
            self._routed.note_kinds(kinds)
        return found

    def _open(self) -> bool:
        """Open the dataset after the suite file's cases; False without one. A file that
        cannot be read gives the loader's errored case for it."""
        dataset = None if self._routed is None else self._routed.cases.dataset
        if dataset is None:
            return False
        self._opened = True
        try:
            self._file = dataset.path.open("rb")
        except OSError:
            self._cases = dataset.cases()  # the loader's one case saying why, and no more
        return True

    def _lines(self, size: int) -> LineBatch | None:
        file = self._file
        if file is None:
            return None
        lines = []
        count = 0
        first = self._number + 1
        for line in file:
            lines.append(line)
            if not line.isspace():
                count += 1
                if count >= size:
                    break
        self._number += len(lines)
        if not count:
            self.close()
            return None
        return LineBatch(self._position, count, first, b"".join(lines))

    def _built_lines(self, dataset: Dataset, batch: LineBatch) -> list[tuple[int, Case]]:
        if self._attempts is None:
            self._attempts = DatasetAttempts()
        cases = line_cases(dataset, batch.first, batch.lines, self._attempts)
        return self._built(iter(cases), len(cases))
