"""Runs read back, above the report model: a run's cases marked against a baseline
(`baseline`), two runs compared (`compare`, rendered by `compare_views`), what a comparison
keeps of each case (`case_scores`) and its paired statistics (`statistics`).

May import: `report` (the model, its reader and text helpers) and `core`. The reports
never import this package: the report model carries a run's baseline marks through
`gradekit.report.marks.Marks`, which `baseline.BaselineMarks` implements."""
