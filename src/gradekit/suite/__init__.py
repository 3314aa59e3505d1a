"""Suites: from a YAML file (and its JSONL dataset) to a validated `Suite` of cases.

Owns the suite model (`Suite`, `Case`, `Turn`, `Policy`), the YAML reader that keeps positions
for errors, the parsers of cases, transcripts and small values, datasets streamed line by
line, `load_suite`, and the JSON Schema of the suite file.

May import: `gradekit.registry` (to create every grader at load) and the core modules. Nothing
of `run` or `report`.
"""
