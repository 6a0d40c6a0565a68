"""nbgrader configuration for the autograd-lab course; this folder is the course root.

Run nbgrader from this folder (``cd assignments && nbgrader ...``) or through ``autograd-lab course ...``,
which does that for you. Generated folders (release/, submitted/, autograded/, feedback/) and gradebook.db
stay here and are git-ignored; the student release that learners open is copied to ../notebooks/.

Grading: ``autograd-lab course autograde ID [--jobs N]`` is the only way to grade. It runs each submission's code
in a bubblewrap sandbox that only produces data, and a trusted judge, which runs your source notebook's solutions,
decides each hidden test (autograd_lab.course.grading; docs/instructor.md, section 3a). The verdicts go into this
course's gradebook, so feedback, export and the formgrader work as usual. Plain ``nbgrader autograde`` and the
formgrader's Autograde button refuse (Autograde.exporter_class = RefusingExporter) with a message naming the
course command, before they remove, copy or record anything.

- GradingLimits.*: the sandboxed grader's limits per submission (cell and notebook wall clock, CPU, memory,
  processes, file size, scratch disk, output bytes of every MIME type); `--limit NAME=VALUE` overrides one per run.
  See autograd_lab.course.grading.limits.Limits for units and docs/instructor.md for what each does.

Settings that differ from nbgrader's defaults, and why (nbgrader validate uses them):
- Execute.timeout: the per-cell timeout (also the sandboxed grader's cell_seconds unless GradingLimits sets it).
  ExecutePreprocessor.timeout is ignored by nbgrader (nbgrader#1463).
- Execute.kernel_name: the kernelspec is named explicitly instead of trusting the submitted notebook's metadata.
- Execute.extra_arguments: the validating kernel gets an address-space limit, because nbgrader has no memory limit
  (nbgrader#1429): a memory hog then fails with MemoryError in its own cell instead of killing the machine.
  3 GiB by default (a kernel with the course imports maps ~0.9 GB); AUTOGRAD_LAB_GRADER_MEMORY_MB overrides it.
- Autograde.exporter_class, sanitize_preprocessors, autograde_preprocessors: refuse (see "Grading" above).
- GenerateFeedback.preprocessors: ClearHiddenTests strips hidden tests from the feedback HTML (by default nbgrader
  shows them to students); ShortTracebacks cuts tracebacks to their last line, since their context lines would
  quote a failing hidden test. NeutraliseOutputs keeps only plain text and checked PNG images of every output and
  shows markdown answers as literal text, so no HTML, SVG or JavaScript a submission produced runs in feedback.
"""

import os

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import ClearHiddenTests, GetGrades

from autograd_lab.course.grading.refuse import RefuseAutograde, RefusingExporter
from autograd_lab.course.instructor.preprocessors import (
    NeutraliseOutputs,
    ShortTracebacks,
    kernel_memory_limit_argument,
)

c = get_config()  # noqa: F821 (injected by traitlets when it loads this file)

COURSE_ROOT = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = COURSE_ROOT
c.CourseDirectory.course_id = "autograd-lab"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(COURSE_ROOT, "gradebook.db")
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", ".pytest_cache"]

# Release: solutions replaced by a stub that fails loudly, outputs cleared, hidden tests removed.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.ClearOutput.remove_metadata_fields = ["collapsed", "scrolled", "ExecuteTime", "execution"]

# The kernel of nbgrader validate (and of the Validate button).
c.Execute.kernel_name = "python3"
c.Execute.timeout = 60
c.Execute.interrupt_on_timeout = True
c.Execute.extra_arguments = [
    "--HistoryManager.hist_file=:memory:",
    "--IPKernelApp.log_level=ERROR",  # no "running over TCP without encryption" warning per notebook
    kernel_memory_limit_argument(int(os.environ.get("AUTOGRAD_LAB_GRADER_MEMORY_MB", "3072")) * 1024**2),
]
# The sandboxed grader (autograd-lab course autograde); units in the names.
c.GradingLimits.cell_seconds = 60
c.GradingLimits.notebook_seconds = 600
c.GradingLimits.cpu_seconds = 300
c.GradingLimits.memory_mb = 3072
c.GradingLimits.processes = 64  # threads count too: a default thread pool must fit
c.GradingLimits.file_mb = 16
c.GradingLimits.scratch_mb = 64
c.GradingLimits.output_kb = 2048

c.Autograde.exporter_class = RefusingExporter
c.Autograde.sanitize_preprocessors = [RefuseAutograde]
c.Autograde.autograde_preprocessors = [RefuseAutograde]

c.GenerateFeedback.preprocessors = [
    GetGrades,
    ClearHiddenTests,
    ShortTracebacks,
    NeutraliseOutputs,
    CSSHTMLHeaderPreprocessor,
]
