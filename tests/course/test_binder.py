"""binder/: the pins agree with constraints.txt and resolve, and repo2docker turns the folder into the right build."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

BINDER = REPO / "binder"


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^\s*([A-Za-z0-9_.\-\[\]]+)==([^\s#;]+)", line)
        if m:
            found[m.group(1).lower()] = m.group(2)
    return found


def test_every_binder_requirement_is_pinned_like_constraints() -> None:
    lines = [ln.strip() for ln in (BINDER / "requirements.txt").read_text().splitlines()]
    reqs = [ln for ln in lines if ln and not ln.startswith("#")]
    assert all("==" in ln for ln in reqs), f"unpinned lines in binder/requirements.txt: {reqs}"
    binder, constraints = pins(BINDER / "requirements.txt"), pins(REPO / "constraints.txt")
    assert {"numpy", "jupyterlab", "notebook", "nbgrader", "ipykernel", "matplotlib", "graphviz"} <= set(binder)
    different = {name: (v, constraints.get(name)) for name, v in binder.items() if constraints.get(name) != v}
    assert not different, f"binder pin differs from constraints.txt (binder, constraints): {different}"


def test_apt_runtime_and_post_build() -> None:
    apt = (BINDER / "apt.txt").read_text().split()
    assert set(apt) == {"graphviz", "gcc", "gcc-arm-none-eabi", "libnewlib-arm-none-eabi", "qemu-system-arm"}
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    post = BINDER / "postBuild"
    assert post.stat().st_mode & stat.S_IXUSR, "binder/postBuild must be executable"
    text = post.read_text()
    assert text.startswith("#!/bin/bash") and "set -euo pipefail" in text
    assert "pip install --no-cache-dir --no-deps -e ." in text
    for plugin in ("formgrader", "create-assignment", "course-list", "assignment-list"):
        assert plugin in text
    assert '"nbgrader.server_extensions.formgrader": false' in text


def test_repo2docker_build_spec_holds_the_binder_steps() -> None:
    exe = Path(sys.executable).parent / "repo2docker"
    assert exe.exists(), "repo2docker is missing: pip install jupyter-repo2docker (pinned in constraints.txt)"
    proc = subprocess.run([str(exe), "--no-build", "--debug", "."], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    spec = proc.stdout + proc.stderr
    assert proc.returncode == 0, spec[-3000:]
    assert "Building conda environment for python=3.11" in spec
    apt_line = next(line for line in spec.splitlines() if "apt-get install" in line and "graphviz" in line)
    for package in ("gcc", "gcc-arm-none-eabi", "graphviz", "libnewlib-arm-none-eabi", "qemu-system-arm"):
        assert f" {package} " in f" {apt_line} ", f"{package} missing from {apt_line!r}"
    assert 'pip install --no-cache-dir -r "binder/requirements.txt"' in spec
    assert "RUN ./binder/postBuild" in spec
    # The pinned requirements install first (a cached layer), postBuild after the repository is copied in.
    assert spec.index('pip install --no-cache-dir -r "binder/requirements.txt"') < spec.index("RUN ./binder/postBuild")


@pytest.mark.slow
def test_binder_pins_resolve_together(tmp_path: Path) -> None:
    """pip resolves the whole pinned set from the configured registries, as if nothing were installed."""
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet", "--report",
           str(report), "-r", str(BINDER / "requirements.txt")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"))
    assert proc.returncode == 0, f"binder/requirements.txt does not resolve:\n{proc.stderr[-3000:]}"
    resolved = {item["metadata"]["name"].lower(): item["metadata"]["version"]
                for item in json.loads(report.read_text())["install"]}
    for name, version in pins(BINDER / "requirements.txt").items():
        assert resolved.get(name) == version, f"{name}: pinned {version}, resolved {resolved.get(name)}"
