"""Protocol bot that answers the hello, then dies on its first request the way a Rust
program panics: the cause two lines above a boilerplate note, exit status 101.
With ``flood`` it first writes many long stderr lines (the quote must stay small)."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "panic", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
        sys.stdout.flush()
    elif msg["type"] == "request":
        if sys.argv[1:] == ["flood"]:
            for i in range(50):
                sys.stderr.write(f"debug {i}: " + "x" * 300 + "\n")
        sys.stderr.write(
            "thread 'main' panicked at src/main.rs:312:5:\n"
            "index out of bounds: the len is 5 but the index is 7\x1b[2J\n"
            "\n"
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
        )
        sys.stderr.flush()
        sys.exit(101)
    elif msg["type"] == "quit":
        break
