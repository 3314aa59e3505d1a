"""How a batch writes each case's JSON text from its parts, in the format `json_text` writes.

Two writers, one interface: `TextCaseWriter` writes the text part by part in the standard
library's format (`case_text`: faster there than building the case's form and encoding it),
`FormCaseWriter` builds the case's JSON form (`case_forms`) and writes it in one call of a
fast writer (orjson). `case_writer()` picks the one matching `json_text`, so a streamed case's
text is always `case_json` of its report, whichever way it was written.

The parts (a result's, a turn's, a sample's, the metadata's) are texts for the one and JSON
forms for the other; a batch only passes them from one call to the next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

from gradekit._types import GradeResult, Sample
from gradekit.report import case_forms, case_text
from gradekit.report.json_text import STDLIB_WRITER, json_writer
from gradekit.report.model import ResultRecord, TurnReport
from gradekit.report.samples import json_value, sample_json

__all__ = ["CaseWriter", "FormCaseWriter", "TextCaseWriter", "case_writer"]

ResultWriter = Callable[[GradeResult, float], Any]
"""Writes one result of an entry's (with its duration in ms) as a part."""


class TextCaseWriter:
    """Writes a case's text part by part, in the standard library's format."""

    no_sample: Final[Any] = ""
    """The part of a turn without a sample."""

    @staticmethod
    def result_writer(kind: str, name: str, advisory: bool, weight: float) -> ResultWriter:
        """The writer of an entry's results (what they share is written once)."""
        return case_text.ResultForm(kind, name, advisory, weight).text

    record = staticmethod(case_text.record_text)
    skipped_turn = staticmethod(case_text.turn_report_text)
    sample = staticmethod(case_text.sample_text)
    turn = staticmethod(case_text.turn_text)
    metadata = staticmethod(case_text.metadata_text)
    case = staticmethod(case_text.case_text)


class FormCaseWriter:
    """Builds a case's JSON form from its parts and writes it in one call of `write`."""

    no_sample: Final[Any] = None

    def __init__(self, write: Callable[[Any], str]) -> None:
        self._write: Final = write

    @staticmethod
    def result_writer(kind: str, name: str, advisory: bool, weight: float) -> ResultWriter:
        """The writer of an entry's results' forms."""
        return case_forms.ResultDataForm(advisory, weight).data

    record = staticmethod(ResultRecord.to_dict)
    skipped_turn = staticmethod(TurnReport.to_dict)
    sample = staticmethod(sample_json)
    turn = staticmethod(case_forms.turn_data)
    metadata = staticmethod(json_value)

    def case(self, *parts: Any, **named: Any) -> str:
        """The case's text: its form (`case_data`, the parts in `CaseReport`'s order)
        written at once."""
        return self._write(case_forms.case_data(*parts, **named))


class CaseWriter(Protocol):
    """What both writers do. Parts are texts or JSON forms, by writer: a batch only passes
    each from one call to the next."""

    @property
    def no_sample(self) -> Any:
        """The part of a turn without a sample."""

    def result_writer(self, kind: str, name: str, advisory: bool, weight: float) -> ResultWriter:
        """The writer of an entry's results."""

    def record(self, record: ResultRecord) -> Any:
        """A result record's part."""

    def skipped_turn(self, turn: TurnReport) -> Any:
        """A skipped turn's part."""

    def sample(self, sample: Sample, messages: tuple[Any, ...] | None, max_text: int) -> Any:
        """The part a turn's sample adds."""

    def turn(  # noqa: PLR0917 - positional like TurnReport
        self,
        index: int,
        passed: bool,
        score: float,
        errored: bool,
        results: list[Any],
        skipped: bool,
        sample: Any,
    ) -> Any:
        """A turn's part, from its results' parts and its sample's."""

    def metadata(self, metadata: Mapping[str, Any], max_text: int) -> Any:
        """The case's metadata's part."""

    def case(  # noqa: PLR0917 - positional like CaseReport
        self,
        name: str,
        passed: bool,
        score: float,
        turns: Any,
        errored: bool,
        error: str | None,
        duration_ms: float,
        metadata: Any,
        tags: tuple[str, ...] = (),
        attempt: int | None = None,
    ) -> str:
        """The case's text."""


def case_writer() -> CaseWriter:
    """The writer whose texts are `json_text`'s: part by part for the standard library's
    format, the whole form at once for a faster writer."""
    write = json_writer()
    return TextCaseWriter() if write is STDLIB_WRITER else FormCaseWriter(write)
