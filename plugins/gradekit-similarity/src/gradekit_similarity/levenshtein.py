"""The `similarity.levenshtein` kind: normalized Levenshtein similarity, computed by rapidfuzz.

similarity = 1 - distance / max(len(output), len(reference)), where distance counts the
insertions, deletions and substitutions of characters that turn one text into the other
(`rapidfuzz.distance.Levenshtein.normalized_similarity`). Two empty texts are identical (1.0).
Against several references, the best one counts.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from gradekit import GradeResult, Sample

from gradekit_similarity._base import (
    Texts,
    advisory_field,
    import_metric,
    scored,
    texts_of,
    threshold_field,
)

__all__ = ["Levenshtein"]

KIND = "similarity.levenshtein"


@functools.cache
def _distance() -> Any:
    return import_metric("rapidfuzz.distance.Levenshtein")


@attrs.frozen(kw_only=True)
class Levenshtein:
    """Passes when the normalized Levenshtein similarity of the output to the (best) expected
    text is >= `threshold`."""

    kind: ClassVar[str] = KIND
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"threshold": 0.8},
        {"threshold": 0.9, "case_insensitive": True},
    )

    name: str = KIND
    threshold: float | None = threshold_field()
    advisory: bool = advisory_field()
    case_insensitive: bool = attrs.field(
        default=False, metadata={"help": "compare casefolded texts"}
    )

    def grade(self, sample: Sample) -> GradeResult:
        """Score the output against each reference; the best counts."""
        texts = texts_of(KIND, self.name, sample)
        if isinstance(texts, GradeResult):
            return texts
        return self._score(texts)

    def _score(self, texts: Texts) -> GradeResult:
        distance_module = _distance()
        processor = str.casefold if self.case_insensitive else None
        scores = [
            distance_module.normalized_similarity(texts.output, reference, processor=processor)
            for reference in texts.references
        ]
        best = max(range(len(scores)), key=scores.__getitem__)
        distance = distance_module.distance(
            texts.output, texts.references[best], processor=processor
        )
        return scored(
            KIND,
            self.name,
            label="Levenshtein similarity",
            score=scores[best],
            threshold=self.threshold,
            texts=texts,
            best=best,
            details={"distance": distance},
        )
