"""Fuzzing of the LLM boundary: adversarial model outputs fed to every role through the whole state machine.

See ``benchmarks.fuzz.fuzz_roles`` (``python -m benchmarks.fuzz.fuzz_roles --help``). The modules, in the order
a run uses them:

- ``workload``: the fuzzed task and its tools;
- ``valid_replies``: what the roles not under test answer;
- ``strategies``: the hypothesis strategies for the role under test's replies;
- ``example``: one example, one whole task in-process, and how it ended (``Outcome``);
- ``campaign``: many examples per role, counted (``fuzz``, ``FuzzStats``);
- ``report``: the markdown report;
- ``fuzz_roles``: the command line, and the names the tests import.
"""
