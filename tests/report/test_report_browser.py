"""The report is a web page: a real headless browser (Debian's chromium) opens index.html,
every figure on it decodes to an image with a size, every link reaches what it names (a
file of the report that is not empty, or an element of the page), and a screenshot of the
page is a picture, not a blank.

Chromium is installed by ``scripts/setup.sh --test`` (Debian as root); the tests are
skipped only when it is absent and cannot be installed here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image
from report_helpers import run_ok

#: Flags for a headless chromium on a closed network: without the background-networking
#: ones it keeps opening connections that are refused many at a time.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
TIMEOUT_S = 120

#: Opens the report in a frame and, once everything has loaded, writes what it found into
#: <pre id="result">: each image's source (its start) and decoded size, each link's target
#: and whether it was reached. File links are read back with a synchronous request, which
#: chromium allows between file:// pages with --allow-file-access-from-files.
CHECKER = """<!doctype html>
<html><body><pre id="result">pending</pre>
<iframe id="page" src="%s" style="width:1400px;height:3000px"></iframe>
<script>
window.addEventListener("load", function () {
  var doc = document.getElementById("page").contentDocument;
  var found = {images: [], links: []};
  doc.querySelectorAll("img").forEach(function (img) {
    found.images.push({src: img.getAttribute("src").slice(0, 40), complete: img.complete,
                       width: img.naturalWidth, height: img.naturalHeight});
  });
  doc.querySelectorAll("a[href]").forEach(function (a) {
    var href = a.getAttribute("href"), ok = false, size = 0;
    if (href.charAt(0) === "#") {
      ok = doc.getElementById(decodeURIComponent(href.slice(1))) !== null;
    } else {
      try {
        var request = new XMLHttpRequest();
        request.open("GET", a.href, false);
        request.send();
        size = request.responseText.length;
        ok = size > 0;
      } catch (error) { ok = false; }
    }
    found.links.push({href: href, ok: ok, size: size});
  });
  document.getElementById("result").textContent = JSON.stringify(found);
});
</script></body></html>
"""


def _browser() -> str | None:
    """chromium's path; installed from apt when it is missing and that is possible."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return found
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], capture_output=True,
                   timeout=900, check=False,
                   env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    return shutil.which("chromium")


@pytest.fixture(scope="module")
def browser() -> str:
    found = _browser()
    if found is None:
        pytest.skip("chromium is not installed and cannot be installed here "
                    "(scripts/setup.sh --test installs it on Debian as root)")
    return found


def _chromium(browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="iotune-chromium-") as profile:
        return subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=TIMEOUT_S,
                              check=False)


@pytest.fixture(scope="module")
def report(sim_campaign: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("browser-report")
    run_ok(["report", "-c", str(sim_campaign / "iotune.yaml"), "--tuned",
            str(sim_campaign / "tuned.yaml"), "-o", str(out), "--no-color"])
    return out


class _Tags(HTMLParser):
    """The <img> and <a href> tags of a page, as the HTML has them."""

    def __init__(self) -> None:
        super().__init__()
        self.images = 0
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "img":
            self.images += 1
        elif tag == "a" and values.get("href"):
            self.links.append(str(values["href"]))


@pytest.fixture(scope="module")
def seen(browser: str, report: Path) -> dict[str, list[dict[str, object]]]:
    """What the browser found on the page (see CHECKER)."""
    checker = report.parent / f"{report.name}-checker.html"
    checker.write_text(CHECKER % (report / "index.html").as_uri())
    done = _chromium(browser, "--allow-file-access-from-files", "--virtual-time-budget=20000",
                     "--dump-dom", checker.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    start = done.stdout.index('<pre id="result">') + len('<pre id="result">')
    text = done.stdout[start:done.stdout.index("</pre>", start)]
    assert text != "pending", "the page did not finish loading"
    found: dict[str, list[dict[str, object]]] = json.loads(text.replace("&quot;", '"')
                                                           .replace("&amp;", "&"))
    return found


def test_every_figure_loads_in_the_browser(seen, report):
    manifest = json.loads((report / "manifest.json").read_text())
    tags = _Tags()
    tags.feed((report / "index.html").read_text())
    assert len(seen["images"]) == tags.images >= len(manifest["figures"]) > 0
    broken = [i for i in seen["images"]
              if not (i["complete"] and int(str(i["width"])) > 0 and int(str(i["height"])) > 0)]
    assert broken == []


def test_every_link_reaches_what_it_names(seen, report):
    tags = _Tags()
    tags.feed((report / "index.html").read_text())
    assert [link["href"] for link in seen["links"]] == tags.links
    assert seen["links"], "the report links its tables"
    assert [link for link in seen["links"] if not link["ok"]] == []
    files = [str(link["href"]) for link in seen["links"] if not str(link["href"]).startswith("#")]
    for href in files:  # the browser's reading agrees with the file on disk
        assert (report / href).stat().st_size > 0


def test_a_screenshot_of_the_page_is_a_picture(browser, report, tmp_path):
    shot = tmp_path / "page.png"
    done = _chromium(browser, f"--screenshot={shot}", "--window-size=1400,2000",
                     (report / "index.html").as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    with Image.open(shot) as image:
        assert image.size == (1400, 2000)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    # Text and figures give thousands of colours; a blank or error page a handful.
    assert colours is not None and len(colours) > 500
