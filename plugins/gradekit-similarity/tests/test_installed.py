"""The installed distribution: five kinds found through entry points, metric libraries lazy."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import gradekit
from gradekit.registry.registry import default_registry

KINDS = {
    "similarity.levenshtein": "gradekit_similarity.levenshtein:Levenshtein",
    "similarity.rouge_l": "gradekit_similarity.rouge:RougeL",
    "similarity.bleu": "gradekit_similarity.bleu:Bleu",
    "similarity.chrf": "gradekit_similarity.chrf:Chrf",
    "similarity.token_f1": "gradekit_similarity.token_f1:TokenF1",
}


def test_the_kinds_come_from_this_distribution() -> None:
    infos = {info.kind: info for info in default_registry.describe()}
    for kind, value in KINDS.items():
        assert infos[kind].distribution == "gradekit-similarity"
        assert infos[kind].value == value
    assert set(KINDS) <= set(gradekit.kinds())


def test_each_factory_has_example_configs_that_create_graders() -> None:
    for kind in KINDS:
        factory = default_registry.factory(kind)
        assert isinstance(factory.examples, tuple) and factory.examples
        for config in factory.examples:
            assert gradekit.create(kind, config=config).kind == kind


def test_metric_libraries_load_only_when_a_kind_grades() -> None:
    code = textwrap.dedent(
        """
        import sys, gradekit
        heavy = ("rapidfuzz", "rouge_score", "sacrebleu", "nltk", "numpy")
        graders = [gradekit.create(kind, config={"threshold": 0.5}) for kind in sys.argv[1:]]
        print(sorted(name for name in heavy if name in sys.modules))
        graders[2].grade(gradekit.Sample(output="a", expected="a"))  # bleu
        print("sacrebleu" in sys.modules, "rouge_score" in sys.modules)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *KINDS], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[]", "True False"]


def test_first_grades_on_several_threads_at_once_all_succeed() -> None:
    # Each metric library is imported by the first grade of its kind. The runner grades on
    # several threads, and first imports of packages with circular imports (sacrebleu) from
    # two threads at once can deadlock; every fresh process here starts all kinds together.
    code = textwrap.dedent(
        """
        import sys, threading, gradekit
        graders = [gradekit.create(kind, config={"threshold": 0.5}) for kind in sys.argv[1:]]
        start = threading.Barrier(len(graders))
        outcomes = {}

        def grade(grader):
            start.wait()
            try:
                result = grader.grade(gradekit.Sample(output="a b c", expected="a b c"))
                outcomes[grader.kind] = result.error or result.outcome
            except Exception as error:
                outcomes[grader.kind] = repr(error)

        threads = [threading.Thread(target=grade, args=(g,)) for g in graders]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        print(sorted(outcomes.items()))
        """
    )
    kinds = ["similarity.bleu", "similarity.chrf"]
    for _ in range(3):
        proc = subprocess.run(
            [sys.executable, "-c", code, *kinds], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == str([(kind, "pass") for kind in kinds])
