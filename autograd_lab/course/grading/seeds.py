"""Hidden-test seeds per student and per submission, from the instructor's secret (read on the trusted side only).

``seed = HMAC-SHA256(secret, assignment | student | sha256(answer cells) | grade_id)``, its first 8 bytes as a
little-endian unsigned int. A change to any answer cell gives every hidden test new inputs, so what one submission's
feedback might reveal about its inputs says nothing about the next submission's, nor about a classmate's.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from pathlib import Path

from autograd_lab.course import checks

PUBLIC_WARNING = ("graded with the public default secret: anyone can recompute the hidden inputs; set "
                  f"${checks.SECRET_ENV} or ${checks.SECRET_FILE_ENV} (docs/instructor.md)")


class SecretError(RuntimeError):
    """The grading secret is kept where students can read it (inside the course folder), or cannot be read."""


@dataclass(frozen=True)
class Secret:
    """The instructor's grading secret; ``public`` when none was configured (the default of :mod:`checks`)."""

    value: bytes
    public: bool


def read_secret(course_dir: Path | None = None) -> Secret:
    """The secret from ``$AUTOGRAD_LAB_GRADING_SECRET`` or the file named by ``$AUTOGRAD_LAB_GRADING_SECRET_FILE``.

    Raises:
        SecretError: if the secret file lies inside ``course_dir`` or the repository around it (it would be
            published with the course), or cannot be read.
    """
    text = os.environ.get(checks.SECRET_ENV)
    path = os.environ.get(checks.SECRET_FILE_ENV)
    if text is None and path:
        where = Path(path).resolve()
        if course_dir is not None:
            root = course_dir.resolve()
            for inside in (root, root.parent):
                if (inside == root or (inside / ".git").exists()) and where.is_relative_to(inside):
                    raise SecretError(f"the grading secret file {where} is inside {inside}, where it would be "
                                      f"published with the course; keep it outside (docs/instructor.md)")
        try:
            text = where.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise SecretError(f"the grading secret file {where} cannot be read: {exc.strerror}") from exc
    if not text:
        return Secret(checks.PUBLIC_SECRET.encode(), True)
    return Secret(text.encode(), False)


def answers_digest(answers: dict[str, str]) -> str:
    """SHA-256 (hex) of a submission's answer cells: ``{grade_id: source}``, in grade_id order."""
    return hashlib.sha256(json.dumps(sorted(answers.items())).encode()).hexdigest()


def submission_seeds(secret: Secret, assignment: str, student: str, answers: dict[str, str],
                     tags: list[str]) -> dict[str, int]:
    """``{grade_id: 64-bit seed}`` for each hidden test of one submission (see the module docstring)."""
    digest = answers_digest(answers)
    out = {}
    for tag in tags:
        message = "|".join((assignment, student, digest, tag)).encode()
        out[tag] = int.from_bytes(hmac.new(secret.value, message, hashlib.sha256).digest()[:8], "little")
    return out
