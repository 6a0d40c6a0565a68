"""Session-wide test settings: no test may reach the network, and no leftover cache may change which data source is
used. Plotting uses the non-interactive Agg backend."""

from __future__ import annotations

import os
import tempfile

os.environ["AUTOGRAD_LAB_OFFLINE"] = "1"
os.environ["AUTOGRAD_LAB_DATA"] = tempfile.mkdtemp(prefix="autograd-lab-test-cache-")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
