"""The course around the notebooks, grouped by who uses it.

- :mod:`.checks`: imported by every notebook (``from autograd_lab.course import checks``): seeded hidden inputs and
  ``checks.hidden_test``, a hidden test split into its exercise and its judge.
- :mod:`.learner`: the learner's commands, ``course setup`` and ``course progress``.
- :mod:`.instructor`: the instructor's commands around nbgrader: release, collect, autograde, feedback, grades,
  and the reports (similarity, leaks).
- :mod:`.grading`: the grader: a sandbox that runs a submission and emits plain data, and the trusted judge.
"""
