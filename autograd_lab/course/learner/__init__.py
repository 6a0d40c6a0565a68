"""Learner tools: :mod:`.workspace` (``course setup``: the release copied into a workspace, never overwriting) and
:mod:`.progress` (``course progress``: each notebook run as the learner has it, visible tests per exercise)."""
