"""The HTML viewer's static assets: its style sheet and script parts, read by
`gradekit.report._page` and inlined into each page. Holds no Python code.

May import: nothing.
"""
