#!/usr/bin/env bash
# Install the embedded model server (llama-cpp-python[server]) into a Python environment, once.
#
#   scripts/install_local_llm.sh [PYTHON] [--pull [MODEL]]     # default: $PYTHON, else .venv/bin/python
#
# Idempotent: exits at once when llama_cpp and its server extra already import. llama-cpp-python has
# no binary wheel for glibc < 2.38, so pip compiles llama.cpp (0.7 GB peak). Only what the Python package
# loads is built: libllama and libggml, without the multimodal library (LLAVA_BUILD=OFF) and without llama.cpp's
# `common` library and its HTTP client (scripts/llama_cpp_lean.cmake). The build is portable (AVX2/FMA/F16C,
# no -march=native) so the wheel pip caches in ~/.cache/pip/wheels can be reused on similar machines; a second
# run installs that wheel in seconds. Override the flags with CMAKE_ARGS, the parallelism with
# CMAKE_BUILD_PARALLEL_LEVEL. With --pull, a model's weights download beside the compile (`make demo`).
set -euo pipefail

PY="${1:-${PYTHON:-.venv/bin/python}}"
PULL=""
if [ "${2:-}" = "--pull" ]; then
    PULL="pull ${3:-}"
fi
HERE="$(cd "$(dirname "$0")" && pwd)"
SPEC="llama-cpp-python[server]==0.3.36"
MODULES="llama_cpp, uvicorn, fastapi, sse_starlette, starlette_context, pydantic_settings"
PROGRESS_EVERY_S=30
BUILD_ESTIMATE="≈ 2-4 min on 2 cores"   # measured: docs/testing.md, "The first make demo"

if ! "$PY" -c "import sys" 2>/dev/null; then
    echo "install_local_llm: no Python at '$PY'; pass one, e.g. scripts/install_local_llm.sh .venv/bin/python" >&2
    exit 2
fi
# Found without importing (importing llama_cpp loads the library: seconds on a busy machine, every `make demo`).
if VERSION="$("$PY" -c "
import importlib.metadata as m, importlib.util as u, sys
sys.exit(1) if any(u.find_spec(n.strip()) is None for n in '${MODULES}'.split(',')) else print(m.version('llama_cpp_python'))
" 2>/dev/null)"; then
    echo "llama.cpp backend already installed (${VERSION})"
    exit 0
fi

export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
-DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=${HERE}/llama_cpp_lean.cmake}"
LOG="$(mktemp -t tetrarch-llama-build.XXXXXX.log)"

echo "first run: compiling llama.cpp's library once (${BUILD_ESTIMATE})${PULL:+ while the weights download}; log: ${LOG}"
"$PY" -m pip install --disable-pip-version-check "${SPEC}" >"${LOG}" 2>&1 &
PIP_PID=$!
PULL_PID=""
if [ -n "${PULL}" ]; then
    PULL_LOG="${LOG%.log}-pull.log"
    # shellcheck disable=SC2086 # PULL is "pull" and an optional model name
    "$PY" -m agents.llm.local models ${PULL} >"${PULL_LOG}" 2>&1 &
    PULL_PID=$!
fi
# Ctrl-C or a CI timeout must not leave a compiler or a download running in the background.
trap 'kill "${PIP_PID}" ${PULL_PID} 2>/dev/null || true' INT TERM EXIT

start=${SECONDS}
next=$((start + PROGRESS_EVERY_S))
while kill -0 "${PIP_PID}" 2>/dev/null; do
    sleep 1
    if (( SECONDS >= next )); then
        elapsed=$((SECONDS - start))
        printf 'building llama.cpp (one time, %s)… %dm%02ds\n' "${BUILD_ESTIMATE}" $((elapsed / 60)) $((elapsed % 60))
        next=$((next + PROGRESS_EVERY_S))
    fi
done

if ! wait "${PIP_PID}"; then
    trap - INT TERM EXIT
    echo "install_local_llm: pip failed; last lines of ${LOG}:" >&2
    tail -n 25 "${LOG}" >&2
    echo "A C/C++ compiler and cmake are needed (Debian: apt-get install build-essential cmake)." >&2
    exit 1
fi
"$PY" -c "import ${MODULES}"
echo "llama.cpp backend installed in $((SECONDS - start))s"
if [ -n "${PULL_PID}" ]; then
    if ! wait "${PULL_PID}"; then
        trap - INT TERM EXIT
        echo "install_local_llm: pulling the model's weights failed; last lines of ${PULL_LOG}:" >&2
        tail -n 15 "${PULL_LOG}" >&2
        exit 1
    fi
    echo "the model's weights are installed ($((SECONDS - start))s since the start)"
fi
trap - INT TERM EXIT
