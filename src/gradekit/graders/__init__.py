"""The built-in grader kinds, one module each, loaded through gradekit's own entry points."""
