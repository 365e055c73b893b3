"""The built documentation site (scripts/docs.sh) checked in a real browser and by a crawl.

Headless Chromium (Debian's chromium and chromium-driver) loads the site from a local HTTP
server: the landing page, the API page of birkhoff.sinkhorn, every gallery page with its
figures loaded, and the search page's results for "sinkhorn". A crawl of every built page
checks that each internal link and image resolves, and the reference is checked to name every
public Python name and every CLI flag. Run after ./scripts/docs.sh:

    python3 -m pytest tests/docs -q
"""

from __future__ import annotations

import functools
import html
import html.parser
import http.server
import pathlib
import re
import shutil
import subprocess
import threading
import urllib.parse

import pytest

SITE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "_build" / "html"


@pytest.fixture(scope="session")
def site():
    if not (SITE / "index.html").exists():
        pytest.fail(f"no built site at {SITE}: run ./scripts/docs.sh first")
    return SITE


@pytest.fixture(scope="session")
def server(site):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="session")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        pytest.fail("headless Chromium is missing: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _wait(browser, condition, seconds=30):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, seconds).until(lambda d: condition(d))


def test_landing_page_loads_with_its_navigation(browser, server):
    browser.get(server + "/index.html")
    assert "birkhoff" in browser.title
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('a')).map(a => a.getAttribute('href'))"
    )
    for page in ("getting-started.html", "transport.html", "api/index.html"):
        assert page in links, f"the landing page has no link to {page}"


def test_the_api_page_of_sinkhorn_documents_it(browser, server):
    browser.get(server + "/api/generated/birkhoff.sinkhorn.html")
    signature = browser.find_element("id", "birkhoff.sinkhorn")
    assert "sinkhorn" in signature.text
    body = browser.find_element("tag name", "body").text.lower()  # the theme capitalises labels
    for word in ("blur", "marginal_tol", "returns", "raises"):
        assert word in body, f"the sinkhorn page does not mention {word}"


def _gallery_pages(site):
    skip = {"index.html", "sg_execution_times.html"}
    pages = sorted(p for p in (site / "auto_examples").glob("*.html") if p.name not in skip)
    assert pages, "the gallery has no example pages"
    return pages


def test_every_gallery_page_shows_its_figure(browser, server, site):
    for page in _gallery_pages(site):
        browser.get(f"{server}/auto_examples/{page.name}")
        widths = _wait(
            browser,
            lambda d: d.execute_script(
                "const imgs = Array.from(document.querySelectorAll('img.sphx-glr-single-img, "
                "img.sphx-glr-multi-img'));"
                "return imgs.length && imgs.every(i => i.complete) ? "
                "imgs.map(i => i.naturalWidth) : null;"
            ),
        )
        assert widths and all(w > 0 for w in widths), f"{page.name}: a figure did not load"


def test_search_finds_sinkhorn(browser, server):
    browser.get(server + "/search.html?q=sinkhorn")
    hits = _wait(
        browser,
        lambda d: d.execute_script(
            "const r = document.querySelectorAll('#search-results li, ul.search li');"
            "return r.length ? Array.from(r).map(li => li.innerText) : null;"
        ),
        seconds=60,
    )
    assert any("sinkhorn" in h.lower() for h in hits)


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "a" and "name" in attrs:
            self.ids.add(attrs["name"])
        for key in ("href", "src"):
            if attrs.get(key) and tag in ("a", "img", "link", "script"):
                self.links.append(attrs[key])


@functools.cache
def _parse(path):
    p = _Links()
    p.feed(path.read_text(errors="replace"))
    return p


def test_every_internal_link_resolves(site):
    broken = []
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 30
    for page in pages:
        for link in _parse(page).links:
            url = urllib.parse.urlparse(link)
            if url.scheme or link.startswith("//") or link.startswith("#") and len(link) == 1:
                continue
            target = page if not url.path else (page.parent / urllib.parse.unquote(url.path))
            target = target.resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link}")
            elif url.fragment and target.suffix == ".html":
                if url.fragment not in _parse(target).ids:
                    broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert not broken, "broken internal links:\n" + "\n".join(broken[:50])


def _public_names():
    import importlib
    import types

    for module in ("birkhoff", "birkhoff.torch", "birkhoff.pyg", "birkhoff.datasets"):
        mod = importlib.import_module(module)
        for name in mod.__all__:
            if not isinstance(getattr(mod, name), types.ModuleType):
                yield f"{module}.{name}"


def test_every_public_python_name_has_a_reference_entry(site):
    ids = set()
    for page in (site / "api" / "generated").glob("*.html"):
        ids |= _parse(page).ids
    missing = [name for name in _public_names() if name not in ids]
    assert not missing, f"not in the API reference: {missing}"


def test_every_cli_flag_is_in_the_reference(site):
    exe = shutil.which("birkhoff")
    assert exe, "the birkhoff command is not on PATH"
    text = html.unescape(re.sub(r"<[^>]+>", "", (site / "api" / "cli.html").read_text()))
    top = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    commands = re.findall(r"^  ([a-z][a-z-]*)\s", top.split("Subcommands:")[1], re.M)
    assert "transport" in commands and "align" in commands
    missing = []
    for command in commands:
        out = subprocess.run([exe, command, "--help"], capture_output=True, text=True).stdout
        for flag in set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", out)):
            if flag not in text:
                missing.append(f"{command} {flag}")
    assert not missing, f"CLI flags missing from the reference: {missing}"
