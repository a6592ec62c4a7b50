"""The English wordings of look-up-and-compute questions the numeric set reads: a difference asked as a size,
a total, a comparison. Heuristics by nature (another language, or another phrasing, is not read): only the opt-in
numeric set uses them.
"""

from __future__ import annotations

import re

__all__ = ["MAGNITUDE", "NOT_A_SUM", "SIGNED", "TOTAL", "WHICH"]


# "how many more", "how much larger", "by how much", "the difference between": a size, never negative. The
# decreasing forms ("how much shorter is A than B") are left out: A − B is negative there and the answer right.
MAGNITUDE = re.compile(
    r"\bhow (?:many|much) (?:more|larger|bigger|taller|longer|higher|older|greater|heavier|deeper|farther|"
    r"further|wider)\b|\bby how (?:much|many)\b|\bdifference (?:between|in)\b",
    re.IGNORECASE)


# "the total / combined / sum of": the figures added. Not where the total is only a base for something else
# ("what share of the total", "the average of"): the computed figure is then rightly smaller than the sum.
TOTAL = re.compile(r"\b(?:total|combined|sum of|together|altogether|in all)\b", re.IGNORECASE)
NOT_A_SUM = re.compile(r"\b(?:percent(?:age)?|share|ratio|times|fraction|proportion|average|mean|per|remain(?:ing|s)?|"
                       r"left|net|balance|after|minus|less)\b|%", re.IGNORECASE)
# A change asked for ("by how much did it change", "how much did it fall"): its sign is part of the answer.
SIGNED = re.compile(r"\b(?:chang\w*|fell|fall\w*|drop\w*|decreas\w*|declin\w*|increas\w*|rose|ris[ei]\w*|grew|"
                    r"grow\w*|shr[iau]nk\w*|went (?:up|down)|moved?)\b", re.IGNORECASE)


# "Which is larger …", "who is older", "the larger of": a comparison whose answer names one of two things.
WHICH = re.compile(r"\b(?:which|who|what)\b.*\b(?:more|larger|bigger|longer|taller|higher|greater|heavier|older|"
                   r"deeper|wider|most|largest|biggest|longest|tallest|highest|greatest)\b|\bthe (?:larger|bigger|"
                   r"longer|taller|higher|greater) (?:one|of)\b", re.IGNORECASE | re.DOTALL)
