"""Session-wide test settings: no test may reach the network, and no leftover cache may change which data source is
used. Plotting uses the non-interactive Agg backend."""

from __future__ import annotations

import os
import tempfile

os.environ["AUTOGRAD_LAB_OFFLINE"] = "1"
os.environ["AUTOGRAD_LAB_DATA"] = tempfile.mkdtemp(prefix="autograd-lab-test-cache-")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


# The mutation tests' rates (tests/course/mutants) are printed at the end of every run. The hooks live here, in the
# root conftest: under pytest-xdist the controller collects nothing, so it never loads a conftest further down.
_MUTATION_RATES: dict[str, str] = {}


def pytest_runtest_logreport(report) -> None:  # type: ignore[no-untyped-def]
    for key, value in getattr(report, "user_properties", []):
        if key == "mutation rates":
            _MUTATION_RATES[report.nodeid] = value


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if _MUTATION_RATES:
        terminalreporter.section("mutation rates")
        for nodeid in sorted(_MUTATION_RATES):
            terminalreporter.write_line(_MUTATION_RATES[nodeid])
