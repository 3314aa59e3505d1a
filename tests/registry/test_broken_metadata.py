"""A distribution whose metadata cannot be read (a half-deleted install) fails only its kinds."""

from __future__ import annotations


def test_a_distribution_without_metadata_fails_only_its_own_kinds(
    run_python, plugin_site, tmp_path
):
    info = tmp_path / "halfgone-1.0.dist-info"
    info.mkdir()  # entry_points.txt survived, METADATA did not
    (info / "entry_points.txt").write_text("[gradekit.graders]\nhalfgone.kind = halfgone:factory\n")
    proc = run_python(
        """
        import gradekit
        print(gradekit.create("acme.shout").grade(gradekit.Sample(output="OK")).passed)
        try:
            gradekit.create("halfgone.kind")
        except gradekit.PluginLoadError as error:
            print(error.distribution)
        """,
        sites=[plugin_site, tmp_path],
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["True", f"'{info}'"]
