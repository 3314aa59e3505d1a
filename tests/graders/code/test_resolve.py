"""Resolution at load: "module:callable" is imported once, checked, and every failure named."""

from __future__ import annotations

import pickle
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import my_benchmarks
import pytest

from gradekit import ConfigError, Problem, Sample, create
from gradekit.core.context import suite_dir
from gradekit.core.errors import OptionError
from gradekit.graders.user_code import Code
from gradekit.registry.entries import build_entry

EXAMPLE = "; write 'module:function', e.g. 'my_benchmarks:numeric_equal'"


def load_error(grader: object) -> Problem:
    """The single problem build_entry reports for a code entry with this `grader`."""
    with pytest.raises(ConfigError) as caught:
        build_entry({"kind": "code", "grader": grader})
    assert len(caught.value.problems) == 1, caught.value.problems
    return caught.value.problems[0]


@pytest.mark.parametrize(
    ("reference", "why"),
    [
        ("my_benchmarks", "expected exactly one ':' between the module and the callable"),
        (
            "my_benchmarks:numeric_equal:x",
            "expected exactly one ':' between the module and the callable",
        ),
        ("my-benchmarks:numeric_equal", "'my-benchmarks' is not a dotted module name"),
        (".my_benchmarks:numeric_equal", "'.my_benchmarks' is not a dotted module name"),
        (":numeric_equal", "'' is not a dotted module name"),
        ("my_benchmarks:", "'' is not a callable name (an identifier, or Class.method)"),
        (
            "my_benchmarks:Graders.exact.x",
            "'Graders.exact.x' is not a callable name (an identifier, or Class.method)",
        ),
        (
            "my_benchmarks:numeric equal",
            "'numeric equal' is not a callable name (an identifier, or Class.method)",
        ),
    ],
)
def test_bad_format(reference: str, why: str) -> None:
    problem = load_error(reference)
    assert problem.path == ("grader",)
    assert problem.message == f"invalid grader reference {reference!r}: {why}{EXAMPLE}"


def test_the_problem_is_reported_at_the_grader_key() -> None:
    with pytest.raises(ConfigError) as caught:
        build_entry({"kind": "code", "grader": "my_benchmarks"})
    assert str(caught.value) == (
        "invalid grader entry\n$.grader: invalid grader reference 'my_benchmarks': expected "
        f"exactly one ':' between the module and the callable{EXAMPLE}"
    )


def test_missing_module() -> None:
    assert load_error("no_such_module_xyz:fn").message == (
        "cannot resolve grader 'no_such_module_xyz:fn': module 'no_such_module_xyz' was not "
        "found (ModuleNotFoundError: No module named 'no_such_module_xyz'); put it on the "
        "Python path, or fix the name"
    )


def test_missing_submodule_names_the_missing_part() -> None:
    assert load_error("my_benchmarks.nested:fn").message == (
        "cannot resolve grader 'my_benchmarks.nested:fn': module 'my_benchmarks.nested' was "
        "not found (ModuleNotFoundError: No module named 'my_benchmarks.nested'; "
        "'my_benchmarks' is not a package); put it on the Python path, or fix the name"
    )


def test_missing_module_while_loading_a_suite_names_its_folder(tmp_path: Path) -> None:
    with suite_dir(tmp_path):
        message = load_error("graders_missing_xyz:fn").message
    assert message == (
        "cannot resolve grader 'graders_missing_xyz:fn': module 'graders_missing_xyz' was not "
        "found (ModuleNotFoundError: No module named 'graders_missing_xyz'); put it beside the "
        f"suite file ({tmp_path.resolve()}) or on the Python path, or fix the name"
    )


def test_module_that_raises_on_import(write_module: Callable[..., Path]) -> None:
    folder = write_module("broken_on_import", "raise RuntimeError('boom at import')\n")
    with suite_dir(folder):
        message = load_error("broken_on_import:fn").message
    assert message == (
        "cannot resolve grader 'broken_on_import:fn': importing module 'broken_on_import' "
        "failed (RuntimeError: boom at import); fix the error in that module"
    )


def test_module_whose_own_import_is_missing(write_module: Callable[..., Path]) -> None:
    folder = write_module("needs_a_dependency", "import not_installed_dep_xyz\n")
    with suite_dir(folder):
        message = load_error("needs_a_dependency:fn").message
    assert message == (
        "cannot resolve grader 'needs_a_dependency:fn': importing module 'needs_a_dependency' "
        "failed (ModuleNotFoundError: No module named 'not_installed_dep_xyz'); fix the error "
        "in that module"
    )


def test_module_that_exits_on_import(write_module: Callable[..., Path]) -> None:
    folder = write_module("exits_on_import", "import sys\nsys.exit(3)\n")
    with suite_dir(folder):
        message = load_error("exits_on_import:fn").message
    assert message == (
        "cannot resolve grader 'exits_on_import:fn': importing module 'exits_on_import' "
        "failed (SystemExit: 3); fix the error in that module"
    )


def test_missing_attribute_suggests_a_close_name() -> None:
    assert load_error("my_benchmarks:numeric_equl").message == (
        "cannot resolve grader 'my_benchmarks:numeric_equl': module 'my_benchmarks' has no "
        "attribute 'numeric_equl' (AttributeError: module 'my_benchmarks' has no attribute "
        "'numeric_equl'); did you mean 'numeric_equal'? check the name after the ':'"
    )


def test_missing_attribute_without_a_close_name() -> None:
    assert load_error("my_benchmarks:zzz").message == (
        "cannot resolve grader 'my_benchmarks:zzz': module 'my_benchmarks' has no attribute "
        "'zzz' (AttributeError: module 'my_benchmarks' has no attribute 'zzz'); check the "
        "name after the ':'"
    )


def test_missing_method() -> None:
    assert load_error("my_benchmarks:Graders.nope").message == (
        "cannot resolve grader 'my_benchmarks:Graders.nope': 'my_benchmarks:Graders' has no "
        "attribute 'nope' (AttributeError: type object 'Graders' has no attribute 'nope'); "
        "check the name after the ':'"
    )


def test_not_callable() -> None:
    assert load_error("my_benchmarks:NOT_CALLABLE").message == (
        "cannot resolve grader 'my_benchmarks:NOT_CALLABLE': it names an int, which is not "
        "callable (TypeError: 'int' object is not callable); point it at a function"
    )


def test_grader_must_be_a_string_and_is_required() -> None:
    assert load_error(5).message == "expected a string, got 5 (int)"
    with pytest.raises(ConfigError) as caught:
        build_entry({"kind": "code"})
    assert [(p.path, p.message) for p in caught.value.problems] == [
        (("grader",), "this option is required")
    ]


def test_threshold_is_checked() -> None:
    with pytest.raises(OptionError) as caught:
        Code(grader="my_benchmarks:returns_float", threshold=2.0)
    assert str(caught.value) == "threshold: must be between 0 and 1, got 2.0"
    with pytest.raises(ConfigError) as entry_error:
        build_entry({"kind": "code", "grader": "my_benchmarks:returns_float", "threshold": 2})
    assert [(p.path, p.message) for p in entry_error.value.problems] == [
        (("threshold",), "must be between 0 and 1, got 2.0")
    ]


def test_threshold_key_goes_to_the_kind() -> None:
    entry = build_entry({"kind": "code", "grader": "my_benchmarks:returns_float", "threshold": 0.8})
    assert entry is not None
    assert entry.threshold is None
    assert isinstance(entry.grader, Code)
    assert entry.grader.threshold == 0.8
    assert entry.grader.grade(Sample()).passed is False


def test_name_defaults_to_the_callable() -> None:
    entry = build_entry({"kind": "code", "grader": "my_benchmarks:numeric_equal"})
    assert entry is not None
    assert (entry.name, entry.grader.name) == ("numeric_equal", "numeric_equal")
    named = build_entry({"kind": "code", "grader": "my_benchmarks:numeric_equal", "name": "n"})
    assert named is not None
    assert (named.name, named.grader.name) == ("n", "n")
    assert create("code", config={"grader": "my_benchmarks:Graders.exact"}).name == "exact"


def test_class_method_form() -> None:
    grader = Code(grader="my_benchmarks:Graders.exact")
    assert grader.grade(Sample(output="42", expected=42)).passed is True
    assert grader.grade(Sample(output="41", expected=42)).passed is False


IMPORT_LOGGING = """
    from pathlib import Path
    with open(Path(__file__).with_name("imports.log"), "a") as log:
        log.write("imported\\n")
    CALLS = []

    def check(ctx):
        CALLS.append(ctx.turn_index)
        return ctx.agent_response == "ok"
"""


def test_module_is_imported_once_across_many_turns(write_module: Callable[..., Path]) -> None:
    folder = write_module("counted_graders", IMPORT_LOGGING)
    with suite_dir(folder):
        graders = [Code(grader="counted_graders:check", name=f"g{i}") for i in range(3)]
    for turn in range(40):
        for grader in graders:
            assert grader.grade(Sample(turn=turn, output="ok")).passed is True
    assert (folder / "imports.log").read_text() == "imported\n"
    assert len(sys.modules["counted_graders"].CALLS) == 120


def test_callable_is_resolved_at_load_not_at_grade_time(
    write_module: Callable[..., Path],
) -> None:
    folder = write_module("counted_graders", IMPORT_LOGGING)
    with suite_dir(folder):
        grader = Code(grader="counted_graders:check")
    module = sys.modules["counted_graders"]
    module.check = lambda ctx: False  # type: ignore[attr-defined]
    del sys.modules["counted_graders"]
    assert grader.grade(Sample(output="ok")).passed is True
    assert (folder / "imports.log").read_text() == "imported\n"


def test_graders_py_beside_the_suite(write_module: Callable[..., Path]) -> None:
    folder = write_module(
        "graders",
        """
        def late(ctx):
            import suite_helpers  # imported while grading, after the load
            return suite_helpers.same(ctx.agent_response, ctx.ground_truth)
        """,
    )
    write_module("suite_helpers", "def same(a, b):\n    return str(a) == str(b)\n", folder)
    with suite_dir(folder):
        grader = Code(grader="graders:late")
    assert grader.name == "late"
    assert str(folder.resolve()) in sys.path
    assert grader.grade(Sample(output="7", expected=7)).passed is True


def test_another_suites_graders_module_is_never_taken_silently(
    write_module: Callable[..., Path], tmp_path: Path
) -> None:
    first = write_module("graders", "def check(ctx):\n    return True\n", tmp_path / "one")
    second = write_module("graders", "def check(ctx):\n    return False\n", tmp_path / "two")
    with suite_dir(first):
        Code(grader="graders:check")
    with suite_dir(second):
        message = load_error("graders:check").message
    assert message == (
        f"cannot resolve grader 'graders:check': module 'graders' is already imported from "
        f"{first.resolve() / 'graders.py'}, not from the suite folder {second.resolve()}; "
        "module names are shared by the whole process, so give the suite's module a unique name"
    )


def test_pickled_grader_is_rebuilt_in_a_fresh_process(
    write_module: Callable[..., Path], tmp_path: Path
) -> None:
    folder = write_module("pickled_graders", "def check(ctx):\n    return ctx.turn_index == 3\n")
    with suite_dir(folder):
        grader = Code(grader="pickled_graders:check", threshold=0.9)
    payload = pickle.dumps((grader, Sample(turn=3)))
    script = (
        "import pickle, sys\n"
        "grader, sample = pickle.loads(sys.stdin.buffer.read())\n"
        "result = grader.grade(sample)\n"
        "print(grader.name, grader.threshold, result.passed, result.error)\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script],
        input=payload,
        capture_output=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert child.stderr.decode() == ""
    assert child.stdout.decode() == "check 0.9 True None\n"


def test_fixture_module_is_the_shared_one() -> None:
    grader = Code(grader="my_benchmarks:numeric_equal")
    grader.grade(Sample(output="1", expected=1))
    assert my_benchmarks.CALLS == ["numeric_equal"]
