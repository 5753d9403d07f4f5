"""Size of ``report.html`` for the bundled tournament and its render time in Chromium.

Plays the bundled round-robin (the README's quick start: ``ecarte tournament``, which
writes the report at its end) unless given the output directory of a finished run,
then rewrites the report with ``ecarte report`` and prints:

- the page's size, and how much of it is the inlined chart library and the replays;
- the time ``ecarte report`` takes (journal read and checked, statistics, replays);
- in headless Chromium (``/usr/bin/chromium`` through Playwright), the best of a few
  loads: navigation to the page's script having drawn every chart and filled the
  games list (``performance.now()`` at that point, and the wall time seen from
  outside), then the time to open the first game's replay (unpacking every replay);
- the floor: the same measure for a page that holds only the chart library.

With ``--screenshot PATH`` it also saves a PNG of the page with a replay open (the
README's picture).  Run from the repository root with the project installed:

    .venv/bin/python bench/bench_report.py [OUT] [--screenshot docs/report.png]
"""

from __future__ import annotations

import argparse
import base64
import gzip
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from arbiter.cli import main as cli_main

LOADS = 5
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", help="a finished run (default: play the bundled one)")
    parser.add_argument("--screenshot", help="save a PNG of the page with a replay open")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out) if args.out else Path(tmp) / "bundled"
        if not args.out:
            print("playing the bundled tournament (about a minute on 2 cores) ...", flush=True)
            subprocess.run(
                [sys.executable, "-m", "arbiter", "tournament", "--out", str(out), "--quiet"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        t0 = time.perf_counter()
        assert cli_main(["report", str(out)]) == 0
        write_s = time.perf_counter() - t0
        page_path = out / "report.html"
        text = page_path.read_text(encoding="utf-8")
        replays = re.search(r'id="report-replays">([^<]*)<', text)
        assert replays is not None, "no replays in the page"
        packed = base64.b64decode(replays.group(1))
        library = sum(
            len(p.read_bytes())
            for p in (Path(__file__).resolve().parent.parent / "arbiter" / "static").glob(
                "*.min.js"
            )
        )
        size = page_path.stat().st_size
        print(f"report.html: {size / 1e6:.2f} MB for the run in {out}")
        print(
            f"  chart library {library / 1e3:.0f} KB; replays {len(replays.group(1)) / 1e3:.0f} KB "
            f"(JSON {len(gzip.decompress(packed)) / 1e6:.2f} MB, gzip {len(packed) / 1e3:.0f} KB, "
            "base64)"
        )
        print(f"ecarte report: {write_s:.2f} s")
        with sync_playwright() as pw:
            ctx = pw.chromium.launch_persistent_context(
                str(Path(tmp) / "profile"),
                executable_path=args.chromium,
                headless=True,
                args=FLAGS,
                viewport={"width": 1200, "height": 900},
            )
            errors: list[str] = []
            ready_ms: list[float] = []
            wall_ms: list[float] = []
            replay_ms: list[float] = []
            page = ctx.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            for _ in range(LOADS):
                t0 = time.perf_counter()
                page.goto(page_path.as_uri())
                page.wait_for_selector("body[data-ready='1']")
                wall_ms.append(1000 * (time.perf_counter() - t0))
                ready_ms.append(float(page.evaluate("window.reportReadyMs")))
                t0 = time.perf_counter()
                page.click("#games-table tbody tr:first-child")
                page.wait_for_selector("#replay:not([hidden])")
                replay_ms.append(1000 * (time.perf_counter() - t0))
            print(
                f"render in headless Chromium (best of {LOADS}): charts and games list ready "
                f"{min(ready_ms):.0f} ms after navigation start ({min(wall_ms):.0f} ms wall "
                f"from goto); first replay opened in {min(replay_ms):.0f} ms"
            )
            # The floor: a page holding only the chart library, in the same browser.
            floor = Path(tmp) / "floor.html"
            static = Path(__file__).resolve().parent.parent / "arbiter" / "static"
            floor.write_text(
                "<!DOCTYPE html><html><body>"
                + "".join(
                    f"<script>{p.read_text(encoding='utf-8')}</script>"
                    for p in sorted(static.glob("*.min.js"))
                )
                + "<script>window.readyMs = performance.now()</script></body></html>",
                encoding="utf-8",
            )
            floor_ms = []
            for _ in range(LOADS):
                page.goto(floor.as_uri())
                floor_ms.append(float(page.evaluate("window.readyMs")))
            print(f"floor: a page with the chart library alone ready after {min(floor_ms):.0f} ms")
            if errors:
                print("script errors:", *errors, sep="\n  ")
            if args.screenshot:
                # A game with a few deals, stepped into its first deal, seen with all cards.
                page.set_viewport_size({"width": 1100, "height": 800})
                page.goto(page_path.as_uri())
                page.wait_for_selector("body[data-ready='1']")
                # A shorter games list, so the picture shows the replay under it.
                page.add_style_tag(content=".scroll { max-height: 150px; }")
                page.click("#games-table tbody tr:nth-child(3)")
                page.wait_for_selector("#replay:not([hidden])")
                for _ in range(6):
                    page.keyboard.press("ArrowRight")
                page.evaluate("window.scrollTo(0, 0)")
                page.screenshot(path=args.screenshot, full_page=True, type="png")
                print(f"screenshot: {args.screenshot}")
            ctx.close()


if __name__ == "__main__":
    main()
