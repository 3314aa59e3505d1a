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

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from gradekit._types import GradeResult, Sample
from gradekit.report import case_forms, case_text
from gradekit.report.json_text import STDLIB_WRITER, json_writer
from gradekit.report.model import ResultRecord, TurnReport

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

    @staticmethod
    def sample(sample: Sample, messages: tuple[Any, ...] | None, max_text: int) -> Any:
        """The part a turn's sample adds."""
        return case_text.sample_text(sample, messages, max_text)

    turn = staticmethod(case_text.turn_text)
    metadata = staticmethod(case_text.metadata_text)

    @staticmethod
    def case(  # noqa: PLR0917 - positional like CaseReport: called once per case
        name: str,
        passed: bool,
        score: float,
        turns: Sequence[Any],
        errored: bool,
        error: str | None,
        duration_ms: float,
        metadata: Any,
        tags: tuple[str, ...] = (),
        attempt: int | None = None,
    ) -> str:
        """The case's text."""
        return case_text.case_text(
            name, passed, score, turns, errored, error, duration_ms, metadata, tags, attempt
        )


class FormCaseWriter:
    """Builds a case's JSON form from its parts and writes it in one call of `write`."""

    no_sample: Final[Any] = None

    def __init__(self, write: Callable[[Any], str]) -> None:
        self._write: Final = write

    @staticmethod
    def result_writer(kind: str, name: str, advisory: bool, weight: float) -> ResultWriter:
        """The writer of an entry's results' forms."""
        return case_forms.ResultDataForm(advisory, weight).data

    @staticmethod
    def record(record: ResultRecord) -> Any:
        """A result record's part."""
        return case_forms.record_data(record)

    @staticmethod
    def skipped_turn(turn: TurnReport) -> Any:
        """A skipped turn's part."""
        return case_forms.turn_report_data(turn)

    @staticmethod
    def sample(sample: Sample, messages: tuple[Any, ...] | None, max_text: int) -> Any:
        """The part a turn's sample adds."""
        return case_forms.sample_data(sample, messages, max_text)

    @staticmethod
    def turn(  # noqa: PLR0917 - positional like TurnReport: called once per turn
        index: int,
        passed: bool,
        score: float,
        errored: bool,
        results: list[Any],
        skipped: bool,
        sample: Any,
    ) -> Any:
        """A turn's part, from its results' parts and its sample's."""
        return case_forms.turn_data(index, passed, score, errored, results, skipped, sample)

    @staticmethod
    def metadata(metadata: Mapping[str, Any], max_text: int) -> Any:
        """The case's metadata's part."""
        return case_forms.metadata_data(metadata, max_text)

    def case(  # noqa: PLR0917 - positional like CaseReport: called once per case
        self,
        name: str,
        passed: bool,
        score: float,
        turns: Sequence[Any],
        errored: bool,
        error: str | None,
        duration_ms: float,
        metadata: Any,
        tags: tuple[str, ...] = (),
        attempt: int | None = None,
    ) -> str:
        """The case's text."""
        form = case_forms.case_data(
            name, passed, score, turns, errored, error, duration_ms, metadata, tags, attempt
        )
        return self._write(form)


CaseWriter = TextCaseWriter | FormCaseWriter
"""Either writer."""


def case_writer() -> CaseWriter:
    """The writer whose texts are `json_text`'s: part by part for the standard library's
    format, the whole form at once for a faster writer."""
    write = json_writer()
    return TextCaseWriter() if write is STDLIB_WRITER else FormCaseWriter(write)
