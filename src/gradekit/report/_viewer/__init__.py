"""The HTML viewer's static assets: its style sheet and script parts, read by
`gradekit.report.html` and inlined into each page. Holds no Python code.

May import: nothing (it holds the HTML viewer's script and style)."""
