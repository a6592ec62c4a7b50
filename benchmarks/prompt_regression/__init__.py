"""The prompt regression set: shipped cases for the Router, Planner and Reflector, run against a real model.

``cases/router.jsonl``, ``cases/planner.jsonl`` and ``cases/reflector.jsonl`` hold at least 20 cases each;
``python -m benchmarks.prompt_regression.run`` starts the embedded local model once, sends every case through
the real role class (the same prompts, structured-output settings and repair round as production) and writes
``benchmarks/results/prompt-regression-<model>.md`` and ``.json``:

- router accuracy: the route production acts on (after the confidence threshold) equals the expected one;
- planner valid-plan rate: the Planner yields ``PlanCompleted`` (the plan parsed and validated against the real
  tool schemas), counting how many needed the one repair round; structural expectations are reported beside it;
- reflector agreement: the policy's decision (``planning.policy.decide``) accepts exactly when the case says
  the results deserve acceptance.

The modules, in the order a run uses them: ``case_files`` (the case types; loading and checking the files),
``runners`` (the roles built as the demo builds them; one case through one role), ``scoring`` (a role's reply
against the case), ``summary`` (per-role metrics), ``report`` (the results JSON), ``markdown`` (the page), and
``cli`` (the command line). ``run.py`` is the entry point and re-exports the names the tests use. Loading,
scoring and rendering are pure and tested without a model (tests/unit/prompts/test_regression_cases.py). This
package imports nothing, so ``python -m benchmarks.prompt_regression.run`` loads ``run.py`` exactly once.
"""

