"""Stands in for llama.cpp's server in unit tests: ``python llm_local_fake_server.py LAUNCHER ARGS...``.

Behaviour comes from ``FAKE_LLAMA_MODE``: ``ok`` answers GET /v1/models; ``crash`` logs 30 lines and
exits 3; ``silent`` never listens; ``child`` starts a grandchild ``sleep`` in its group, then serves;
``busy-once`` fails like a taken port on its first run (counted in ``FAKE_LLAMA_STATE``), then serves.
It writes its argv to ``FAKE_LLAMA_ARGV`` so tests can check the command line.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import time
from pathlib import Path

__all__: list[str] = []


def _arg(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def _serve(port: int, alias: str) -> None:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"object": "list", "data": [{"id": alias}]}).encode()
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    print(f"fake server listening on 127.0.0.1:{port}", flush=True)
    http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main() -> None:
    args = sys.argv[2:]  # argv[1] is the launcher path the real command runs
    Path(os.environ["FAKE_LLAMA_ARGV"]).write_text(json.dumps(sys.argv[1:]))
    mode = os.environ.get("FAKE_LLAMA_MODE", "ok")
    port, alias = int(_arg(args, "--port")), _arg(args, "--model_alias")
    if mode == "crash":
        for i in range(30):
            print(f"log line {i}", flush=True)
        sys.exit(3)
    if mode == "silent":
        time.sleep(600)
    if mode == "busy-once":
        state = Path(os.environ["FAKE_LLAMA_STATE"])
        runs = int(state.read_text() or 0) if state.exists() else 0
        state.write_text(str(runs + 1))
        if runs == 0:
            print("ERROR: [Errno 98] error while attempting to bind: address already in use", flush=True)
            sys.exit(1)
    if mode == "child":
        child = subprocess.Popen(["sleep", "600"])
        Path(os.environ["FAKE_LLAMA_CHILD"]).write_text(str(child.pid))
    _serve(port, alias)


if __name__ == "__main__":
    main()
