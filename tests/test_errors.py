"""The error hierarchy: builtins refined, data carried, pickling survived, fixes named."""

from __future__ import annotations

import pickle

import pytest

from gradekit import (
    ConfigError,
    DuplicateKindError,
    ExecutorError,
    ExitRefusedError,
    GradekitError,
    PatternTimeoutError,
    PluginLoadError,
    Problem,
    UnknownKindError,
)

ERRORS = [
    ConfigError("invalid grader entry", [Problem(("threshold",), "must be between 0 and 1")]),
    UnknownKindError("numerc", ["numeric"]),
    DuplicateKindError("acme.rouge", ["distribution 'a' (a:f)", "distribution 'b' (b:f)"]),
    PluginLoadError("acme.x", "'acme-x 1.0'", "acme_x:f", "ImportError: boom"),
    ExecutorError("cannot reach the Dask scheduler at tcp://h:1: OSError: refused; check it"),
    ExitRefusedError(3),
    # A process-isolated grader's error crosses back to the runner pickled.
    PatternTimeoutError("contains.*.py", "^(a|a)*$", 2.0),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_errors_survive_pickling_with_their_data(error):
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert vars(copy) == vars(error)
    assert isinstance(copy, GradekitError)


def test_each_error_refines_a_builtin():
    assert isinstance(ERRORS[0], ValueError)
    assert isinstance(ERRORS[1], LookupError)
    assert isinstance(ERRORS[2], LookupError)
    assert isinstance(ERRORS[3], ImportError)
    assert isinstance(ERRORS[4], RuntimeError)
    assert isinstance(ERRORS[5], SystemExit)  # the exit it stands for (and an Exception)
    assert isinstance(ERRORS[6], TimeoutError)


def test_messages_say_what_to_do():
    assert str(ERRORS[0]) == "invalid grader entry\n$.threshold: must be between 0 and 1"
    assert str(ERRORS[1]) == "unknown grader kind 'numerc'; did you mean 'numeric'?"
    assert str(UnknownKindError("zzz")) == (
        "unknown grader kind 'zzz'; install the package that provides it, or register it with "
        "gradekit.register(); `gradekit kinds` lists the known kinds"
    )
    assert str(ERRORS[2]).endswith("uninstall one of them or rename the kind in one package")
    assert str(ERRORS[3]).endswith("fix or reinstall that distribution, or uninstall it")
    assert str(ERRORS[5]).endswith("return its result or raise an error instead")
    assert str(ERRORS[6]).startswith("contains.*.py: the pattern '^(a|a)*$' did not finish")
    assert str(ERRORS[6]).endswith(
        "rewrite it without a repeat inside a repeat that can match the same text"
    )


def test_problem_placed_in_a_file_reads_file_line_column_then_path():
    problem = Problem(("cases", 2, "graders", 0), "unknown option 'x'", where="suite.yaml:14:9")
    assert str(problem) == "suite.yaml:14:9: cases[2].graders[0]: unknown option 'x'"
    assert str(Problem((), "bad", where="s.yaml:1:1")) == "s.yaml:1:1: bad"
    assert Problem(("cases", 2, "threshold"), "m").location() == "$.cases[2].threshold"
