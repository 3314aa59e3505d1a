"""The `similarity.rouge_l` kind: ROUGE-L F-measure, computed by Google's rouge-score.

ROUGE-L scores the longest common subsequence (LCS) of tokens: precision = LCS / output tokens,
recall = LCS / reference tokens, F = their harmonic mean. rouge-score's own tokenizer (the
default, `tokenizer: rouge`) lowercases and keeps only ASCII letters and digits, as the
original ROUGE-1.5.5 script does: text in other scripts has no tokens and scores 0. For such
text, `tokenizer: unicode` keeps runs of Unicode letters and digits instead (without
stemming). Against several references the one with the best F-measure counts (rouge-score's
`score_multi` rule). The LCS table grows with the product of the two texts' lengths, so a text
over `max_tokens` tokens is an error result, never a grade that runs for minutes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal

import attrs
from gradekit import GradeResult, OptionError, Sample

from gradekit_similarity._base import (
    advisory_field,
    import_metric,
    scored,
    texts_of,
    threshold_field,
)

__all__ = ["RougeL"]

KIND = "similarity.rouge_l"

_WORD: Final = re.compile(r"[^\W_]+")


class _UnicodeTokenizer:
    """Casefolded runs of Unicode letters and digits: `Čaj, s mlékem!` -> čaj, s, mlékem."""

    def tokenize(self, text: str) -> list[str]:
        return _WORD.findall(text.casefold())


@functools.cache
def _counter(tokenizer: str) -> Any:
    """The tokenizer the scorer uses (stemming changes no count), to count tokens with."""
    if tokenizer == "unicode":
        return _UnicodeTokenizer()
    return import_metric("rouge_score.tokenizers").DefaultTokenizer(use_stemmer=False)


@functools.cache
def _scorer(use_stemmer: bool, tokenizer: str) -> Any:
    rouge_scorer = import_metric("rouge_score.rouge_scorer")
    custom = _UnicodeTokenizer() if tokenizer == "unicode" else None
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer, tokenizer=custom)


def _stemming_needs_rouge_tokens(
    instance: Any, attribute: attrs.Attribute[Any], value: bool
) -> None:
    if value and instance.tokenizer != "rouge":
        raise OptionError(
            attribute.name,
            "stemming works only with tokenizer: rouge (rouge-score's Porter stemmer is English)",
        )


@attrs.frozen(kw_only=True)
class RougeL:
    """Passes when the ROUGE-L F-measure of the output against the (best) expected text is
    >= `threshold`."""

    kind: ClassVar[str] = KIND
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"threshold": 0.5},
        {"threshold": 0.4, "use_stemmer": True},
        {"threshold": 0.5, "tokenizer": "unicode"},
    )

    name: str = KIND
    threshold: float | None = threshold_field()
    advisory: bool = advisory_field()
    tokenizer: Literal["rouge", "unicode"] = attrs.field(
        default="rouge",
        metadata={"help": "rouge: ASCII letters and digits (ROUGE-1.5.5); unicode: any script"},
    )
    use_stemmer: bool = attrs.field(
        default=False,
        validator=_stemming_needs_rouge_tokens,
        metadata={"help": "Porter-stem English words longer than 3 letters"},
    )
    max_tokens: int = attrs.field(
        default=2000,
        validator=attrs.validators.and_(attrs.validators.instance_of(int), attrs.validators.ge(1)),
        metadata={"help": "longest text (in tokens) scored; longer is an error (LCS is quadratic)"},
    )

    def grade(self, sample: Sample) -> GradeResult:
        """Score the output against each reference; the best F-measure counts."""
        texts = texts_of(KIND, self.name, sample)
        if isinstance(texts, GradeResult):
            return texts
        counter = _counter(self.tokenizer)
        for label, text in (("output", texts.output), *(("expected", r) for r in texts.references)):
            count = len(counter.tokenize(text))
            if count > self.max_tokens:
                return GradeResult.of_error(
                    KIND,
                    self.name,
                    f"ValueError: the {label} has {count} tokens, over max_tokens "
                    f"({self.max_tokens}): ROUGE-L's table grows with the product of the lengths; "
                    "raise max_tokens to score it anyway",
                )
        scorer = _scorer(self.use_stemmer, self.tokenizer)
        # rouge-score's argument order is (target, prediction).
        scores = [scorer.score(reference, texts.output)["rougeL"] for reference in texts.references]
        best = max(range(len(scores)), key=lambda index: scores[index].fmeasure)
        score = scores[best]
        return scored(
            KIND,
            self.name,
            label="ROUGE-L F",
            score=score.fmeasure,
            threshold=self.threshold,
            texts=texts,
            best=best,
            details={"precision": float(score.precision), "recall": float(score.recall)},
        )
