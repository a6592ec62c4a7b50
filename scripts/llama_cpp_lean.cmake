# Included by llama.cpp's own CMakeLists right after its project() call (CMAKE_PROJECT_llama.cpp_INCLUDE, set by
# scripts/install_local_llm.sh). llama-cpp-python forces the `common` library on, but its Python package loads
# only libllama and libggml: `common` (argument parsing, chat templates, an HTTP client) and the cpp-httplib it
# links are ~20 of the build's ~140 objects and among its slowest to compile.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "llama: build common utils library" FORCE)
