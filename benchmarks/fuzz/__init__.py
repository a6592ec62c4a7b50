"""Fuzzing of the LLM boundary: adversarial model outputs fed to every role through the whole state machine.

See ``benchmarks.fuzz.fuzz_roles`` (``python -m benchmarks.fuzz.fuzz_roles --help``).
"""
