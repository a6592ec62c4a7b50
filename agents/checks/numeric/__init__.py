"""The opt-in "numeric" built-in set: today's rules for look-up-and-compute question answering over passages
(``RuntimeConfig(builtin_checks=("sound", "numeric"))``). They read English wordings and guess which number in a
passage is meant, so they may veto right answers on other tasks (``docs/checks.md`` lists each one); a user whose
tasks are such questions may want them, and the prompt regression set measures them.

``results`` (facts about the results), ``answer`` (contradictions of an answer), ``ratio_check``, ``totals`` and
``misreads`` (arithmetic faults), ``lookups`` and ``figures`` (the figure a passage states), ``clauses``,
``support`` (a figure supported by the results), ``wording`` (the question forms read); and what code does
beside checking: ``ratio`` / ``rewrite`` (a computing step rewritten), ``hop_search`` (a search added),
``name_hops`` (a reasoning step answered by code), ``referents`` (a question back planned instead).
"""

from agents.checks.numeric.answer import answer_faults, check_answer
from agents.checks.numeric.ratio_check import ratio_fault
from agents.checks.numeric.results import check_results
from agents.checks.numeric.support import states_computed
from agents.checks.numeric.totals import TotalFault, total_fault

__all__ = ["TotalFault", "answer_faults", "check_answer", "check_results", "ratio_fault", "states_computed",
           "total_fault"]
