"""gradekit-similarity: grader kinds that score how close the output is to reference texts.

| kind | computed by |
| --- | --- |
| `similarity.levenshtein` | rapidfuzz (normalized Levenshtein similarity) |
| `similarity.rouge_l` | rouge-score (ROUGE-L F-measure) |
| `similarity.bleu` | sacrebleu (sentence BLEU) |
| `similarity.chrf` | sacrebleu (chrF, chrF++) |
| `similarity.token_f1` | this package (SQuAD token F1) |

Each passes when its score is >= its `threshold`. gradekit finds them through this
distribution's `gradekit.graders` entry points; the metric libraries are imported on first use.
"""

from __future__ import annotations

__all__: list[str] = []
