"""A suite before and after a change, for the `--baseline` tests: an output changed (`breaks`),
a grader made stricter (`stricter`), a case fixed (`mends`), one removed (`leaves`), two added
(`arrives`, and `erring`, whose grader raises)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from cli_support import Run

BEFORE = """
name: drift
graders:
  - kind: equality
cases:
  - {name: stays, output: "a", expected: "a"}
  - {name: breaks, output: "b", expected: "b"}
  - {name: mends, output: "x", expected: "c"}
  - {name: leaves, output: "d", expected: "d"}
  - name: stricter
    output: "The answer is 42."
    expected: "The answer is 42."
    graders: [{kind: contains, values: ["42"]}]
  - {name: still-bad, output: "y", expected: "z"}
"""

AFTER = """
name: drift
graders:
  - kind: equality
cases:
  - {name: stays, output: "a", expected: "a"}
  - {name: breaks, output: "B!", expected: "b"}
  - {name: mends, output: "c", expected: "c"}
  - name: stricter
    output: "The answer is 42."
    expected: "The answer is 42."
    graders: [{kind: contains, values: ["42", "because"], mode: all}]
  - {name: still-bad, output: "y", expected: "z"}
  - {name: arrives, output: "e", expected: "e"}
  - name: erring
    output: "f"
    expected: "f"
    graders: [{kind: code, grader: "boom:grade"}]
"""

MARKS = {
    "stays": "unchanged",
    "breaks": "regressed",
    "mends": "fixed",
    "stricter": "regressed",
    "still-bad": "unchanged",
    "arrives": "new",
    "erring": "new",
}

SUMMARY = {
    "report": "base.json",
    "new": 2,
    "fixed": 1,
    "regressed": 2,
    "unchanged": 2,
    "removed": 1,
    "still_failing": 1,
    # The 5 cases in both runs, paired: 2 regressed, 1 fixed (McNemar: p = 2 * 4/8 = 1).
    "statistics": {
        "paired": 5,
        "regressed": 2,
        "fixed": 1,
        "pass_rate_change": pytest.approx(-0.2, abs=1e-12),
        "pass_rate_change_interval": [
            pytest.approx(-0.9333513720565181, abs=1e-12),  # -0.2 ± z * sd / sqrt(5)
            pytest.approx(0.533351372056518, abs=1e-12),
        ],
        "p_value": 1.0,
        "test": "mcnemar-exact",
        "verdict": "no significant change",
        "alpha": 0.05,
        "interval_level": 0.95,
        # Per grader, over the cases both runs scored with it: equality's scores moved by
        # -1 (breaks) and +1 (mends) on 5 cases; contains scored only stricter (1 -> 0.5).
        "graders": {
            "contains": {
                "paired": 1,
                "mean_score_change": -0.5,
                "mean_score_change_interval": None,  # under 2 cases: no spread
                "p_value": None,
            },
            "equality": {
                "paired": 5,
                "mean_score_change": 0.0,
                "mean_score_change_interval": [
                    pytest.approx(-0.6197950323045615, abs=1e-12),  # z * sqrt(1/2) / sqrt(5)
                    pytest.approx(0.6197950323045615, abs=1e-12),
                ],
                "p_value": 1.0,  # t = 0
            },
        },
    },
}


def change(tmp_path: Path, gradekit: Run) -> Path:
    """Run the suite before the change (`base.json`, `base.jsonl`), then write it as after the
    change; the suite's folder."""
    (tmp_path / "boom.py").write_text("def grade(ctx):\n    raise RuntimeError('no')\n")
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(BEFORE))
    done = gradekit("run", "suite.yaml", "-q", "-o", "base.json", "--resume", "base.jsonl")
    assert done.returncode == 1, done.stderr
    (tmp_path / "suite.yaml").write_text(textwrap.dedent(AFTER))
    return tmp_path
