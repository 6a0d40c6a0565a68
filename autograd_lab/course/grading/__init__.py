"""The sandboxed autograder: assemble a job from the source and a submission, run it in bubblewrap, record it.

Modules, one job each: :mod:`.assemble` (trusted side: source notebook + answer cells -> job),
:mod:`.static` (the allow-list check of answer cells), :mod:`.sandbox` (bubblewrap and the run of one job),
:mod:`.runner` (the harness inside the sandbox), :mod:`.limits` (resource limits), :mod:`.batch` (a class's
submissions in parallel, the gradebook written by the grader only). The entry point for instructors is
:func:`autograd_lab.course.instructor.autograde`. Nothing is imported here, so the harness starts light.
"""
