"""Scores against the values the metric libraries themselves publish, and SQuAD's definition.

Each expected number names where it is documented. The graders are created through gradekit's
registry, so these run the installed entry points.
"""

from __future__ import annotations

from typing import Any

import gradekit
import pytest


def score(kind: str, output: Any, expected: Any, **options: Any) -> gradekit.GradeResult:
    config = {"threshold": 0.5, **options}
    grader = gradekit.create(f"similarity.{kind}", config=config)
    return grader.grade(gradekit.Sample(output=output, expected=expected))


# -- similarity.levenshtein: rapidfuzz ----------------------------------------------------


def test_levenshtein_matches_rapidfuzz_documentation() -> None:
    # rapidfuzz docs, rapidfuzz.distance.Levenshtein (Usage/distance/Levenshtein.html):
    #   Levenshtein.normalized_similarity("lewenstein", "levenshtein") -> 0.81818181818181
    #   Levenshtein.distance("lewenstein", "levenshtein") -> 2
    result = score("levenshtein", "lewenstein", "levenshtein")
    assert result.score == pytest.approx(0.81818181818181)
    assert result.details["distance"] == 2


def test_levenshtein_case_insensitive_and_best_reference() -> None:
    assert score("levenshtein", "HELLO", "hello").score == 0.0
    assert score("levenshtein", "HELLO", "hello", case_insensitive=True).score == 1.0
    result = score("levenshtein", "kitten", ["dog", "sitting", "kitten!"])
    # "kitten" -> "kitten!": one insertion over 7 characters.
    assert result.score == pytest.approx(1 - 1 / 7)
    assert result.details["best_reference"] == 2


# -- similarity.rouge_l: rouge-score ------------------------------------------------------

# rouge-score's own tests (google-research/google-research, rouge/rouge_scorer_test.py) call
# scorer.score(target, prediction); here the target is the expected text.


def test_rouge_l_matches_rouge_score_tests() -> None:
    # testRougeLConsecutive: score("testing one two", "testing one"): P 1, R 2/3, F 4/5.
    consecutive = score("rouge_l", "testing one", "testing one two")
    assert consecutive.score == pytest.approx(4 / 5)
    assert consecutive.details["precision"] == pytest.approx(1.0)
    assert consecutive.details["recall"] == pytest.approx(2 / 3)
    # testRougeLNonConsecutive: score("testing one two", "testing two"): F 4/5.
    assert score("rouge_l", "testing two", "testing one two").score == pytest.approx(4 / 5)
    # testRougeEmpty: an empty prediction scores 0.
    assert score("rouge_l", "", "testing one two").score == 0.0


# First lines of rouge/testdata/target.txt and prediction.txt in the same repository; the test
# testRougeLAgainstRouge155 checks them against the original ROUGE-1.5.5 Perl script.
ROUGE_TARGET = (
    "ZfbCUIUuePaiLVUlCaUXxkpu XPeWing tUHfPMuZ',-Xd Y BrUgVJing M-HV.-DgdDaY.rFDJCRing Ht-LM "
    "EKBDXkME,yz'RBr q'wtion wIojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxer tKM L"
)
ROUGE_PREDICTION = (
    "rFDJCRtion Ht-LM EKtDXkME,yz'RBr q'wer wrojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxi"
)


def test_rouge_l_matches_rouge_1_5_5_on_rouge_scores_test_data() -> None:
    # testRougeLAgainstRouge155: recall 0.40741, precision 0.68750, F 0.51163 (5 places).
    result = score("rouge_l", ROUGE_PREDICTION, ROUGE_TARGET)
    assert result.details["recall"] == pytest.approx(0.40741, abs=5e-6)
    assert result.details["precision"] == pytest.approx(0.68750, abs=5e-6)
    assert result.score == pytest.approx(0.51163, abs=5e-6)


def test_rouge_l_stemming() -> None:
    # The Porter stemmer turns both "testing" and "tests" into "test".
    assert score("rouge_l", "testing", "tests").score == 0.0
    assert score("rouge_l", "testing", "tests", use_stemmer=True).score == 1.0


def test_rouge_l_unicode_tokenizer_keeps_other_scripts() -> None:
    # rouge-score's tokenizer keeps only a-z and 0-9: Cyrillic text has no tokens at all.
    assert score("rouge_l", "привет мир", "привет мир").score == 0.0
    assert score("rouge_l", "привет мир", "привет мир", tokenizer="unicode").score == 1.0
    # LCS of [привет, большой, мир] and [привет, мир] is 2: P 2/3, R 1, F 0.8.
    assert score("rouge_l", "Привет, большой мир!", "привет мир", tokenizer="unicode").score == (
        pytest.approx(0.8)
    )


def test_rouge_l_best_reference_counts() -> None:
    result = score("rouge_l", "testing one", ["something else", "testing one two"])
    assert result.score == pytest.approx(4 / 5)
    assert result.details["best_reference"] == 1


# -- similarity.bleu: sacrebleu -----------------------------------------------------------

# sacrebleu's own tests (mjpost/sacrebleu, test/test_sentence_bleu.py, "Example taken from
# #98"), sentence BLEU with effective order; scores on sacrebleu's 0-100 scale.
BLEU_REFERENCE = "producţia de zahăr brut se exprimă în zahăr alb;"
BLEU_OUTPUT = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"


@pytest.mark.parametrize(
    ("options", "documented"),
    [
        ({}, 8.493),  # ('exp', None, False, '13a', 8.493)
        ({"tokenize": "none"}, 7.347),  # ('exp', None, False, 'none', 7.347)
        ({"tokenize": "intl"}, 8.493),  # ('exp', None, False, 'intl', 8.493)
        ({"tokenize": "char", "lowercase": True}, 42.0267),  # ('exp', None, True, 'char', ...)
        ({"smooth_method": "add-k"}, 14.882),  # ('add-k', None, False, '13a', 14.882)
        ({"smooth_method": "floor"}, 4.51688),  # ('floor', None, False, '13a', 4.51688)
        ({"smooth_method": "none"}, 0.0),  # ('none', None, False, '13a', 0.0)
    ],
)
def test_bleu_matches_sacrebleu_tests(options: dict[str, Any], documented: float) -> None:
    result = score("bleu", BLEU_OUTPUT, BLEU_REFERENCE, **options)
    assert result.score == pytest.approx(documented / 100, abs=1e-3 / 100)  # their EPSILON


def test_bleu_without_shared_words_is_zero() -> None:
    # test_sentence_bleu.py, "Example taken from #141": "this is a cat" vs "okay thanks" -> 0.
    assert score("bleu", "this is a cat", "okay thanks").score == 0.0


def test_bleu_uses_all_references_at_once() -> None:
    # An output equal to one of the references matches every n-gram: BLEU 1.
    result = score(
        "bleu", "The dog bit the man.", ["The man bit him first.", "The dog bit the man."]
    )
    assert result.score == pytest.approx(1.0)
    assert result.details["references"] == 2
    assert result.details["brevity_penalty"] == 1.0


# -- similarity.chrf: sacrebleu -----------------------------------------------------------

# sacrebleu's own tests (mjpost/sacrebleu, test/test_chrf.py), on sacrebleu's 0-100 scale.


@pytest.mark.parametrize(
    ("output", "reference", "documented"),
    [
        # test_sentence_level_chrf: sentence_chrf(hypothesis, references, eps_smoothing=True)
        (
            "Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
            "Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře.",
            39.14078509,
        ),
        (
            "Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
            "A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři.",
            31.22557079,
        ),
        (
            "Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
            "Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, "
            "připomněli.",
            57.15704367,
        ),
    ],
)
def test_chrf_matches_sacrebleu_sentence_tests(
    output: str, reference: str, documented: float
) -> None:
    result = score("chrf", output, reference, eps_smoothing=True)
    assert result.score == pytest.approx(documented / 100, abs=1e-4 / 100)  # their EPSILON


@pytest.mark.parametrize(
    ("output", "reference", "documented"),
    [
        # test_cases of test_chrf with char_order=6, word_order=0, beta=3, eps_smoothing=True,
        # each a one-sentence corpus (whose corpus score is its sentence score).
        ("a b c", "abc", 50.0),
        ("a", "a", 16.6667),
        (
            " risk assessment must be made of those who are qualified and expertise in the "
            "sector - these are the scientists .",
            "risk assessment has to be undertaken by those who are qualified and expert in "
            "that area - that is the scientists .",
            63.361730,
        ),
    ],
)
def test_chrf_beta_3_matches_sacrebleu_tests(
    output: str, reference: str, documented: float
) -> None:
    result = score("chrf", output, reference, beta=3, eps_smoothing=True)
    assert result.score == pytest.approx(documented / 100, abs=1e-4 / 100)


def test_chrf_plus_plus_adds_word_ngrams() -> None:
    output, reference = "the cat sat on the mat", "the cat is on the mat"
    plain = score("chrf", output, reference)
    plus = score("chrf", output, reference, word_order=2)
    assert plus.message.startswith("chrF++ ")
    assert plain.message.startswith("chrF ")
    assert plus.score != plain.score


# -- similarity.token_f1: SQuAD's definition, hand-computed -------------------------------


@pytest.mark.parametrize(
    ("output", "expected", "f1"),
    [
        # Normalized both to "cat sat on mat": articles and punctuation go, case folds.
        ("The Cat sat on the mat.", "A cat sat on a mat", 1.0),
        # 2 shared tokens; P = 2/2, R = 2/3; F1 = 2 * 1 * 2/3 / (1 + 2/3) = 0.8.
        ("Barack Obama", "President Barack Obama", 0.8),
        # Bags: {x: 2, y: 1} and {x: 1, y: 2} share x once and y once: P = R = 2/3.
        ("x x y", "x y y", 2 / 3),
        # Punctuation is removed, not replaced: "U.S." becomes "us".
        ("U.S.", "us", 1.0),
        # Nothing shared.
        ("Paris", "London", 0.0),
        # The best of several references: vs "1999", P = 1/2, R = 1, F1 = 2/3.
        ("in 1999", ["the year 1999", "1999"], 2 / 3),
        # Only articles left on one side: no tokens against some tokens is 0 (SQuAD 2.0).
        ("the", "cat", 0.0),
    ],
)
def test_token_f1_follows_the_squad_definition(output: str, expected: Any, f1: float) -> None:
    assert score("token_f1", output, expected).score == pytest.approx(f1)


# -- similarity.token_f1: stop words ------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected", "stop_words", "f1"),
    [
        # Without stop words: [it, is, in, paris] vs [paris]: P = 1/4, R = 1, F1 = 0.4.
        ("It is in Paris.", "Paris", None, 0.4),
        # Snowball's English list drops it, is, in.
        ("It is in Paris.", "Paris", "english", 1.0),
        # A list of one's own: [capital, is, paris] loses capital and is.
        ("The capital is Paris", "Paris", ["capital", "IS"], 1.0),
        ("The capital is Paris", "Paris", None, 0.5),
        # Contractions are matched before punctuation goes: "he'll" is a stop word, while
        # "shell" (what SQuAD's normalisation makes of "she'll") is not: [see, shell] vs [shell].
        ("He'll see the shell", "shell", "english", 2 / 3),
        ("He\u2019ll see the shell", "shell", "english", 2 / 3),  # a typographic apostrophe
        ("don't, won't!", "cat", "english", 0.0),
        # Only stop words left on both sides: both empty, F1 1 (SQuAD 2.0's rule).
        ("It is.", "Is it?", "english", 1.0),
    ],
)
def test_token_f1_drops_stop_words(output: str, expected: Any, stop_words: Any, f1: float) -> None:
    options = {} if stop_words is None else {"stop_words": stop_words}
    assert score("token_f1", output, expected, **options).score == pytest.approx(f1)


def test_the_english_stop_words_are_snowballs_list() -> None:
    from gradekit_similarity.token_f1 import ENGLISH_STOP_WORDS

    # Snowball's English stop list (snowballstem.org, algorithms/english/stop.txt): 174
    # words, among them the contractions; will, can, may, must, might and us are left out.
    assert len(ENGLISH_STOP_WORDS) == 174
    assert {"i", "yourselves", "ought", "mustn't", "how's", "very", "the"} <= ENGLISH_STOP_WORDS
    assert not {"will", "can", "may", "must", "might", "us"} & ENGLISH_STOP_WORDS


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("englsh", "$.stop_words: unknown stop word list 'englsh' (did you mean 'english'?)"),
        (42, "$.stop_words: expected 'english' or a list of words, got 42 (int)"),
        (["the", 3], "$.stop_words[1]: expected a word, got 3 (int)"),
        (["two words"], "$.stop_words[0]: expected one word, got 'two words'"),
    ],
)
def test_stop_words_are_checked_when_created(value: Any, problem: str) -> None:
    with pytest.raises(gradekit.ConfigError) as caught:
        gradekit.create("similarity.token_f1", config={"threshold": 0.5, "stop_words": value})
    assert problem in str(caught.value)
