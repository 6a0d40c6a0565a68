"""JupyterLab in headless Chromium: notebook 01 of the release opens, runs and renders.

Two copies are served from a temporary folder: the release as a student gets it (errors may appear only in the
answer cells and the tests that call them: the exercises are not done yet) and the release with the answers filled
in (no error at all). A screenshot of the answered notebook is saved as /tmp/autograd_lab_browser_01.png.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from .conftest import COURSE, REPO
from .submissions import full_solution

# One xdist worker runs the whole module, so the module-scoped fixtures start once.
pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("course_browser")]

NOTEBOOK = "01_variables_and_graphs"
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
SCREENSHOT = Path("/tmp/autograd_lab_browser_01.png")

# Every wait below is for a condition, never for a time: under load (another CPU-heavy job beside the suite) a run
# of notebook 01 can take several times as long as alone. The ceilings only turn a hang into a failure.
CEILING_S = 600


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("lab")
    release = REPO / "notebooks" / f"{NOTEBOOK}.ipynb"
    shutil.copy(release, root / "student.ipynb")
    answered = full_solution(nbformat.read(release, as_version=4),
                             nbformat.read(COURSE / "source" / NOTEBOOK / f"{NOTEBOOK}.ipynb", as_version=4))
    nbformat.write(answered, root / "answered.ipynb")
    port = free_port()
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
           "--ServerApp.disable_check_xsrf=True", "--LabApp.expose_app_in_browser=True",
           f"--ServerApp.root_dir={root}"]
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", JUPYTER_CONFIG_DIR=str(root / ".jupyter-config"))
    log = open(root / "lab.log", "w")  # closed in the teardown below
    server = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + CEILING_S  # a ceiling: the loop ends as soon as the server answers
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert server.poll() is None, (root / "lab.log").read_text()[-3000:]
            assert time.monotonic() < deadline, f"JupyterLab did not start within {CEILING_S} s"
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert CHROMIUM.exists() and CHROMEDRIVER.exists(), "needs the Debian packages chromium and chromium-driver"
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--window-size=1400,1600"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


# Resolves when JupyterLab's run-all resolves: NotebookActions.runAll returns the promise of every cell's execution
# (a cell skipped after the first error resolves too, as the kernel aborts it).
RUN_ALL = """
const done = arguments[arguments.length - 1];
(async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.sessionContext.ready;
  await window.jupyterapp.commands.execute('notebook:run-all-cells');
  done({path: panel.context.path});
})().catch(e => done({failure: String(e)}));
"""

# null while the run is still going or an output is not in the page yet; else the cells as the model has them.
# "In the page" means every output of every code cell has its node in the cell's output area (windowing mode
# contentVisibility, JupyterLab's default, keeps all cells in the DOM).
SETTLED = """
const panel = window.jupyterapp.shell.currentWidget;
if (panel.sessionContext.session.kernel.status !== 'idle') return null;
const result = [];
for (const [i, w] of panel.content.widgets.entries()) {
  const c = w.model;
  if (c.type !== 'code') continue;
  if (w.promptNode && w.promptNode.textContent.includes('*')) return null;  // queued or running
  if (w.node.querySelectorAll('.jp-OutputArea-child').length !== c.outputs.length) return null;
  const errors = [];
  for (let k = 0; k < c.outputs.length; k++) {
    const o = c.outputs.get(k).toJSON();
    if (o.output_type === 'error') errors.push(o.ename + ': ' + o.evalue);
  }
  const nb = (c.getMetadata ? c.getMetadata('nbgrader') : null) || {};
  result.push({index: i, grade_id: nb.grade_id || null, solution: !!nb.solution, grade: !!nb.grade, errors,
               ran: c.executionCount !== null, empty: c.sharedModel.getSource().trim() === ''});
}
return result;
"""

RENDERED_ERRORS = ".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr'] .ansi-red-fg"


def wait(driver: object, what: str, condition: object) -> object:
    """Poll ``condition(driver)`` until it returns something truthy; fail naming ``what`` after CEILING_S."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, CEILING_S, poll_frequency=0.25).until(condition, f"{what} (after {CEILING_S} s)")


def run_all(driver: object, url: str, name: str) -> list[dict]:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    driver.get(f"{url}/lab/workspaces/{Path(name).stem}/tree/{name}?reset")  # a fresh layout per notebook
    wait(driver, "the notebook's cells did not appear",
         ec.presence_of_element_located((By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")))
    wait(driver, f"{name} did not become the current widget with a kernel", lambda d: d.execute_script(
        "const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        "return !!(w && w.context && w.context.path === arguments[0] && w.sessionContext"
        " && w.sessionContext.session && w.sessionContext.session.kernel);", name))
    driver.set_script_timeout(CEILING_S)
    result = driver.execute_async_script(RUN_ALL)
    assert "failure" not in result, result
    assert result["path"] == name, f"ran {result['path']} instead of {name}"
    return wait(driver, "the run did not settle (kernel idle, no [*], every output in the page)",
                lambda d: d.execute_script(SETTLED))


def test_answered_notebook_runs_in_jupyterlab_without_errors(lab: str, browser: object) -> None:
    from selenium.webdriver.common.by import By

    cells = run_all(browser, lab, "answered.ipynb")
    assert len(cells) > 5
    failing = [c for c in cells if c["errors"]]
    assert not failing, f"cells with errors: {failing}"
    assert all(c["ran"] or c["empty"] for c in cells), f"cells that did not run: {[c for c in cells if not c['ran']]}"
    assert not browser.find_elements(By.CSS_SELECTOR, RENDERED_ERRORS)
    images = wait(browser, "the drawn computational graph should render as an image",
                  lambda d: d.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output svg, .jp-OutputArea-output img"))
    assert len(images) >= 1
    browser.save_screenshot(str(SCREENSHOT))
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE" and "favicon" not in e["message"]]
    assert not severe, f"browser console errors: {severe}"


def test_student_release_runs_until_the_first_exercise(lab: str, browser: object) -> None:
    """Run all stops at the first error; on the untouched release that must be an exercise, never the prose's code."""
    from selenium.webdriver.common.by import By

    cells = run_all(browser, lab, "student.ipynb")
    failing = [c for c in cells if c["errors"]]
    assert failing, "on the untouched release the first exercise must fail"
    first = failing[0]
    assert first["solution"] or first["grade"], f"the first error is outside the exercise cells: {first}"
    assert any("NotImplementedError" in e for e in first["errors"]), first
    assert all(c["ran"] or c["empty"] for c in cells[: cells.index(first)]), "a cell before the exercise did not run"
    rendered_errors = wait(browser, "the error should be rendered in the page",
                           lambda d: d.find_elements(By.CSS_SELECTOR, RENDERED_ERRORS))
    assert len(rendered_errors) >= 1
