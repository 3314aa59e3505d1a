"""A JSON report read a case at a time (`gradekit.report.report_stream`): the same values as
`json.loads` of the whole file, in any formatting and key order, whatever the chunk size,
with bounded memory, and clear errors for a file cut short."""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradekit import ConfigError
from gradekit.report.report_stream import open_report

# Integers within 64 bits: past them, a fast reading differs (see the test of it below).
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text()
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)
_cases = st.lists(_values, max_size=8)
_heads = st.dictionaries(
    st.text(max_size=8).filter(lambda key: key != "cases"), _values, max_size=4
)


def _write(path: Path, data: Any, layout: str) -> None:
    if layout == "lines":  # as gradekit writes a report: a case a line
        parts = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in data.items() if k != "cases"]
        cases = ",\n  ".join(json.dumps(case) for case in data["cases"])
        parts.insert(0, f'"cases": [\n  {cases}\n]')
        path.write_text("{" + ", ".join(parts) + "}\n", encoding="utf-8")
        return
    if layout == "compact":
        text = json.dumps(data, separators=(",", ":"))
    elif layout == "indented":
        text = json.dumps(data, indent=2, ensure_ascii=False)
    else:
        text = json.dumps(data)
    path.write_text(f"\n {text} \n", encoding="utf-8")


def _read(path: Path, chunk: int, *, fast: bool = True) -> tuple[list[Any], dict[str, Any]]:
    with open_report(path, chunk=chunk, fast=fast) as report:
        assert report is not None, "a JSON report was taken for something else"
        cases = list(report.cases())
        return cases, report.head


@settings(max_examples=150, deadline=None)
@given(
    cases=_cases,
    head=_heads,
    cases_at=st.integers(0, 4),
    layout=st.sampled_from(["compact", "indented", "default", "lines"]),
    chunk=st.sampled_from([1, 2, 3, 7, 64, 1 << 16]),
    fast=st.booleans(),
)
def test_cases_and_head_are_those_of_the_whole_file(
    tmp_path_factory: pytest.TempPathFactory,
    *,
    cases: list[Any],
    head: dict[str, Any],
    cases_at: int,
    layout: str,
    chunk: int,
    fast: bool,
) -> None:
    keys = list(head.items())
    keys.insert(min(cases_at, len(keys)), ("cases", cases))
    data = dict(keys)
    path = tmp_path_factory.mktemp("stream") / "report.json"
    _write(path, data, layout)

    streamed, rest = _read(path, chunk, fast=fast)

    whole = json.loads(path.read_text(encoding="utf-8"))
    assert streamed == whole["cases"]
    assert rest == {key: value for key, value in whole.items() if key != "cases"}


def test_a_number_cut_by_a_chunk_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text('{"cases": [12345678, 1.5e-300, -0.25], "n": 987654321}', encoding="utf-8")

    for chunk in range(1, 12):
        assert _read(path, chunk) == ([12345678, 1.5e-300, -0.25], {"n": 987654321})


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "case-1", "passed": true, "turns": []}\n{"name": "case-2", "passed": false}\n',
        '{"name": "case-1", "passed": true, "turns": []}\n',
        "",
        "[1, 2]",
        '{"cases": {"a": 1}}',
        "not json at all",
    ],
    ids=["results log", "one-line log", "empty", "a list", "cases not a list", "not JSON"],
)
def test_a_file_that_is_no_json_report_opens_as_none(tmp_path: Path, text: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(text, encoding="utf-8")

    with open_report(path) as report:
        assert report is None


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"suite": "s", "cases": [\n  {"name": "a", "passed": true},\n  {"name": "b", "pa', ":3:"),
        ('{"suite": "s", "cases": [\n  {"name": "a"}\n  {"name": "b"}\n]}', ":3:3"),
        ('{"suite": "s", "cases": [\n  {"name": "a"}\n], "summary": ', ":3:"),
        ('{"suite": "s", "cases": [{"name": "a"}]} trailing', ":1:"),
    ],
    ids=["cut in a case", "missing comma", "cut after the cases", "text after the report"],
)
def test_a_damaged_report_is_an_error_naming_file_and_position(
    tmp_path: Path, text: str, where: str
) -> None:
    path = tmp_path / "report.json"
    path.write_text(text, encoding="utf-8")

    with open_report(path, chunk=8) as report, pytest.raises(ConfigError) as raised:
        assert report is not None
        list(report.cases())

    message = str(raised.value)
    assert f"{path}{where}" in message
    assert "gradekit run -o" in message  # what to give instead


def test_memory_stays_near_one_case_however_many_cases(tmp_path: Path) -> None:
    case = {"name": "case", "passed": True, "turns": [{"results": [{"message": "x" * 300}]}]}
    path = tmp_path / "report.json"
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"suite": "big", "cases": [\n')
        out.write(",\n".join(json.dumps(dict(case, name=f"case-{n}")) for n in range(20_000)))
        out.write('\n], "summary": {"cases": 20000}}\n')
    size = path.stat().st_size

    tracemalloc.start()
    try:
        with open_report(path, chunk=1 << 16) as report:
            assert report is not None
            names = sum(1 for item in report.cases() if item["passed"])
            peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert names == 20_000
    assert report.head == {"suite": "big", "summary": {"cases": 20000}}
    # The whole file read at once holds its text and every case's objects: several times its
    # size. A case at a time holds a chunk or two and one case.
    assert peak < size / 10, (peak, size)


def test_a_report_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text('{"suite": "s", "cases": [{"name": "a"}]}', encoding="utf-8-sig")

    assert _read(path, 4) == ([{"name": "a"}], {"suite": "s"})


def test_read_fast_only_integers_past_64_bits_differ(tmp_path: Path) -> None:
    # A case a line, as gradekit writes a report: the line is read by orjson when it can;
    # what orjson refuses is read by the standard library.
    big = 1180591620717411303424
    lines = [f'{{"n": {big}}}', '{"x": NaN, "y": -Infinity}', '{"s": "\\ud800"}', '{"m": 7}']
    path = tmp_path / "report.json"
    path.write_text('{"cases": [\n  ' + ",\n  ".join(lines) + "\n]}\n", encoding="utf-8")
    exact = json.loads(path.read_text(encoding="utf-8"))["cases"]

    assert repr(_read(path, 1 << 16, fast=False)[0]) == repr(exact)
    fast, _ = _read(path, 1 << 16, fast=True)
    assert repr(fast[1:]) == repr(exact[1:])
    assert fast[0]["n"] == float(big)  # orjson's reading of such an integer


def test_reading_a_damaged_report_back_says_where_once(tmp_path: Path) -> None:
    from gradekit.report.reading import read_report

    path = tmp_path / "cut.json"
    path.write_text(
        '{"suite": "s", "cases": [\n'
        '  {"name": "a", "passed": true, "score": 1.0, "turns": []},\n  {"na',
        encoding="utf-8",
    )

    with pytest.raises(ConfigError) as raised:
        read_report(path)

    message = str(raised.value)
    assert message.startswith(f"{path}:3:")
    assert message.count("give a JSON report") == 1


def test_a_report_damaged_before_its_cases_is_an_error_not_a_log(tmp_path: Path) -> None:
    # gradekit's reports begin with "suite": such a file cut before its cases is a report cut
    # short, not an empty results log.
    path = tmp_path / "report.json"
    path.write_text('{"suite": "s", "ca', encoding="utf-8")

    where = rf"^{re.escape(str(path))}:1:\d+: not a complete JSON"
    with pytest.raises(ConfigError, match=where), open_report(path):
        pass


def test_a_file_that_is_not_utf8_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    case = '{"name": "a", "passed": true}'
    path.write_bytes(
        ('{"suite": "s", "cases": [' + ", ".join([case] * 50)).encode() + b", \xff\xfe]}"
    )

    with pytest.raises(ConfigError, match="not UTF-8 text"), open_report(path, chunk=64) as report:
        assert report is not None
        list(report.cases())
