"""Names without a dot belong to gradekit: another distribution cannot take one.

Against real installed distributions (tests/registry/conftest.py): `acme-squat` declares
`numeric` with a factory that passes every answer (and the undotted `rouge`, and one proper
dotted kind), `acme-squat-broken` declares `numeric` from a module that cannot be imported.
"""

from __future__ import annotations

import json
import textwrap

SUITE = """
    name: squatted
    graders:
      - kind: numeric
    cases:
      - name: right
        output: "42"
        expected: "42"
      - name: wrong
        output: "41"
        expected: "42"
"""


def test_a_distribution_declaring_numeric_leaves_the_builtin_in_place(run_python, squatter_site):
    proc = run_python(
        """
        import sys, gradekit
        grader = gradekit.create("numeric")
        print(type(grader).__module__)
        print(grader.grade(gradekit.Sample(output="41", expected="42")).passed)
        print(sorted(m for m in sys.modules if m.startswith("acme_squat")))
        """,
        sites=[squatter_site],
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["gradekit.graders.numeric", "False", "[]"]


def test_every_suite_using_the_builtin_keeps_working(run_python, squatter_site, tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(textwrap.dedent(SUITE))
    proc = run_python(
        f"""
        import gradekit
        report = gradekit.run_suite(gradekit.load_suite({str(suite)!r}))
        print([(case.name, case.passed) for case in report.cases])
        """,
        sites=[squatter_site],
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[('right', True), ('wrong', False)]"


def test_an_undotted_entry_point_is_refused_with_an_error_naming_its_distribution(
    run_python, squatter_site
):
    proc = run_python(
        """
        import sys, gradekit
        from gradekit.registry.registry import default_registry
        try:
            gradekit.create("rouge")
        except gradekit.PluginLoadError as error:
            print(error.distribution, "|", error.value)
            print(error)
        for info in default_registry.describe():
            if info.kind == "numeric":
                print(info.distribution, "|", info.error)
        print(gradekit.create("acme_squat.fine").grade(gradekit.Sample(output="x")).message)
        print(sorted(m for m in sys.modules if m.startswith("acme_squat")))
        print("rouge" in gradekit.kinds(), "acme_squat.fine" in gradekit.kinds())
        """,
        sites=[squatter_site],
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "'acme-squat 1.0' | acme_squat:factory"
    assert lines[1] == (
        "cannot load grader kind 'rouge' from distribution 'acme-squat 1.0' (entry point "
        "'acme_squat:factory'): names without a dot belong to gradekit's own kinds, so a "
        "distribution must namespace its kinds (e.g. 'acme_squat.rouge'); fix or reinstall "
        "that distribution, or uninstall it"
    )
    # describe() sorts by kind, then distribution.
    assert lines[2].startswith(
        "acme-squat | cannot load grader kind 'numeric' from distribution 'acme-squat 1.0'"
    )
    assert lines[3].startswith(
        "acme-squat-broken | cannot load grader kind 'numeric' from distribution "
        "'acme-squat-broken 1.0' (entry point 'acme_squat_broken:factory'): names without a dot"
    )
    assert lines[4] == "gradekit | None"
    # The distribution's dotted kinds are fine; its undotted ones were never imported.
    assert lines[5:] == ["squatted", "['acme_squat']", "False True"]


def test_kinds_lists_each_failure_once_on_the_row_at_fault(run_python, plugin_site, squatter_site):
    command = "import sys; from gradekit.cli import main; sys.exit(main(sys.argv[1:]))"

    def kinds(*args: str):
        # Wide enough that no column is cut, whatever else is installed beside the test.
        code = f"import os, sys; os.environ['COLUMNS'] = '250'; sys.argv[1:] = {list(args)!r}\n"
        code += command
        return run_python(code, sites=[plugin_site, squatter_site])

    # --load imports each plugin: an import error is only known then.
    done = kinds("kinds", "--json", "--load")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    errors = {(row["kind"], row["distribution"]): row["error"] for row in rows}
    assert errors[("numeric", "gradekit")] is None
    assert "'acme-squat 1.0'" in errors[("numeric", "acme-squat")]
    assert "'acme-squat-broken 1.0'" in errors[("numeric", "acme-squat-broken")]
    assert "acme_missing_dependency" in errors[("acme.broken", "acme-broken")]
    assert errors[("acme.shout", "acme-good")] is None
    assert all(error is None for (_, dist), error in errors.items() if dist == "gradekit")

    text = kinds("kinds", "--load")
    assert text.returncode == 0, text.stderr
    table, _, failures = text.stdout.partition("failed to load:")
    numeric_row = next(line for line in table.splitlines() if line.startswith("numeric "))
    assert "gradekit.graders.numeric:Numeric" in numeric_row
    failure_lines = [line for line in failures.splitlines() if line.strip()]
    assert len([line for line in failure_lines if "'acme-squat-broken 1.0'" in line]) == 1
    assert len([line for line in failure_lines if "acme_missing_dependency" in line]) == 1
    assert len([line for line in failure_lines if "'acme.dup'" in line]) == 1
    assert not [line for line in failure_lines if "gradekit.graders." in line]
    assert text.stdout.count("failed to load:") == 1
    assert f"\n{len(failure_lines)} failed to load:" in text.stdout
