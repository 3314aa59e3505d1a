"""The `similarity.chrf` kind: chrF (and chrF++), computed by sacrebleu, as a score in [0, 1].

chrF is the F-score (recall weighted `beta` times as much as precision) of character n-grams
up to `char_order`, averaged over the orders; `word_order: 2` adds word uni- and bigrams, which
is chrF++. Whitespace is not part of the character n-grams. sacrebleu's `CHRF.sentence_score`
computes it; against several references it keeps the reference that scores best. The score is
sacrebleu's 0-100 figure divided by 100.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from gradekit import GradeResult, OptionError, Sample

from gradekit_similarity._base import (
    advisory_field,
    import_metric,
    scored,
    texts_of,
    threshold_field,
)

__all__ = ["Chrf"]

KIND = "similarity.chrf"


def _at_least(minimum: int) -> Any:
    def check(_: Any, attribute: attrs.Attribute[Any], value: int) -> None:
        if value < minimum:
            raise OptionError(attribute.name, f"must be >= {minimum}, got {value!r}")

    return check


@functools.cache
def _metric(
    char_order: int, word_order: int, beta: int, lowercase: bool, eps_smoothing: bool
) -> Any:
    metric = import_metric("sacrebleu.metrics.chrf").CHRF
    return metric(
        char_order=char_order,
        word_order=word_order,
        beta=beta,
        lowercase=lowercase,
        eps_smoothing=eps_smoothing,
    )


@attrs.frozen(kw_only=True)
class Chrf:
    """Passes when the chrF of the output against the expected text(s), divided by 100, is
    >= `threshold`."""

    kind: ClassVar[str] = KIND
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"threshold": 0.5},
        {"threshold": 0.45, "word_order": 2},
    )

    name: str = KIND
    threshold: float | None = threshold_field()
    advisory: bool = advisory_field()
    char_order: int = attrs.field(
        default=6, validator=_at_least(1), metadata={"help": "longest character n-gram"}
    )
    word_order: int = attrs.field(
        default=0, validator=_at_least(0), metadata={"help": "longest word n-gram; 2 is chrF++"}
    )
    beta: int = attrs.field(
        default=2, validator=_at_least(1), metadata={"help": "weight of recall over precision"}
    )
    lowercase: bool = attrs.field(default=False, metadata={"help": "compare lowercased texts"})
    eps_smoothing: bool = attrs.field(
        default=False,
        metadata={"help": "smooth orders without matches (chrF++.py) instead of skipping them"},
    )

    def grade(self, sample: Sample) -> GradeResult:
        """Score the output against the references; the best one counts."""
        texts = texts_of(KIND, self.name, sample)
        if isinstance(texts, GradeResult):
            return texts
        metric = _metric(
            self.char_order, self.word_order, self.beta, self.lowercase, self.eps_smoothing
        )
        result = metric.sentence_score(texts.output, list(texts.references))
        return scored(
            KIND,
            self.name,
            label="chrF++" if self.word_order == 2 else "chrF",
            score=result.score / 100,
            threshold=self.threshold,
            texts=texts,
        )
