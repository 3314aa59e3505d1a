"""`python -m gradekit`: the same as the `gradekit` command."""

from gradekit.cli import main

raise SystemExit(main())
