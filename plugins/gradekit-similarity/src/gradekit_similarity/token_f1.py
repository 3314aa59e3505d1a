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

`stop_words` drops more words than SQuAD's articles: a list of one's own, or `english`,
Snowball's English stop list (below). A word is matched as the text writes it, lowercased,
with the punctuation around it stripped, before SQuAD removes punctuation inside words: so the
stop word "he'll" is dropped while "shell" (what SQuAD would make of "she'll") stays a word.
"""

from __future__ import annotations

import difflib
import re
import string
from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import attrs
from gradekit import GradeResult, OptionError, Sample

from gradekit_similarity._base import advisory_field, scored, texts_of, threshold_field

__all__ = ["ENGLISH_STOP_WORDS", "TokenF1", "normalize", "token_f1"]

KIND = "similarity.token_f1"

_PUNCTUATION: Final = frozenset(string.punctuation)
_ARTICLES: Final = re.compile(r"\b(a|an|the)\b")
# Stripped from around a word before it is looked up among the stop words: ASCII punctuation
# and typographic quotes (a stop word's typographic apostrophe is made straight).
_AROUND: Final = string.punctuation + "\u2018\u2019\u201c\u201d"

ENGLISH_STOP_WORDS: Final = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did
    doing would should could ought i'm you're he's she's it's we're they're i've you've we've
    they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll isn't
    aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't shan't
    shouldn't can't cannot couldn't mustn't let's that's who's what's here's there's when's
    where's why's how's a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each few
    more most other some such no nor not only own same so than too very
    """.split()  # noqa: SIM905 - 174 words read and check best as the text they are in the file
)
"""Snowball's English stop list (snowballstem.org, `algorithms/english/stop.txt`, by Martin
Porter; BSD licence), the list NLTK's English stop words grew from: 174 words. As in the
file, `will`, `can`, `may`, `must`, `might` (homonyms of content words) and `us` (US) are
not in it."""

STOP_WORD_LISTS: Final = {"english": ENGLISH_STOP_WORDS}
"""The named stop word lists `stop_words` takes."""


def _word(text: str) -> str:
    return text.lower().strip(_AROUND).replace("\u2019", "'")


def normalize(text: str, stop_words: frozenset[str] = frozenset()) -> list[str]:
    """SQuAD's answer normalization, as a list of tokens, without `stop_words` (lowercase
    words, matched with the punctuation around them stripped)."""
    words = text.lower().split()
    if stop_words:
        words = [word for word in words if _word(word) not in stop_words]
    kept = " ".join("".join(char for char in word if char not in _PUNCTUATION) for word in words)
    return _ARTICLES.sub(" ", kept).split()


def token_f1(
    output: str, reference: str, stop_words: frozenset[str] = frozenset()
) -> tuple[float, float, float]:
    """(F1, precision, recall) of the output's tokens against the reference's."""
    got, want = normalize(output, stop_words), normalize(reference, stop_words)
    if not got or not want:
        same = float(got == want)
        return same, same, same
    common = sum((Counter(got) & Counter(want)).values())
    if common == 0:
        return 0.0, 0.0, 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall), precision, recall


def _frozen_list(value: Any) -> Any:
    """A list of words as a tuple, so the grader stays immutable; anything else as given."""
    return tuple(value) if isinstance(value, list) else value


def _check_stop_words(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """attrs validator: a named list (`english`) or a list of single words."""
    if value is None:
        return
    if isinstance(value, str):
        if value not in STOP_WORD_LISTS:
            close = difflib.get_close_matches(value, STOP_WORD_LISTS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise OptionError(
                attribute.name,
                f"unknown stop word list {value!r}{hint}; give english or a list of words",
            )
        return
    if not isinstance(value, tuple):
        raise OptionError(
            attribute.name,
            f"expected 'english' or a list of words, got {value!r} ({type(value).__name__})",
        )
    for index, word in enumerate(value):
        where = f"{attribute.name}[{index}]"
        if not isinstance(word, str):
            raise OptionError(where, f"expected a word, got {word!r} ({type(word).__name__})")
        if len(word.split()) != 1:
            raise OptionError(where, f"expected one word, got {word!r}")


@attrs.frozen(kw_only=True)
class TokenF1:
    """Passes when the SQuAD token F1 of the output against the (best) expected text is
    >= `threshold`."""

    kind: ClassVar[str] = KIND
    inline: ClassVar[bool] = True
    examples: ClassVar[tuple[Mapping[str, Any], ...]] = (
        {"threshold": 0.5},
        {"advisory": True, "stop_words": "english"},
        {"threshold": 0.5, "stop_words": ["capital", "city"]},
    )

    name: str = KIND
    threshold: float | None = threshold_field()
    advisory: bool = advisory_field()
    stop_words: Any = attrs.field(
        default=None,
        converter=_frozen_list,
        validator=_check_stop_words,
        metadata={"help": "words dropped besides SQuAD's articles: english, or a list"},
    )
    _stops: frozenset[str] = attrs.field(init=False, eq=False, repr=False)

    @_stops.default
    def _resolve_stop_words(self) -> frozenset[str]:
        # Runs before the validators: a bad value resolves to nothing, and its validator says why.
        if isinstance(self.stop_words, str):
            return STOP_WORD_LISTS.get(self.stop_words, frozenset())
        if isinstance(self.stop_words, tuple):
            return frozenset(_word(word) for word in self.stop_words if isinstance(word, str))
        return frozenset()

    def grade(self, sample: Sample) -> GradeResult:
        """Score the output against each reference; the best counts."""
        texts = texts_of(KIND, self.name, sample)
        if isinstance(texts, GradeResult):
            return texts
        results = [token_f1(texts.output, reference, self._stops) for reference in texts.references]
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
