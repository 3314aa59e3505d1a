"""The `similarity.bleu` kind: sentence BLEU, computed by sacrebleu, as a score in [0, 1].

sacrebleu's `BLEU.sentence_score` with `effective_order` (n-gram orders the output is too
short to have are left out, as sacrebleu recommends for single sentences), its default 13a
tokenizer and exponential smoothing; the score is sacrebleu's 0-100 figure divided by 100.
Several references are used together, as BLEU defines: n-gram counts are clipped by the
largest count in any reference, and the brevity penalty uses the closest reference length.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs
from gradekit import GradeResult, Sample

from gradekit_similarity._base import (
    advisory_field,
    import_metric,
    scored,
    texts_of,
    threshold_field,
)

__all__ = ["Bleu"]

KIND = "similarity.bleu"


@functools.cache
def _metric(tokenize: str, lowercase: bool, smooth_method: str) -> Any:
    metric = import_metric("sacrebleu.metrics.bleu").BLEU
    return metric(
        tokenize=tokenize, lowercase=lowercase, smooth_method=smooth_method, effective_order=True
    )


@attrs.frozen(kw_only=True)
class Bleu:
    """Passes when the sentence BLEU of the output against the expected text(s), divided by
    100, is >= `threshold`."""

    kind: ClassVar[str] = KIND
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"threshold": 0.3},
        {"threshold": 0.2, "tokenize": "intl", "lowercase": True},
    )

    name: str = KIND
    threshold: float | None = threshold_field()
    advisory: bool = advisory_field()
    tokenize: Literal["13a", "none", "intl", "char", "zh"] = attrs.field(
        default="13a", metadata={"help": "sacrebleu tokenizer"}
    )
    lowercase: bool = attrs.field(default=False, metadata={"help": "compare lowercased texts"})
    smooth_method: Literal["exp", "none", "floor", "add-k"] = attrs.field(
        default="exp", metadata={"help": "sacrebleu smoothing for n-gram orders without matches"}
    )

    def grade(self, sample: Sample) -> GradeResult:
        """Score the output against all references at once."""
        texts = texts_of(KIND, self.name, sample)
        if isinstance(texts, GradeResult):
            return texts
        metric = _metric(self.tokenize, self.lowercase, self.smooth_method)
        result = metric.sentence_score(texts.output, list(texts.references))
        return scored(
            KIND,
            self.name,
            label="BLEU",
            score=result.score / 100,
            threshold=self.threshold,
            texts=texts,
            details={
                "precisions": [precision / 100 for precision in result.precisions],
                "brevity_penalty": float(result.bp),
                "output_length": int(result.sys_len),
                "reference_length": int(result.ref_len),
            },
        )
