"""When the registry reads installed metadata: never for a built-in kind, once for the rest.

The child process records, through an audit hook, every `entry_points.txt` it opens: that is
the scan of installed distributions, whose cost grows with every installed plugin.
"""

from __future__ import annotations

RECORD_OPENS = """
import os, sys
opened = []

def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if path.endswith("entry_points.txt"):
            opened.append(path)

sys.addaudithook(hook)
import gradekit
"""


def test_creating_builtin_kinds_reads_no_installed_metadata(run_python):
    proc = run_python(
        RECORD_OPENS
        + """
gradekit.create("numeric")
gradekit.create("equality")
gradekit.create("contains", config={"values": ["x"]})
gradekit.create("all", config={"graders": [{"kind": "regex", "pattern": "x"}]})
print(len(opened), "importlib_metadata" in sys.modules, "importlib.metadata" in sys.modules)
"""
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0 False False"


def test_dotted_kinds_and_listing_scan_once_per_process(run_python):
    proc = run_python(
        RECORD_OPENS
        + """
gradekit.create("acme.shout")
first = len(opened)
gradekit.create("acme.plain")
gradekit.kinds()
from gradekit.registry.registry import default_registry
default_registry.describe()
print(first > 0, len(opened) == first, len(opened) == len(set(opened)))
print(any("acme_good" in path for path in opened))
"""
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["True True True", "True"]


def test_a_kind_created_without_options_does_not_load_the_options_converter(run_python):
    proc = run_python(
        """
        import sys, gradekit
        numeric = gradekit.create("numeric", "n")
        print(numeric.name, numeric.absolute_tolerance, "cattrs" in sys.modules)
        gradekit.create("numeric", config={"absolute_tolerance": 0.5})
        print("cattrs" in sys.modules)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["n 1e-06 False", "True"]
