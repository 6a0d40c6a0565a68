"""Course tooling: learner workspace and progress, instructor wrappers around nbgrader, own-code checks.

Modules: ``workspace`` (copy the release into a learner's workspace), ``progress`` (run visible tests),
``instructor`` (release, collect, autograde, feedback, grades), ``checks`` (used by hidden tests),
``preprocessors`` (nbgrader preprocessors that the course configuration adds).
"""
