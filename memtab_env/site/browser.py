"""A headless Chromium for the site's tests and screenshots (Playwright for Python driving
the system browser; nothing is downloaded: ``playwright install`` is never run).

:func:`find_chromium` says where the browser is (``MEMTAB_CHROMIUM`` or Debian's
``/usr/bin/chromium``); :func:`open_browser` starts it with the flags below and a fresh
profile folder, and yields a Playwright browser context.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: flags of every run: headless, no sandbox (containers), no network of its own
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")
CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def find_chromium() -> str | None:
    """The Chromium executable to drive, or None where none is installed."""
    env = os.environ.get("MEMTAB_CHROMIUM")
    if env:
        return env if Path(env).is_file() else None
    for path in CANDIDATES:
        if Path(path).is_file():
            return path
    return shutil.which("chromium")


@contextlib.contextmanager
def open_browser(viewport: tuple[int, int] = (1200, 900)) -> Iterator[Any]:
    """A Playwright browser context of a headless Chromium with a fresh profile.
    Raises :class:`RuntimeError` where no Chromium is installed."""
    from playwright.sync_api import sync_playwright

    exe = find_chromium()
    if exe is None:
        raise RuntimeError("no Chromium: install Debian's chromium (apt-get install chromium) or set "
                           "MEMTAB_CHROMIUM to its path")
    with tempfile.TemporaryDirectory(prefix="memtab-chromium-") as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=exe, headless=True, args=list(FLAGS),
            viewport={"width": viewport[0], "height": viewport[1]})
        try:
            yield context
        finally:
            context.close()


@contextlib.contextmanager
def serve(folder: str | Path) -> Iterator[str]:
    """Serve ``folder`` over http on 127.0.0.1 (a free port) while the block runs; yields
    the base URL (as GitHub Pages would serve the site, records fetched by the viewer)."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
