"""Grader kinds that each break one rule of gradekit's contract, the way real code does.

Installed for real (pip install) by the kit's tests, which check that the contract reports
each one with a falsifying example.
"""

from __future__ import annotations

import os
import random
import threading
from typing import Any, ClassVar

import attrs

from gradekit import GradeResult, Sample


def _text(value: Any) -> str:
    return "" if value is None else str(value)


@attrs.frozen
class FirstWord:
    """Passes when the output's first word is the expected text.

    Broken: `split()[0]` raises IndexError on an empty (or blank) output.
    """

    kind: ClassVar[str] = "acme.first_word"
    name: str = attrs.field(kw_only=True, default="acme.first_word")
    case_insensitive: bool = attrs.field(kw_only=True, default=False)

    def grade(self, sample: Sample) -> GradeResult:
        first = _text(sample.output).split()[0]
        expected = _text(sample.expected)
        if self.case_insensitive:
            first, expected = first.casefold(), expected.casefold()
        ok = first == expected
        return GradeResult(self.kind, self.name, ok, float(ok), f"first word {first!r}")


@attrs.frozen
class TokenF1:
    """The F1 of the output's words against the expected words.

    Broken: `2 * precision * recall / precision + recall` lacks its parentheses, so an output
    of `a` against `a b` scores 1.5, which GradeResult refuses with a ValueError.
    """

    kind: ClassVar[str] = "acme.token_f1"
    name: str = attrs.field(kw_only=True, default="acme.token_f1")
    minimum: float = attrs.field(kw_only=True, default=0.5)

    def grade(self, sample: Sample) -> GradeResult:
        words = _text(sample.output).split()
        expected = _text(sample.expected).split()
        common = sum(1 for word in set(words) if word in expected)
        if not common:
            return GradeResult(self.kind, self.name, False, 0.0, "no word in common")
        precision, recall = common / len(words), common / len(expected)
        score = 2 * precision * recall / precision + recall
        return GradeResult(self.kind, self.name, score >= self.minimum, score, f"F1 {score:.2f}")


@attrs.frozen
class Judge:
    """A stand-in for a sampled judge: the mean confidence of a few random votes.

    Broken: it is not deterministic and does not declare `deterministic = False`.
    """

    kind: ClassVar[str] = "acme.judge"
    name: str = attrs.field(kw_only=True, default="acme.judge")
    votes: int = attrs.field(kw_only=True, default=5)

    def grade(self, sample: Sample) -> GradeResult:
        rng = random.Random()  # seeded by the operating system, like a model's sampling
        score = sum(rng.random() for _ in range(self.votes)) / self.votes
        return GradeResult(self.kind, self.name, score >= 0.5, score, f"confidence {score:.2f}")


@attrs.frozen
class Normalised:
    """Compares the casefolded output with the casefolded expected text.

    Broken: it caches the casefolded output in the sample's metadata for the graders after
    it, going around the read-only mapping with `dict.__setitem__`.
    """

    kind: ClassVar[str] = "acme.normalised"
    name: str = attrs.field(kw_only=True, default="acme.normalised")

    def grade(self, sample: Sample) -> GradeResult:
        cached = sample.metadata.get("normalised_output")
        if cached is None:
            cached = _text(sample.output).casefold()
            dict.__setitem__(sample.metadata, "normalised_output", cached)
        ok = cached == _text(sample.expected).casefold()
        return GradeResult(self.kind, self.name, ok, float(ok), "compared casefolded")


@attrs.frozen
class Locked:
    """Counts the output's words, guarding a shared counter with a lock.

    Broken: a lock cannot be pickled, so process isolation cannot send this grader to a
    child process, and it does not declare `picklable = False`.
    """

    kind: ClassVar[str] = "acme.locked"
    name: str = attrs.field(kw_only=True, default="acme.locked")
    _lock: Any = attrs.field(init=False, factory=threading.Lock, eq=False, repr=False)

    def grade(self, sample: Sample) -> GradeResult:
        with self._lock:
            words = len(_text(sample.output).split())
        return GradeResult(self.kind, self.name, words > 0, float(words > 0), f"{words} words")


class _Lenient:
    kind = "acme.lenient"

    def __init__(self, name: str, threshold: float) -> None:
        self.name = name
        self.threshold = threshold

    def grade(self, sample: Sample) -> GradeResult:
        score = 1.0 if _text(sample.output) == _text(sample.expected) else 0.0
        return GradeResult(self.kind, self.name, score >= self.threshold, score, "compared")


def lenient(name: str, config: Any) -> _Lenient:
    """Reads the options it knows and ignores the rest.

    Broken: a typo such as `treshold` is silently dropped, and a threshold of `"abc"` raises
    a bare ValueError instead of a ConfigError naming the option.
    """
    return _Lenient(name, float(config.get("threshold", 0.5)))


lenient.examples = ({"threshold": 0.5},)  # type: ignore[attr-defined]


@attrs.frozen
class Logged:
    """Passes a non-empty output, and appends a line to its log for every grade.

    Broken: it is marked inline (pure, in-thread) but opens a file on every grade.
    """

    kind: ClassVar[str] = "acme.logged"
    inline: ClassVar[bool] = True
    name: str = attrs.field(kw_only=True, default="acme.logged")
    log: str = attrs.field(kw_only=True, default=os.devnull)

    def grade(self, sample: Sample) -> GradeResult:
        ok = bool(_text(sample.output))
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(f"{sample.case}: {ok}\n")
        return GradeResult(self.kind, self.name, ok, float(ok), "logged")


@attrs.frozen
class BadExamples:
    """Passes every sample.

    Broken: its `examples` is one config mapping, not a sequence of them.
    """

    kind: ClassVar[str] = "acme.bad_examples"
    examples: ClassVar[Any] = {"strict": True}
    name: str = attrs.field(kw_only=True, default="acme.bad_examples")
    strict: bool = attrs.field(kw_only=True, default=False)

    def grade(self, sample: Sample) -> GradeResult:
        return GradeResult(self.kind, self.name, True, 1.0, "always")


@attrs.frozen
class Shout:
    """Passes an upper-case output.

    Broken: registered as `shout`, without the pack's namespace.
    """

    kind: ClassVar[str] = "shout"
    name: str = attrs.field(kw_only=True, default="shout")

    def grade(self, sample: Sample) -> GradeResult:
        ok = _text(sample.output).isupper()
        return GradeResult(self.kind, self.name, ok, float(ok), "checked case")


@attrs.frozen
class Prefix:
    """Passes an output that starts with `prefix`.

    Broken: `prefix` is required, and the factory declares no `examples`, so the kit can only
    try the empty config, which it rejects.
    """

    kind: ClassVar[str] = "acme.prefix"
    prefix: str = attrs.field(kw_only=True)
    name: str = attrs.field(kw_only=True, default="acme.prefix")

    def grade(self, sample: Sample) -> GradeResult:
        ok = _text(sample.output).startswith(self.prefix)
        return GradeResult(self.kind, self.name, ok, float(ok), "checked prefix")
