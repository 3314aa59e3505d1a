"""What every similarity kind does the same way: threshold, messages, bad data, options."""

from __future__ import annotations

import json
import pickle
import textwrap
from pathlib import Path
from typing import Any

import gradekit
import pytest

KINDS = ["levenshtein", "rouge_l", "bleu", "chrf", "token_f1"]


def grader(kind: str, **options: Any) -> gradekit.Grader:
    return gradekit.create(f"similarity.{kind}", config={"threshold": 0.5, **options})


@pytest.mark.parametrize("kind", KINDS)
def test_identical_texts_score_one_and_pass(kind: str) -> None:
    result = grader(kind).grade(
        gradekit.Sample(output="The dog bit the man.", expected="The dog bit the man.")
    )
    assert (result.outcome, result.score) == ("pass", 1.0)
    assert result.message.endswith(" 1.0000 >= threshold 0.5")


@pytest.mark.parametrize("kind", KINDS)
def test_a_score_below_the_threshold_fails_naming_both_texts(kind: str) -> None:
    result = grader(kind, threshold=0.99).grade(
        gradekit.Sample(output="The dog bit the man.", expected="The cat bit a woman.")
    )
    assert result.outcome == "fail"
    assert 0.0 <= result.score < 0.99
    assert result.message.endswith(
        "< threshold 0.99: output 'The dog bit the man.', reference 'The cat bit a woman.'"
    )


def test_passing_is_score_at_least_threshold() -> None:
    sample = gradekit.Sample(output="Barack Obama", expected="President Barack Obama")  # F1 0.8
    assert grader("token_f1", threshold=0.8).grade(sample).passed
    assert not grader("token_f1", threshold=0.81).grade(sample).passed


def test_several_references_name_the_best_or_the_count() -> None:
    sample = gradekit.Sample(output="kitten", expected=["dog", "sitting"])
    assert (
        grader("levenshtein", threshold=0.9)
        .grade(sample)
        .message.endswith(": output 'kitten', best reference 'sitting'")
    )
    assert (
        grader("bleu", threshold=0.9)
        .grade(sample)
        .message.endswith(": output 'kitten', 2 references, the first 'dog'")
    )


@pytest.mark.parametrize("kind", KINDS)
def test_details_are_strict_json(kind: str) -> None:
    result = grader(kind).grade(gradekit.Sample(output="a b c", expected=["a b", "c d"]))
    assert json.loads(json.dumps(result.details, allow_nan=False))["references"] == 2


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("output", "expected", "message"),
    [
        (
            "x",
            None,
            "no expected value: similarity.{kind} compares the output with the expected text "
            "(or a list of reference texts); add 'expected' to the case or turn",
        ),
        ("x", [], "the expected list is empty: give at least one reference"),
        (
            "x",
            {"a": 1},
            "the expected value is a mapping, not text: give a text or a list of texts",
        ),
        ("x", ["a", {"b": 1}], "expected[1] is a mapping, not text: each reference must be a text"),
        ({"a": 1}, "x", "the output is a mapping, not text: similarity.{kind} compares text"),
    ],
)
def test_data_that_cannot_be_compared_is_an_error(
    kind: str, output: Any, expected: Any, message: str
) -> None:
    result = grader(kind).grade(gradekit.Sample(output=output, expected=expected))
    assert result.outcome == "error"
    assert result.message == message.format(kind=kind)


@pytest.mark.parametrize("kind", KINDS)
def test_no_output_scores_as_an_empty_text(kind: str) -> None:
    result = grader(kind).grade(gradekit.Sample(output=None, expected="some words"))
    assert (result.outcome, result.score) == ("fail", 0.0)


def test_scalar_expected_values_compare_as_text() -> None:
    assert grader("levenshtein").grade(gradekit.Sample(output="42", expected=42)).score == 1.0


@pytest.mark.parametrize("kind", KINDS)
def test_threshold_is_required_and_between_zero_and_one(kind: str) -> None:
    with pytest.raises(gradekit.ConfigError) as missing:
        gradekit.create(f"similarity.{kind}")
    assert "$.threshold: this option is required" in str(missing.value)
    with pytest.raises(gradekit.ConfigError) as too_big:
        grader(kind, threshold=1.5)
    assert "$.threshold: must be between 0 and 1, got 1.5" in str(too_big.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_threshold_hints_that_advisory_entries_need_none(kind: str) -> None:
    with pytest.raises(gradekit.ConfigError) as missing:
        gradekit.create(
            f"similarity.{kind}", config={"case_insensitive": True} if kind == "levenshtein" else {}
        )
    assert "$.threshold: this option is required: the score at which the output passes " in str(
        missing.value
    )
    assert "an entry with advisory: true needs none (it reports its score)" in str(missing.value)


@pytest.mark.parametrize("kind", KINDS)
def test_an_advisory_grader_without_threshold_reports_its_score(kind: str) -> None:
    advisory = gradekit.create(f"similarity.{kind}", config={"advisory": True})
    sample = gradekit.Sample(output="The dog bit the man.", expected="The cat bit a woman.")
    result = advisory.grade(sample)
    scored = grader(kind).grade(sample)
    assert (result.outcome, result.score) == ("pass", scored.score)
    assert 0 < result.score < 1
    assert result.message.endswith(" (advisory, no threshold: the score is reported)")
    assert result.details is not None and result.details["threshold"] is None


def test_an_advisory_entry_needs_no_threshold_in_a_suite(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            """
            name: similar
            cases:
              - name: close
                output: "Barack Obama"
                expected: "President Barack Obama"
                graders:
                  - {kind: equality}
                  - {kind: similarity.token_f1, advisory: true}
                  - {kind: similarity.rouge_l, advisory: true, threshold: 0.9}
            """
        )
    )
    report = gradekit.run_suite(gradekit.load_suite(suite))
    case = report.cases[0]
    results = case.turns[0].results
    assert [(r.result.kind, r.advisory, r.result.outcome) for r in results] == [
        ("equality", False, "fail"),
        ("similarity.token_f1", True, "pass"),
        ("similarity.rouge_l", True, "fail"),
    ]
    assert results[1].result.score == pytest.approx(0.8)
    assert results[1].result.message == (
        "token F1 0.8000 (advisory, no threshold: the score is reported)"
    )
    assert not case.passed  # equality decides; the advisory results do not


def test_a_non_advisory_entry_without_threshold_fails_to_load_with_the_hint(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            """
            name: similar
            graders:
              - kind: similarity.token_f1
            cases:
              - {name: close, output: "Barack Obama", expected: "Barack Obama"}
            """
        )
    )
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.load_suite(suite)
    assert "threshold: this option is required" in str(caught.value)
    assert "an entry with advisory: true needs none (it reports its score)" in str(caught.value)
    assert "suite.yaml:4" in str(caught.value)


def test_options_are_checked() -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        grader("bleu", tokenize="moses")
    assert "$.tokenize: expected one of '13a', 'none', 'intl', 'char', 'zh', got 'moses'" in str(
        caught.value
    )
    with pytest.raises(gradekit.ConfigError) as caught:
        grader("rouge_l", tokenizer="unicode", use_stemmer=True)
    assert "$.use_stemmer: stemming works only with tokenizer: rouge" in str(caught.value)
    with pytest.raises(gradekit.ConfigError) as caught:
        grader("chrf", char_order=0)
    assert "$.char_order: must be >= 1, got 0" in str(caught.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_pickled_grader_grades_the_same(kind: str) -> None:
    original = grader(kind)
    copy = pickle.loads(pickle.dumps(original))
    sample = gradekit.Sample(output="the cat sat", expected=["a cat sat", "the dog sat"])
    assert copy == original
    assert copy.grade(sample) == original.grade(sample)


def test_the_entry_threshold_goes_to_the_kind_in_a_suite(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            """
            name: similar
            cases:
              - name: close
                output: "Barack Obama"
                expected: "President Barack Obama"
                graders:
                  - {kind: similarity.token_f1, threshold: 0.75}
                  - {kind: similarity.token_f1, name: strict, threshold: 0.9}
            """
        )
    )
    report = gradekit.run_suite(gradekit.load_suite(suite))
    results = report.cases[0].turns[0].results
    assert [(record.result.name, record.result.passed) for record in results] == [
        ("similarity.token_f1", True),
        ("strict", False),
    ]


def test_rouge_l_refuses_a_text_over_max_tokens_quickly() -> None:
    # The LCS table of two 100,000-token texts would take minutes to fill.
    huge = "word " * 100_000
    result = grader("rouge_l").grade(gradekit.Sample(output=huge, expected=huge))
    assert result.error is not None
    assert "the output has 100000 tokens, over max_tokens (2000)" in result.error
    fine = grader("rouge_l", max_tokens=3).grade(gradekit.Sample(output="a b c", expected="a b c"))
    assert fine.passed and fine.score == 1.0
