"""JUnit XML from real runs, read by what CI servers use: validated against the rules of the
Jenkins xunit plugin's JUnit schema (data/jenkins-junit.xsd) and the strict common ground
(data/junit.xsd), counted with junitparser (a real consumer from PyPI)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import junitparser
import pytest
import sample_reports
from cli_support import DATA, Run
from lxml import etree

from gradekit.report import write_junit

JENKINS = etree.XMLSchema(etree.parse(str(DATA / "jenkins-junit.xsd")))
COMMON = etree.XMLSchema(etree.parse(str(DATA / "junit.xsd")))


@pytest.fixture
def agent_run(gradekit: Run, tmp_path: Path) -> tuple[Path, dict]:
    """`gradekit run` of the agent suite: passing, failing, errored and skipped; JUnit + JSON."""
    sample_reports.agent_suite(tmp_path)
    done = gradekit("run", "suite.yaml", "--junit", "r.xml", "-o", "r.json", "--quiet")
    assert done.returncode == 1, done.stderr
    return tmp_path / "r.xml", json.loads((tmp_path / "r.json").read_text())


def _results(case: junitparser.TestCase) -> list[str]:
    return [type(result).__name__ for result in case.result]


def test_the_jenkins_rules_reject_skipped_on_testsuites(agent_run: tuple[Path, dict]) -> None:
    """The schema check can fail: the attribute gradekit used to write is refused."""
    document = etree.parse(str(agent_run[0]))
    assert JENKINS.validate(document), JENKINS.error_log
    document.getroot().set("skipped", "1")
    assert not JENKINS.validate(document)
    assert "attribute 'skipped' is not allowed" in str(JENKINS.error_log.last_error)
    assert not COMMON.validate(document)


def test_valid_for_ci_and_the_counts_agree(agent_run: tuple[Path, dict]) -> None:
    path, report = agent_run
    document = etree.parse(str(path))
    assert JENKINS.validate(document), JENKINS.error_log
    assert COMMON.validate(document), COMMON.error_log
    xml = junitparser.JUnitXml.fromfile(str(path))
    (suite,) = list(xml)
    cases = list(suite)
    summary = report["summary"]
    skipped_turns = sum(
        1 for case in report["cases"] for turn in case["turns"] if turn.get("skipped")
    )
    # The attributes, the elements junitparser finds, and the run's own summary agree.
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (
        summary["cases"] + skipped_turns,
        summary["failed"],
        summary["errored"],
        skipped_turns,
    )
    assert len(cases) == suite.tests
    kinds = [_results(case) for case in cases]
    assert sum(1 for k in kinds if "Failure" in k and "Error" not in k) == suite.failures
    assert sum(1 for k in kinds if "Error" in k) == suite.errors
    assert sum(1 for k in kinds if k == ["Skipped"]) == suite.skipped
    xml.update_statistics()  # junitparser's own recount from the elements
    assert (xml.tests, xml.failures, xml.errors) == (suite.tests, suite.failures, suite.errors)
    by_name = {case.name: case for case in cases}
    assert _results(by_name["weather"]) == []
    assert _results(by_name["refund"]) == ["Failure"]
    assert _results(by_name["crash"]) == ["Error"]
    # The turn an error left unrun is a testcase of its own, skipped; the case shows its error.
    assert _results(by_name["stops-early"]) == ["Error"]
    assert _results(by_name["stops-early [turn 1]"]) == ["Skipped"]
    assert by_name["stops-early [turn 1]"].result[0].message == (
        "not run: an earlier error ended the case (fail_on_error)"
    )


def test_without_samples_system_out_has_the_failing_messages(
    agent_run: tuple[Path, dict], gradekit: Run, tmp_path: Path
) -> None:
    done = gradekit("run", "suite.yaml", "--junit", "bare.xml", "--no-samples", "--quiet")
    assert done.returncode == 1, done.stderr
    (suite,) = list(junitparser.JUnitXml.fromfile(str(tmp_path / "bare.xml")))
    cases = {case.name: case for case in suite}
    assert cases["weather"].system_out is None
    assert cases["refund"].system_out == (
        "turn 0: behavior failed: 0/1 checks passed; failed: forbidden tool issue_refund: "
        "called: issue_refund"
    )
    assert cases["stops-early"].system_out == (
        "turn 0: explode error: ValueError: no luck <&>\n"
        "turn 1: skipped (an earlier error ended the case)"
    )


def test_failing_cases_carry_their_sample_in_system_out(tmp_path: Path) -> None:
    suite = sample_reports.agent_suite(tmp_path)
    report = sample_reports.run(suite)
    write_junit(
        report,
        tmp_path / "r.xml",
        cases=sample_reports.as_reports(sample_reports.with_tags(report)),
    )
    document = etree.parse(str(tmp_path / "r.xml"))
    assert JENKINS.validate(document), JENKINS.error_log
    (suite_element,) = list(junitparser.JUnitXml.fromfile(str(tmp_path / "r.xml")))
    cases = {case.name: case for case in suite_element}
    assert cases["weather"].system_out is None  # passed: nothing to explain
    assert cases["refund"].system_out == (
        "turn 0:\n"
        "  input: Refund order A17 (500 EUR)\n"
        "  output: Refunded <b>500</b> & done\n"
        "  expected: refused: over the limit\n"
        "  tool calls:\n"
        '    1. lookup_order {"order": "A17"} -> {"total": 500}\n'
        '    2. issue_refund {"order": "A17", "amount": 500} error: PermissionError: over the '
        "refund limit\n"
        "\n"
        "turn 0: behavior failed: 0/1 checks passed; failed: forbidden tool issue_refund: "
        "called: issue_refund"
    )
    transcript = cases["transcript-refund"].system_out
    assert transcript.startswith("turn 1:\n  input: Thanks! Can I get a refund anyway?\n")
    assert "  messages:\n    user: Thanks! Can I get a refund anyway?\n" in transcript
    # Characters XML cannot hold become their escapes (`\x07`), as in the messages (the
    # attributes); markup and entities survive as text.
    nasty = cases["nasty <b>&amp;</b> `name` *bold*"].system_out
    output = nasty.split("\n")[1].removeprefix("  output: ")
    assert output == sample_reports.NASTY.translate(
        {
            code: repr(chr(code))[1:-1]
            for code in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xFFFE, 0xFFFF]
        }
    )
    assert "bell\\x07 esc\\x1b[31m" in output


def test_characters_xml_cannot_hold_in_names_and_a_lone_surrogate(tmp_path: Path) -> None:
    suite = sample_reports.agent_suite(tmp_path)
    report = sample_reports.run(suite)
    cases = sample_reports.with_tags(report)
    cases[0]["name"] = "bell\x07 cr\r <&> \ud800"
    cases[1]["turns"][0]["output"] = "line\r\nnext \ud800"
    write_junit(report, tmp_path / "r.xml", cases=sample_reports.as_reports(cases))
    document = etree.parse(str(tmp_path / "r.xml"))
    assert JENKINS.validate(document), JENKINS.error_log
    names = [case.get("name") for case in document.getroot().iter("testcase")]
    assert names[0] == "bell\\x07 cr\r <&> \\ud800"
    refund = document.getroot().find(".//testcase[@name='refund']/system-out")
    assert "  output:\n    line\r\n    next \\ud800\n" in refund.text


MANY_PROBLEMS = """
    name: many
    cases:
      - name: fine
        output: "a"
        expected: "a"
        graders: [{kind: equality}]
      - name: mixed
        turns:
          - output: "x"
            expected: "y"
            graders:
              - {kind: equality}
              - {kind: code, name: explode, grader: "boom:explode"}
          - output: "z"
            expected: "w"
            graders: [{kind: equality, name: second}]
      - name: twice-wrong
        output: "x"
        expected: "y"
        graders:
          - {kind: equality}
          - {kind: contains, values: [q]}
"""


def test_a_case_of_many_problems_has_one_status_element_listing_them_all(
    gradekit: Run, write: Callable[[str, str], Path], tmp_path: Path
) -> None:
    # `mixed` fails at turn 0, errors at turn 0 and fails at turn 1: one errored case, one
    # `<error>`; `twice-wrong` fails twice: one failed case, one `<failure>`.
    write("boom.py", "def explode(ctx):\n    raise ValueError('no luck')\n")
    write("suite.yaml", MANY_PROBLEMS)
    done = gradekit("run", "suite.yaml", "--junit", "r.xml", "-o", "r.json", "--quiet")
    assert done.returncode == 1, done.stderr
    document = etree.parse(str(tmp_path / "r.xml"))
    assert JENKINS.validate(document), JENKINS.error_log
    assert COMMON.validate(document), COMMON.error_log
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert (summary["failed"], summary["errored"]) == (1, 1)

    xml = junitparser.JUnitXml.fromfile(str(tmp_path / "r.xml"))
    (suite,) = list(xml)
    cases = {case.name: case for case in suite}
    assert _results(cases["fine"]) == []
    assert _results(cases["mixed"]) == ["Error"]
    assert _results(cases["twice-wrong"]) == ["Failure"]
    assert (suite.tests, suite.failures, suite.errors) == (3, 1, 1)
    xml.update_statistics()  # junitparser's recount from the elements agrees
    assert (xml.tests, xml.failures, xml.errors) == (3, 1, 1)
    (suite,) = list(xml)
    assert (suite.tests, suite.failures, suite.errors) == (3, 1, 1)

    # Nothing is lost: the one element names every failed and errored result.
    (error,) = cases["mixed"].result
    assert error.type == "ValueError"
    assert error.message == (
        "3 results did not pass: turn 0: equality: expected 'y', got 'x'; "
        "turn 0: explode: ValueError: no luck; turn 1: second: expected 'w', got 'z'"
    )
    assert error.text.split("\n\n") == [
        "turn 0: equality: expected 'y', got 'x'",
        "turn 0: explode: ValueError: no luck",
        "turn 1: second: expected 'w', got 'z'",
    ]
    (failure,) = cases["twice-wrong"].result
    assert failure.type == "equality"
    assert failure.message.startswith("2 results did not pass: turn 0: equality: ")
    assert "; turn 0: contains: " in failure.message
    assert len(failure.text.split("\n\n")) == 2


def test_a_case_that_could_not_be_loaded_is_a_config_error_not_its_file_name(
    gradekit: Run, write: Callable[[str, str], Path], tmp_path: Path
) -> None:
    write("suite.yaml", "graders: [{kind: equality}]\ndataset: data.jsonl\n")
    write("data.jsonl", '{"name": "ok", "output": "1", "expected": "1"}\n{"name": oops}\n')
    done = gradekit("run", "suite.yaml", "--junit", "r.xml", "--quiet")
    assert done.returncode == 1, done.stderr
    xml = junitparser.JUnitXml.fromfile(str(tmp_path / "r.xml"))
    (suite,) = list(xml)
    cases = {case.name: case for case in suite}
    (error,) = cases["data.jsonl:2"].result
    assert error.type == "ConfigError"  # was "data.jsonl", the text before the first colon
    assert error.message.startswith("data.jsonl:2: invalid JSON")


SNIFFED = """
name: sniffed
graders: [{kind: equality}]
cases:
  - name: "bell\\a café"
    output: "the answer is\\a and \\uFFFD that is all there is to it \\U0001F600"
    expected: "the answer is the one we have"
"""
"""A short file in English whose output holds a control character, U+FFFD and characters
beyond ASCII: what made xunit-viewer guess CP1252 and crash."""


def _sniffed(gradekit: Run, folder: Path) -> Path:
    (folder / "suite.yaml").write_text(SNIFFED.lstrip(), encoding="utf-8")
    done = gradekit("run", "suite.yaml", "-q", "--junit", "r.xml", cwd=folder)
    assert done.returncode == 1, done.stderr
    return folder / "r.xml"


def test_the_file_is_ascii_so_no_reader_guesses_its_encoding_wrong(
    gradekit: Run, tmp_path: Path
) -> None:
    data = _sniffed(gradekit, tmp_path).read_bytes()

    # Every character beyond ASCII is a character reference: sniffers that do not read the XML
    # declaration see ASCII. xunit-viewer's (detect-file-encoding-and-language) decodes the
    # bytes as UTF-8 and calls a decoding holding U+FFFD "not UTF-8", whatever the reason.
    assert data.isascii()
    assert "\ufffd" not in data.decode("utf-8", errors="replace")
    assert b"&#65533;" in data and b"&#233;" in data
    (suite,) = list(junitparser.JUnitXml.fromstring(data))
    (case,) = list(suite)
    assert case.name == "bell\\x07 café"
    (failure,) = case.result  # one escape form in attributes and in element text alike
    assert "got 'the answer is\\x07 and \ufffd that" in failure.message
    assert "got 'the answer is\\x07 and \ufffd that" in failure.text
    assert "output: the answer is\\x07 and \ufffd that is all there is to it \U0001f600\n" in (
        case.system_out
    )
    assert JENKINS.validate(etree.fromstring(data).getroottree()), JENKINS.error_log


@pytest.mark.slow
def test_xunit_viewer_reads_the_file(gradekit: Run, tmp_path: Path) -> None:
    """xunit-viewer from npm (an install of about 20 s), in its console mode."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    tools = tmp_path / "tools"
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(tools), "xunit-viewer@10"],
        check=True,
        capture_output=True,
        timeout=600,
    )
    report = _sniffed(gradekit, tmp_path)

    shown = subprocess.run(
        [str(tools / "node_modules" / ".bin" / "xunit-viewer"), "-r", str(report), "-c", "-n"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )

    assert shown.returncode == 0, shown.stderr
    assert "✗ bell\\x07 café" in shown.stdout
    assert "output: the answer is\\x07 and \ufffd that is all there is to it \U0001f600" in (
        shown.stdout
    )
