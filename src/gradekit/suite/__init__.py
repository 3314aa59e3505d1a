"""Suites: from a YAML file (and its JSONL dataset) to a validated `Suite` of cases.

Owns the suite model (`Suite`, `Case`, `Turn`, `Policy`), the YAML reader that keeps positions
for errors, the parsers of cases, transcripts and small values, datasets streamed line by
line, `load_suite`, and the JSON Schema of the suite file.

May import: `registry` (to create every grader at load), `process` (to check a
`sandbox:` mode) and `core`. Never the runner or the reports."""
