"""How a sandbox's first process is started: in its pids cgroup and at a lower priority before it execs anything
(checked on a plain command in place of bwrap; fast)."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from autograd_lab.course.grading import launch

PROBE = ["/bin/sh", "-c", "nice; cat /proc/self/cgroup"]  # prints the niceness, then the cgroups of the process


def test_the_launcher_lowers_the_priority_and_joins_the_cgroup_before_the_command_runs() -> None:
    group = launch.pids_cgroup(8)
    try:
        prefix, preexec = launch.launcher(group, 10)
        assert preexec is None, "sh and nice are installed: no preexec_fn (which would fork the whole grader)"
        out = subprocess.run([*prefix, *PROBE], capture_output=True, text=True, check=True, env={}).stdout
    finally:
        if group is not None:
            launch.remove_cgroup(group)
    niceness, *cgroups = out.splitlines()
    assert int(niceness) == 10
    if group is None:
        pytest.skip("no writable pids cgroup on this machine: only the priority was checked")
    assert any(line.endswith("/" + group.name) for line in cgroups), cgroups


def test_without_a_cgroup_only_the_priority_is_lowered() -> None:
    prefix, preexec = launch.launcher(None, 7)
    assert preexec is None
    assert subprocess.run([*prefix, *PROBE], capture_output=True, text=True, check=True).stdout.split()[0] == "7"


def test_the_fallback_preexec_does_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch, "launch_tools", lambda: None)
    prefix, preexec = launch.launcher(None, 5)
    assert prefix == [] and preexec is not None
    out = subprocess.run(PROBE, capture_output=True, text=True, check=True, preexec_fn=preexec).stdout
    assert out.split()[0] == "5"


def test_removing_the_cgroup_kills_what_is_left_in_it() -> None:
    group = launch.pids_cgroup(8)
    if group is None:
        pytest.skip("no writable pids cgroup on this machine")
    prefix, _ = launch.launcher(group, 10)
    # A process that left the session (as one could in unsafe mode): only the cgroup still knows it.
    stray = subprocess.Popen([*prefix, "/bin/sleep", "60"], start_new_session=True)
    try:
        for _ in range(200):
            if (group / "cgroup.procs").read_text().split():
                break
            time.sleep(0.005)
        launch.remove_cgroup(group)
        assert stray.wait(timeout=5) == -signal.SIGKILL
        assert not group.exists()
    finally:
        if stray.poll() is None:
            stray.kill()
            stray.wait()
