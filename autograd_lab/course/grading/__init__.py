"""The autograder: student code runs only in a sandbox that produces data; a trusted judge decides.

Modules, one job each:

- :mod:`.assemble`: the job for one submission (source notebook + the submission's answer cells), its public and
  secret parts, and what the judge runs (trusted side; no student code runs).
- :mod:`.testcell`: a graded test cell read statically (visible part, hidden part, the hidden part without its
  judge, ``replaces=``); authoring errors name the cell.
- :mod:`.seeds`: per-submission seeds, HMAC of the instructor's secret.
- :mod:`.stubs`: the sandbox's copy of ``autograd_lab`` with the chapter's exercises stubbed in the source text.
- :mod:`.sandbox`: bubblewrap (mounts, masks of other autodiff libraries), the two-phase run of one job.
- :mod:`.launch`: how a sandbox starts: lower priority, a pids cgroup of its own.
- :mod:`.exercise`: the process inside the sandbox: the feedback run, then one forked process per hidden test
  that sends its results as bytes; it decides nothing.
- :mod:`.cells`: run notebook cells in one namespace with captured output (used by both processes above).
- :mod:`.lazy`: deferred imports in the exercise process (matplotlib runs on first use, not in every setup cell).
- :mod:`.exchange`: the plain-data codec between sandbox and judge (strict parsing).
- :mod:`.wire`: framed JSON on pipes between grader, sandbox and judge.
- :mod:`.judge`: the trusted judge process (reference from the source's solution cells; verdicts and messages).
- :mod:`.limits`: resource limits per submission.
- :mod:`.batch`: a class's submissions in parallel; the verdict of a test; the report lines.
- :mod:`.record`: the gradebook and the autograded notebook (written by the grader only).
- :mod:`.refuse`: nbgrader's own autograde refuses and names the course command.

The entry point for instructors is :func:`autograd_lab.course.instructor.autograde` (``autograd-lab course
autograde ID --jobs N``). Nothing is imported here, so the exercise process starts light.
"""
