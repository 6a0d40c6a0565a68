"""The backward animation in headless Chromium: the script shows one frame at a time, the buttons and the slider
step through all of them, and with scripts off every frame is on the page (as on GitHub)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from autograd_lab.viz import show_backward_steps

from .helpers import build_mlp

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def chrome(javascript: bool) -> object:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--window-size=1200,1400"):
        options.add_argument(flag)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    pytest.importorskip("selenium")
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("needs the Debian packages chromium and chromium-driver")
    path = tmp_path_factory.mktemp("animation") / "steps.html"
    show_backward_steps(build_mlp().loss).save_as(path)
    return path.as_uri()


@pytest.fixture
def browser(request: pytest.FixtureRequest) -> Iterator[object]:
    driver = chrome(javascript=request.param)
    try:
        yield driver
    finally:
        driver.quit()  # type: ignore[attr-defined]


def visible_captions(driver: object) -> list[str]:
    from selenium.webdriver.common.by import By

    figures = driver.find_elements(By.CSS_SELECTOR, "figure.agl-frame")  # type: ignore[attr-defined]
    return [f.find_element(By.TAG_NAME, "figcaption").text.split(":")[0] for f in figures if f.is_displayed()]


@pytest.mark.parametrize("browser", [True], indirect=True)
def test_the_player_shows_one_frame_and_steps_through_all(page: str, browser: object) -> None:
    from selenium.webdriver.common.by import By

    browser.get(page)  # type: ignore[attr-defined]
    assert visible_captions(browser) == ["step 0 of 6"]
    images = browser.find_elements(By.CSS_SELECTOR, "figure.agl-frame img")  # type: ignore[attr-defined]
    assert len(images) == 7 and all(
        browser.execute_script("return arguments[0].naturalWidth", img) > 100 for img in images  # type: ignore[attr-defined]
    ), "every embedded SVG frame decodes to a picture"
    next_button = browser.find_element(By.CSS_SELECTOR, "[data-act=next]")  # type: ignore[attr-defined]
    for k in range(1, 8):
        next_button.click()
        assert visible_captions(browser) == [f"step {min(k, 6)} of 6"]  # stops at the last frame
    browser.find_element(By.CSS_SELECTOR, "[data-act=prev]").click()  # type: ignore[attr-defined]
    assert visible_captions(browser) == ["step 5 of 6"]
    slider = browser.find_element(By.CSS_SELECTOR, ".agl-controls input")  # type: ignore[attr-defined]
    browser.execute_script(  # type: ignore[attr-defined]
        "arguments[0].value = 2; arguments[0].dispatchEvent(new Event('input'))", slider
    )
    assert visible_captions(browser) == ["step 2 of 6"]


@pytest.mark.parametrize("browser", [False], indirect=True)
def test_without_scripts_every_frame_is_on_the_page(page: str, browser: object) -> None:
    browser.get(page)  # type: ignore[attr-defined]
    assert visible_captions(browser) == [f"step {k} of 6" for k in range(7)]
