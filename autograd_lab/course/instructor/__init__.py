"""Instructor tools: the nbgrader course root's steps, and the reports around them.

Modules, one job each:

- :mod:`.course_root`: the course root, its assignments and configuration, nbgrader run inside it (``CourseError``);
- :mod:`.student_release`: student versions into ``release/`` and ``notebooks/``; :mod:`.sync`: is ``notebooks/``
  current;
- :mod:`.validation`: nbgrader's Validate on source and release notebooks;
- :mod:`.submissions`: ``collect``, submissions into ``submitted/`` with their times, against the class list;
- :mod:`.autograding`: the call into the grader (:mod:`autograd_lab.course.grading`); :mod:`.report`: its report;
- :mod:`.feedback_files` and :mod:`.leaks`: feedback HTML and the check that it shows no hidden test;
- :mod:`.grades`: the gradebook to CSV; :mod:`.similarity`: answers compared with each other;
- :mod:`.preprocessors`: the nbgrader preprocessors that ``assignments/nbgrader_config.py`` uses.

The steps' functions are importable from here (``instructor.release(...)``; no module has a step's name, so none is
shadowed); nbgrader itself is imported only when a step runs.
"""

from autograd_lab.course.instructor.autograding import autograde, secret_warning
from autograd_lab.course.instructor.course_root import CourseError, assignments, run_nbgrader
from autograd_lab.course.instructor.feedback_files import Feedback, feedback
from autograd_lab.course.instructor.grades import export_grades
from autograd_lab.course.instructor.report import SubmissionReport
from autograd_lab.course.instructor.student_release import release
from autograd_lab.course.instructor.submissions import Collection, Submission, collect
from autograd_lab.course.instructor.validation import validate, validate_notebooks

__all__ = ["Collection", "CourseError", "Feedback", "Submission", "SubmissionReport", "assignments", "autograde",
           "collect", "export_grades", "feedback", "release", "run_nbgrader", "secret_warning", "validate",
           "validate_notebooks"]
