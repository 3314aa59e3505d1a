"""The data the HTML viewer embeds: a compact index of the case list, read when the page
opens, and every case's JSON form, in chunks parsed only when one of their cases is opened.

Both are `<script>` elements of a non-executable type, so the browser stores their text
without building any markup from it. The index is one JSON object of columns:

    {"v": 1, "n": 3, "names": ["a", "b", "c"], "outcome": "pfe", "score": [1.0, 0.5, null],
     "ms": [0.4, 1.2, 0.3], "turns": [1, 1, 2], "graders": ["numeric", "code"],
     "gc": [1, 1, 2], "gv": [0, 1, 0, 5], "tags": [], "tc": [0, 0, 0], "tv": [],
     "chunks": [0]}

`outcome` holds one letter a case (pass, fail, error); an errored case's `score` is null (it
has none to show). `gc[i]` counts case i's entries in `gv`, each `grader id * 3 + outcome`
(0 pass, 1 fail, 2 error: that grader's worst result in the case); `tc`/`tv` list tag ids the
same way. With a baseline (`SuiteReport.baseline`), `"baseline"` holds one letter a case:
`r` regressed, `f` fixed, `n` new, `u` unchanged, and each case line its mark (the JSON
report's `baseline` key).

What the case list filters and shows beyond that, each only when some case has it: `mk` the
case metadata's `key=value` pairs (top-level scalars, and one level into a mapping as
`key.sub=value`; a key of more than `MAX_METADATA_VALUES` values is left out), listed per case
in `mc`/`mv` as the tags are; `tok`, `cost`, `ams` the tokens, cost and agent duration the
case's metadata carries (`usage`), null where it does not.

Searching inside inputs and outputs reads `<script type="application/json" id="gk-text">`, a
JSON array of one string a case (its turns' input, output and expected), written after the
case chunks so the first rows need not wait for it. The cases follow, one JSON object a line,
in `<script type="application/x-ndjson" id="gk-cases-K">` elements; `chunks[K]` is the index
of chunk K's first case.

Memory stays small for any run: the case lines and the names go to temporary files as the
cases stream past, the other columns into compact arrays.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from array import array
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from gradekit.core.errors import GradekitError
from gradekit.core.values import utf8
from gradekit.report.attempts import case_label
from gradekit.report.model import CaseReport
from gradekit.report.report_stream import case_forms

if TYPE_CHECKING:
    from gradekit.report.marks import Marks

__all__ = ["ViewerData", "script_safe"]

CHUNK_CASES = 1000
"""A chunk of case lines ends after this many cases..."""

CHUNK_BYTES = 1 << 20
"""...or once it holds this many bytes: opening a case parses one small chunk."""

MAX_METADATA_VALUES = 100
"""A metadata key with more distinct values than this (an id, a timestamp) is no filter."""

MAX_PAIR = 200
"""A metadata value whose `key=value` text is longer than this is no filter either."""

MAX_BASELINE_CASES = 1000
"""At most this many regressed or fixed cases carry their baseline's form into the page."""

SEARCHED = ("input", "output", "expected")
"""The keys of each turn's sample that the search looks inside."""

_OUTCOME_CODE = {"pass": 0, "fail": 1, "error": 2}
_OUTCOME_LETTER = {"pass": ord("p"), "fail": ord("f"), "error": ord("e")}
_encode = json.JSONEncoder(ensure_ascii=False).encode


def script_safe(text: str) -> str:
    """JSON text that cannot end or alter the `<script>` element holding it: no `</` (an
    end tag) and no `<!--` (which changes how the element's end is found). Both escapes are
    still JSON of the same value."""
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")


class ViewerData:
    """Collects the index columns and the case lines of a page, one case at a time; `marks`:
    each case's mark against a baseline, when the report has one."""

    def __init__(self, marks: Marks | None = None) -> None:
        self.count = 0
        self._marks = marks
        self._baseline = bytearray()
        self._cases: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._names: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self._chunk_starts = array("I")
        self._chunk_cases = 0
        self._chunk_bytes = 0
        self._outcomes = bytearray()
        self._scores = array("d")
        self._durations = array("d")
        self._turns = array("I")
        self._graders: dict[str, int] = {}
        self._grader_counts = array("I")
        self._grader_codes = array("I")
        self._tags: dict[str, int] = {}
        self._tag_counts = array("I")
        self._tag_codes = array("I")
        self._texts: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        self._pairs: dict[str, int] = {}
        self._pair_keys: list[str] = []
        self._key_values: dict[str, int] = {}
        self._pair_counts = array("I")
        self._pair_codes = array("I")
        self._wanted: set[str] = set()
        self._usage = {"tok": array("d"), "cost": array("d"), "ams": array("d")}

    def add(self, report: CaseReport) -> None:
        """Index one case and store its JSON form."""
        outcome = report.outcome
        self._outcomes.append(_OUTCOME_LETTER[outcome])
        self._scores.append(float("nan") if outcome == "error" else round(report.score, 4))
        self._durations.append(round(report.duration_ms, 2))
        self._turns.append(len(report.turns))
        worst: dict[int, int] = {}
        for turn in report.turns:
            for record in turn.results:
                name = record.result.name
                grader = self._graders.setdefault(name, len(self._graders))
                code = _OUTCOME_CODE[record.result.outcome]
                if code > worst.get(grader, -1):
                    worst[grader] = code
        self._grader_counts.append(len(worst))
        self._grader_codes.extend(grader * 3 + code for grader, code in worst.items())
        tags = {self._tags.setdefault(tag, len(self._tags)) for tag in report.tags}
        self._tag_counts.append(len(tags))
        self._tag_codes.extend(sorted(tags))
        self._names.write(b"," if self.count else b"")
        label = case_label(report.name, report.attempt)
        self._names.write(utf8(script_safe(_encode(label))))
        data = report.to_dict()
        text = _encode(data)
        metadata = data.get("metadata")
        self._index_metadata(metadata if isinstance(metadata, dict) else {})
        self._texts.write(b"," if self.count else b"")
        self._texts.write(utf8(script_safe(_encode(search_text(data)))))
        if self._marks is not None:
            mark = self._marks.mark(report)
            self._baseline.append(ord(mark[0]))
            if mark in ("regressed", "fixed") and len(self._wanted) < MAX_BASELINE_CASES:
                self._wanted.add(label)
            text = self._marks.mark_text(text, mark)
        self._add_line(utf8(script_safe(text)))
        self.count += 1

    def _index_metadata(self, metadata: dict[str, Any]) -> None:
        codes = set()
        for key, value in flat_pairs(metadata):
            pair = f"{key}={value}"
            code = self._pairs.get(pair)
            if code is None:
                seen = self._key_values.get(key, 0)
                self._key_values[key] = seen + 1
                if seen >= MAX_METADATA_VALUES or len(pair) > MAX_PAIR:
                    continue
                code = self._pairs[pair] = len(self._pair_keys)
                self._pair_keys.append(key)
            codes.add(code)
        self._pair_counts.append(len(codes))
        self._pair_codes.extend(sorted(codes))
        for name, figure in usage(metadata).items():
            self._usage[name].append(math.nan if figure is None else figure)

    def _metadata_columns(self) -> tuple[list[str], array[Any], array[Any]]:
        """The pairs, counts and codes, without the keys of too many values."""
        kept = [
            pair
            for pair, code in self._pairs.items()
            if self._key_values[self._pair_keys[code]] <= MAX_METADATA_VALUES
        ]
        new = {self._pairs[pair]: position for position, pair in enumerate(kept)}
        if len(kept) == len(self._pairs):
            return kept, self._pair_counts, self._pair_codes
        counts, codes, at = array("I"), array("I"), 0
        for count in self._pair_counts:
            mine = [new[code] for code in self._pair_codes[at : at + count] if code in new]
            at += count
            counts.append(len(mine))
            codes.extend(mine)
        return kept, counts, codes

    def _add_line(self, line: bytes) -> None:
        if self._chunk_cases == 0:
            self._chunk_starts.append(self.count)
            opening = (
                f'<script type="application/x-ndjson" id="gk-cases-{len(self._chunk_starts) - 1}">'
            )
            self._cases.write(opening.encode())
        else:
            self._cases.write(b"\n")
        self._cases.write(line)
        self._chunk_cases += 1
        self._chunk_bytes += len(line)
        if self._chunk_cases >= CHUNK_CASES or self._chunk_bytes >= CHUNK_BYTES:
            self._end_chunk()

    def _end_chunk(self) -> None:
        if self._chunk_cases:
            self._cases.write(b"</script>\n")
            self._chunk_cases = self._chunk_bytes = 0

    def write_index(self, out: IO[bytes]) -> None:
        """Write the index's JSON object (script-safe) to `out`."""
        out.write(b'{"v": 1, "n": %d, "names": [' % self.count)
        self._names.seek(0)
        shutil.copyfileobj(self._names, out)
        out.write(b'], "outcome": "' + bytes(self._outcomes) + b'"')
        self._numbers(out, "score", self._scores)
        self._numbers(out, "ms", self._durations)
        self._numbers(out, "turns", self._turns)
        out.write(b', "graders": ' + utf8(script_safe(_encode(list(self._graders)))))
        self._numbers(out, "gc", self._grader_counts)
        self._numbers(out, "gv", self._grader_codes)
        out.write(b', "tags": ' + utf8(script_safe(_encode(list(self._tags)))))
        self._numbers(out, "tc", self._tag_counts)
        self._numbers(out, "tv", self._tag_codes)
        pairs, counts, codes = self._metadata_columns()
        if pairs:
            out.write(b', "mk": ' + utf8(script_safe(_encode(pairs))))
            self._numbers(out, "mc", counts)
            self._numbers(out, "mv", codes)
        for name, figures in self._usage.items():
            if any(not math.isnan(figure) for figure in figures):
                self._numbers(out, name, figures)
        if self._marks is not None:
            out.write(b', "baseline": "' + bytes(self._baseline) + b'"')
        self._numbers(out, "chunks", self._chunk_starts)
        out.write(b"}")

    @staticmethod
    def _numbers(out: IO[bytes], key: str, values: array[Any]) -> None:
        out.write(f', "{key}": ['.encode())
        for start, part in _slices(values):
            if start:
                out.write(b",")
            items = [None if math.isnan(value) else value for value in part]  # NaN: null
            out.write(json.dumps(items)[1:-1].encode())
        out.write(b"]")

    def write_cases(self, out: IO[bytes]) -> None:
        """Write the case chunks, each a complete `<script>` element, to `out`."""
        self._end_chunk()
        self._cases.seek(0)
        shutil.copyfileobj(self._cases, out)
        out.write(b'<script type="application/json" id="gk-text">[')
        self._texts.seek(0)
        shutil.copyfileobj(self._texts, out)
        out.write(b"]</script>\n")

    def write_baseline_cases(self, out: IO[bytes]) -> None:
        """Write the baseline's JSON form of each regressed or fixed case (the first
        `MAX_BASELINE_CASES`), read again from the baseline's file, as `{label: form}` in
        `<script type="application/json" id="gk-baseline-cases">`. Nothing without a baseline
        file or such a case; a baseline file that cannot be read now gives an empty object
        (the viewer then says the baseline's answer is not in the page)."""
        if self._marks is None or not self._marks.source or not self._wanted:
            return
        found: dict[str, Any] = {}
        try:
            for data in case_forms(self._marks.source):
                label = case_label(data["name"], data.get("attempt"))
                if label in self._wanted:
                    found[label] = data
                    if len(found) == len(self._wanted):
                        break
        except (GradekitError, OSError, KeyError, TypeError):
            found = {}
        out.write(b'<script type="application/json" id="gk-baseline-cases">')
        out.write(utf8(script_safe(_encode(found))))
        out.write(b"</script>\n")

    def close(self) -> None:
        """Remove the temporary files."""
        self._cases.close()
        self._texts.close()
        self._names.close()


def _slices(values: array[Any], size: int = 1 << 16) -> Iterator[tuple[int, list[Any]]]:
    for start in range(0, len(values), size):
        yield start, values[start : start + size].tolist()


def search_text(data: dict[str, Any]) -> str:
    """What the search looks inside for one case (its JSON form): each turn's input, output
    and expected, texts as they are and other values as JSON, one a line."""
    parts = []
    for turn in data.get("turns", ()):
        for key in SEARCHED:
            value = turn.get(key)
            if value is not None:
                parts.append(value if isinstance(value, str) else _encode(value))
    return "\n".join(parts)


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and math.isfinite(value):
        return _encode(value)
    return None


def flat_pairs(metadata: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """The metadata's `(key, value text)` pairs a filter offers: top-level scalars, and the
    scalars one level into a mapping as `key.sub`."""
    for key, value in metadata.items():
        if isinstance(value, dict):
            for sub, inner in value.items():
                text = _scalar(inner)
                if text is not None:
                    yield f"{key}.{sub}", text
        else:
            text = _scalar(value)
            if text is not None:
                yield key, text


def _figure(source: Any, key: str) -> float | None:
    value = source.get(key) if isinstance(source, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def usage(metadata: dict[str, Any]) -> dict[str, float | None]:
    """The tokens (`tok`), cost and agent duration in ms (`ams`) a case's metadata carries:
    in `metadata.trace` (what `traces:` gives) else in plain keys of the same names, as the
    `budget` kind reads them. Tokens are `total_tokens`, else `input_tokens + output_tokens`;
    cost is `cost`."""
    found: dict[str, float | None] = {"tok": None, "cost": None, "ams": None}
    for source in (metadata.get("trace"), metadata):
        total = _figure(source, "total_tokens")
        if total is None:
            given = (_figure(source, "input_tokens"), _figure(source, "output_tokens"))
            if given[0] is not None and given[1] is not None:
                total = given[0] + given[1]
        for name, figure in (
            ("tok", total),
            ("cost", _figure(source, "cost")),
            ("ams", _figure(source, "duration_ms")),
        ):
            if found[name] is None:
                found[name] = figure
    return found
