"""BackwardAnimation: the stepper's frames as one self-contained HTML animation that needs no kernel.

Every frame is embedded in the HTML as an SVG image (a ``data:`` URI), under a caption "step k of n: ...". A short
script turns the column of frames into a player (previous / play / next buttons and a slider) showing one frame at
a time. Where scripts do not run (GitHub's notebook view, a notebook JupyterLab does not trust, e-mail) the frames
simply stay one below the other, so every copy of a saved notebook (nbconvert's HTML, nbgrader's feedback, nbviewer,
GitHub) shows the whole backward pass, not only the first frame as a widget without its kernel does.

The markup depends only on the frames (the element id is a hash of them), so re-running a cell gives the same
output.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Sequence
from pathlib import Path

#: Milliseconds per frame when playing.
FRAME_MS = 1200

_SCRIPT = """
(function () {
  var box = document.getElementById("%(id)s");
  if (!box || box.dataset.player === "on") { return; }
  box.dataset.player = "on";
  var frames = box.querySelectorAll("figure.agl-frame");
  var controls = box.querySelector(".agl-controls");
  var slider = controls.querySelector("input");
  var play = controls.querySelector("[data-act=play]");
  var current = 0, timer = null;
  function show(k) {
    current = Math.max(0, Math.min(frames.length - 1, k));
    for (var i = 0; i < frames.length; i++) { frames[i].hidden = (i !== current); }
    slider.value = current;
  }
  function stop() { if (timer) { clearInterval(timer); timer = null; play.textContent = "\\u25b6 play"; } }
  controls.querySelector("[data-act=prev]").onclick = function () { stop(); show(current - 1); };
  controls.querySelector("[data-act=next]").onclick = function () { stop(); show(current + 1); };
  slider.oninput = function () { stop(); show(parseInt(slider.value, 10)); };
  play.onclick = function () {
    if (timer) { stop(); return; }
    if (current === frames.length - 1) { show(0); }
    play.textContent = "\\u275a\\u275a pause";
    timer = setInterval(function () {
      if (current === frames.length - 1) { stop(); } else { show(current + 1); }
    }, %(ms)d);
  };
  controls.hidden = false;
  show(0);
})();
"""


class BackwardAnimation:
    """The frames of a backward pass as a self-contained HTML animation (see the module docstring).

    Displays itself in Jupyter (``_repr_html_``); ``html()`` is the fragment, ``save_as("steps.html")`` a page.

    Args:
        svgs: one SVG document (str) per frame, e.g. from :func:`~autograd_lab.viz.backward_stepper`.
        captions: one caption per frame, shown above it ("step k of n: ...").

    Raises:
        ValueError: if there are no frames, or not one caption per frame.
    """

    def __init__(self, svgs: Sequence[str], captions: Sequence[str]) -> None:
        if not svgs or len(svgs) != len(captions):
            raise ValueError(f"need one caption per frame and at least one frame, got {len(svgs)} frames and "
                             f"{len(captions)} captions")
        self.svgs = list(svgs)
        self.captions = list(captions)

    def __len__(self) -> int:
        return len(self.svgs)

    def __repr__(self) -> str:
        return f"<BackwardAnimation: {len(self)} frames>"

    def html(self) -> str:
        """The animation as an HTML fragment: controls (shown once the script runs), the frames, the script."""
        digest = hashlib.sha256("".join(self.svgs).encode()).hexdigest()[:12]
        box_id = f"agl-stepper-{digest}"
        last = len(self) - 1
        parts = [
            f'<div class="agl-stepper" id="{box_id}">',
            '<div class="agl-controls" hidden>'
            '<button type="button" data-act="prev" title="previous step">&#9664;</button> '
            '<button type="button" data-act="play">&#9654; play</button> '
            '<button type="button" data-act="next" title="next step">&#9654;</button> '
            f'<input type="range" min="0" max="{last}" step="1" value="0" aria-label="step"></div>',
        ]
        for k, (svg, caption) in enumerate(zip(self.svgs, self.captions)):
            text = html.escape(caption)
            data = base64.b64encode(svg[svg.index("<svg"):].encode()).decode("ascii")
            parts.append(
                f'<figure class="agl-frame" data-step="{k}" style="margin:0.4em 0">'
                f'<figcaption><b>{text}</b></figcaption>'
                f'<img src="data:image/svg+xml;base64,{data}" alt="{text}"></figure>'
            )
        parts.append("</div>")
        parts.append(f"<script>{_SCRIPT % {'id': box_id, 'ms': FRAME_MS}}</script>")
        return "\n".join(parts)

    def _repr_html_(self) -> str:
        return self.html()

    def save_as(self, path: str | Path) -> Path:
        """Write a standalone HTML page (``.html`` or ``.htm``) that plays the animation in any browser.

        Raises:
            ValueError: for another suffix.
        """
        path = Path(path)
        if path.suffix.lower() not in (".html", ".htm"):
            raise ValueError(f"the animation is saved as an HTML page: end {path.name!r} with .html")
        page = (
            '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>backward pass, step by step</title></head>'
            f"<body>\n{self.html()}\n</body></html>\n"
        )
        path.write_text(page, encoding="utf-8")
        return path
