"""The `similarity.token_f1` kind: token F1 as SQuAD defines it, computed here.

Both texts are normalized the way SQuAD's evaluation does: lowercased, ASCII punctuation
removed, the articles `a`, `an` and `the` removed, whitespace collapsed; then split on
whitespace. With `common` the number of tokens the two bags share (each token counted as often
as it occurs in both):

    precision = common / output tokens,  recall = common / reference tokens,
    F1 = 2 * precision * recall / (precision + recall)   (0 when nothing is shared)

When either text has no token left, F1 is 1 if both are empty and 0 otherwise (as in SQuAD 2.0's
script). Against several references the best F1 counts, as SQuAD takes the maximum over its
ground-truth answers.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import attrs
from gradekit import GradeResult, Sample

from gradekit_similarity._base import THRESHOLD_HELP, check_threshold, scored, texts_of

__all__ = ["TokenF1", "normalize", "token_f1"]

KIND = "similarity.token_f1"

_PUNCTUATION: Final = frozenset(string.punctuation)
_ARTICLES: Final = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> list[str]:
    """SQuAD's answer normalization, as a list of tokens."""
    kept = "".join(char for char in text.lower() if char not in _PUNCTUATION)
    return _ARTICLES.sub(" ", kept).split()


def token_f1(output: str, reference: str) -> tuple[float, float, float]:
    """(F1, precision, recall) of the output's tokens against the reference's."""
    got, want = normalize(output), normalize(reference)
    if not got or not want:
        same = float(got == want)
        return same, same, same
    common = sum((Counter(got) & Counter(want)).values())
    if common == 0:
        return 0.0, 0.0, 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall), precision, recall


@attrs.frozen(kw_only=True)
class TokenF1:
    """Passes when the SQuAD token F1 of the output against the (best) expected text is
    >= `threshold`."""

    kind: ClassVar[str] = KIND
    inline: ClassVar[bool] = True
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = ({"threshold": 0.5},)

    name: str = KIND
    threshold: float = attrs.field(validator=check_threshold, metadata={"help": THRESHOLD_HELP})

    def grade(self, sample: Sample) -> GradeResult:
        """Score the output against each reference; the best counts."""
        texts = texts_of(KIND, self.name, sample)
        if isinstance(texts, GradeResult):
            return texts
        results = [token_f1(texts.output, reference) for reference in texts.references]
        best = max(range(len(results)), key=lambda index: results[index][0])
        f1, precision, recall = results[best]
        return scored(
            KIND,
            self.name,
            label="token F1",
            score=f1,
            threshold=self.threshold,
            texts=texts,
            best=best,
            details={"precision": precision, "recall": recall},
        )
