"""The entry-point paths of the registry, against real installed distributions."""

from __future__ import annotations


def test_good_plugin_kinds_are_listed_with_their_distribution(run_python):
    proc = run_python(
        """
        import gradekit
        from gradekit.registry.registry import default_registry
        kinds = gradekit.kinds()
        print("acme.shout" in kinds, "acme.plain" in kinds, "numeric" in kinds)
        for info in default_registry.describe():
            if info.kind in ("acme.shout", "equality"):
                print(info.kind, info.distribution, info.version, info.value)
        """
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "True True True"
    assert "acme.shout acme-good 1.0 acme_good:Shout" in lines
    assert any(line.startswith("equality gradekit ") for line in lines)


def test_listing_kinds_imports_no_plugin_module(run_python):
    proc = run_python(
        """
        import sys, gradekit
        gradekit.kinds()
        print(sorted(m for m in sys.modules if m.startswith(("acme_", "gradekit.graders"))))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_creating_a_kind_imports_only_that_kinds_module(run_python):
    proc = run_python(
        """
        import sys, gradekit
        grader = gradekit.create("acme.shout", config={"min_length": 2})
        print(grader.grade(gradekit.Sample(output="HEY")).passed)
        print(sorted(m for m in sys.modules if m.startswith(("acme_", "gradekit.graders."))))
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["True", "['acme_good']"]


def test_attrs_plugin_options_are_checked_like_builtin_ones(run_python):
    proc = run_python(
        """
        import gradekit
        try:
            gradekit.create("acme.shout", config={"min_lenght": 2})
        except gradekit.ConfigError as error:
            print(error)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "invalid options for kind 'acme.shout'",
        "$.min_lenght: unknown option 'min_lenght' for kind 'acme.shout' "
        "(did you mean 'min_length'?)",
    ]


def test_plain_function_factory_gets_name_and_config(run_python):
    proc = run_python(
        """
        import gradekit
        grader = gradekit.create("acme.plain", "mine", {"anything": 1})
        print(grader.name, grader.config)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "mine {'anything': 1}"


def test_broken_plugin_fails_only_its_own_kind(run_python):
    proc = run_python(
        """
        import gradekit
        try:
            gradekit.create("acme.broken")
        except gradekit.PluginLoadError as error:
            print(type(error).__name__, isinstance(error, ImportError))
            print(error.distribution, "|", error.value, "|", error.cause)
            print(error)
        print(gradekit.create("acme.shout").grade(gradekit.Sample(output="OK")).passed)
        print(gradekit.create("equality").kind)
        """
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "PluginLoadError True"
    assert lines[1] == (
        "'acme-broken 1.0' | acme_broken:factory | "
        "ModuleNotFoundError: No module named 'acme_missing_dependency'"
    )
    assert lines[2] == (
        "cannot load grader kind 'acme.broken' from distribution 'acme-broken 1.0' "
        "(entry point 'acme_broken:factory'): ModuleNotFoundError: No module named "
        "'acme_missing_dependency'; fix or reinstall that distribution, or uninstall it"
    )
    assert lines[3:] == ["True", "equality"]


def test_missing_attribute_is_a_plugin_load_error(run_python):
    proc = run_python(
        """
        import gradekit
        try:
            gradekit.create("acme.noattr")
        except gradekit.PluginLoadError as error:
            print(error.cause)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        "AttributeError: module 'acme_noattr' has no attribute 'factory'"
    )


def test_failed_plugin_is_reported_by_describe(run_python):
    proc = run_python(
        """
        import gradekit
        from gradekit.registry.registry import default_registry
        try:
            gradekit.create("acme.broken")
        except gradekit.PluginLoadError:
            pass
        [info] = [i for i in default_registry.describe() if i.kind == "acme.broken"]
        print(info.distribution, info.error is not None and "acme_missing_dependency" in info.error)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "acme-broken True"


def test_two_distributions_claiming_one_kind_name_both(run_python):
    proc = run_python(
        """
        import gradekit
        try:
            gradekit.create("acme.dup")
        except gradekit.DuplicateKindError as error:
            print(isinstance(error, LookupError), error.kind)
            print(error)
        print(gradekit.create("acme.shout").kind)
        """
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "True acme.dup"
    assert "distribution 'acme-dup-one' (acme_dup_one:factory)" in lines[1]
    assert "distribution 'acme-dup-two' (acme_dup_two:factory)" in lines[1]
    assert lines[1].endswith("uninstall one of them or rename the kind in one package")
    assert lines[2] == "acme.shout"


def test_registering_the_entry_points_own_factory_again_is_fine(run_python):
    proc = run_python(
        """
        import gradekit
        from acme_good import Shout
        gradekit.register("acme.shout", Shout)
        print(gradekit.create("acme.shout").kind)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "acme.shout"


def test_registering_another_factory_over_an_entry_point_is_a_conflict_when_used(run_python):
    proc = run_python(
        """
        import gradekit
        from acme_good import plain
        gradekit.register("acme.shout", plain)
        try:
            gradekit.create("acme.shout")
        except gradekit.DuplicateKindError as error:
            print(error)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert "distribution 'acme-good' (acme_good:Shout)" in proc.stdout
    assert "<registered> (acme_good:plain)" in proc.stdout


def test_unknown_kind_suggests_close_matches_among_installed_kinds(run_python):
    proc = run_python(
        """
        import gradekit
        try:
            gradekit.create("acme.shot")
        except gradekit.UnknownKindError as error:
            print(error)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "unknown grader kind 'acme.shot'; did you mean 'acme.shout'?"
