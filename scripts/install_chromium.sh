#!/usr/bin/env bash
# Debian's headless Chromium for the trace-page tests (tests/integration/test_trace_browser.py).
# Idempotent; installs only as root (CI, containers). Elsewhere it says what to run and the test is skipped.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing chromium (Debian package) for the trace-page browser tests"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
else
    echo "note: chromium is not installed, so the trace-page browser tests will be skipped;" \
         "install it with: sudo apt-get install chromium" >&2
fi
