#!/usr/bin/env python3
"""Cold time to first diagnostics in the editor: a fresh `staticfx lsp` process opens one file.

Usage:

    python3 scripts/bench/lsp_cold_open.py BINARY FILE [--root DIR] [--python VENV] [--runs N]

Each run starts the server, sends `initialize` / `initialized` (workspace folder DIR, the
`python` setting VENV) and `didOpen` of FILE, and measures from `didOpen` to the first
`publishDiagnostics` for it, and from process start to it. The server publishes a file whose
classes are built from a config in two stages (the flagged retraces' breaks second, and only
when they add something); `--settle SECONDS` also waits that long after each publication for a
further one and reports when the last arrived. No cache is shared between runs
beyond what the server itself keeps on disk (its environment cache under ~/.cache/staticfx);
pass a build of the binary made with `--release` to compare with the 1 s target. Prints one line
per run and the median.
"""

from __future__ import annotations

import argparse
import json
import select
import statistics
import subprocess
import time
from pathlib import Path


def frame(msg: dict) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream) -> dict:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            raise EOFError("server closed its output")
        line = line.strip()
        if not line:
            break
        key, _, value = line.decode().partition(":")
        if key.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length))


def one_run(binary: str, path: Path, root: Path, python: str | None,
            settle: float) -> tuple[float, float, int, float]:
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    uri = path.resolve().as_uri()
    options = {"python": python} if python else {}
    send = lambda m: (proc.stdin.write(frame(m)), proc.stdin.flush())  # noqa: E731
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "capabilities": {},
        "workspaceFolders": [{"uri": root.resolve().as_uri(), "name": "ws"}],
        "initializationOptions": options}})
    while read_message(proc.stdout).get("id") != 1:
        pass
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    opened = time.perf_counter()
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": path.read_text()}}})
    while True:
        msg = read_message(proc.stdout)
        if msg.get("method") == "workspace/configuration" and "id" in msg:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": [None] * len(msg["params"]["items"])})
        if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
            done = time.perf_counter()
            count = len(msg["params"]["diagnostics"])
            break
    last = done
    while settle > 0 and select.select([proc.stdout], [], [], settle)[0]:
        msg = read_message(proc.stdout)
        if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
            last = time.perf_counter()
            count = len(msg["params"]["diagnostics"])
    send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    send({"jsonrpc": "2.0", "method": "exit"})
    proc.wait(timeout=10)
    return done - opened, done - start, count, last - opened


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("file", type=Path)
    ap.add_argument("--root", type=Path, help="workspace folder (default: the file's directory)")
    ap.add_argument("--python", help="the python setting: an interpreter or a venv directory")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--settle", type=float, default=0.0,
                    help="seconds to wait for a further publication after each one")
    args = ap.parse_args()
    root = args.root or args.file.parent
    opens, lasts = [], []
    for i in range(args.runs):
        after_open, after_start, count, last = one_run(args.binary, args.file, root, args.python,
                                                       args.settle)
        opens.append(after_open)
        lasts.append(last)
        settled = f", last publication {last * 1000:.0f} ms" if args.settle else ""
        print(f"run {i + 1}: didOpen -> diagnostics {after_open * 1000:.0f} ms "
              f"(process start -> diagnostics {after_start * 1000:.0f} ms){settled}, "
              f"{count} diagnostics")
    print(f"median didOpen -> diagnostics: {statistics.median(opens) * 1000:.0f} ms over {args.runs} runs")
    if args.settle:
        print(f"median didOpen -> last publication: {statistics.median(lasts) * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
