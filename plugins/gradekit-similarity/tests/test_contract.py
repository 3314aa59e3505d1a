"""gradekit's contract kit over every kind (skipped until gradekit.testing is available)."""

from __future__ import annotations

import pytest

pytest.importorskip("gradekit.testing")

from gradekit.testing import GraderContract, samples


class TestLevenshtein(GraderContract):
    kind = "similarity.levenshtein"
    configs = (
        {"threshold": 0.8},
        {"threshold": 0.9, "case_insensitive": True},
        {"advisory": True},
    )
    sample_strategy = samples(require_expected=True)
    deterministic = True
    picklable = True


class TestRougeL(GraderContract):
    kind = "similarity.rouge_l"
    configs = ({"threshold": 0.5}, {"threshold": 0.4, "use_stemmer": True})
    sample_strategy = samples(require_expected=True)
    deterministic = True
    picklable = True


class TestBleu(GraderContract):
    kind = "similarity.bleu"
    configs = ({"threshold": 0.3}, {"threshold": 0.2, "tokenize": "char", "lowercase": True})
    sample_strategy = samples(require_expected=True)
    deterministic = True
    picklable = True


class TestChrf(GraderContract):
    kind = "similarity.chrf"
    configs = ({"threshold": 0.5}, {"threshold": 0.45, "word_order": 2})
    sample_strategy = samples(require_expected=True)
    deterministic = True
    picklable = True


class TestTokenF1(GraderContract):
    kind = "similarity.token_f1"
    configs = (
        {"threshold": 0.5},
        {"advisory": True, "stop_words": "english"},
        {"threshold": 0.3, "stop_words": ["x", "The", "don't"]},
    )
    sample_strategy = samples(require_expected=True)
    deterministic = True
    picklable = True
