"""How each language of the suite writes numbers, percents, money and scaled figures.

The suite's tool outputs and answers are written the way a user of that language writes them, so the engine
meets "1.971.689" (de, es), "350 826" (fr), "2,5 %" and "1,86 Millionen", not only the English forms:

    >>> number(1971689, "de"), number(350826, "fr"), number(2.5, "es", 1), percent(2.5, "fr")
    ('1.971.689', '350 826', '2,5', '2,5 %')
    >>> scaled(1_860_000, "de"), money(2_450_000, "en"), money(350_000, "fr")
    ('1,86 Millionen', '$2.45M', '350 k€')
"""

from __future__ import annotations

from typing import Literal

__all__ = ["LANGS", "Lang", "money", "number", "percent", "scaled", "signed"]

Lang = Literal["en", "fr", "de", "es"]
LANGS: tuple[Lang, ...] = ("en", "fr", "de", "es")

# (thousands separator, decimal mark) per language; French groups with a space.
_MARKS: dict[str, tuple[str, str]] = {"en": (",", "."), "fr": (" ", ","), "de": (".", ","), "es": (".", ",")}
_MILLION = {"en": "million", "fr": "millions", "de": "Millionen", "es": "millones"}


def number(value: float, lang: str, decimals: int = 0) -> str:
    """``value`` with the language's grouping and decimal mark (``decimals`` places, trailing zeros kept)."""
    group, point = _MARKS[lang]
    text = f"{abs(value):,.{decimals}f}"
    whole, _, frac = text.partition(".")
    out = whole.replace(",", group) + (point + frac if frac else "")
    return "-" + out if value < 0 else out


def signed(value: float, lang: str, decimals: int = 0) -> str:
    """``value`` with an explicit sign: "+12", "-3,5"."""
    return ("+" if value >= 0 else "") + number(value, lang, decimals)


def percent(value: float, lang: str, decimals: int = 1) -> str:
    """A percentage: "2.5%" in English, "2,5 %" with a space elsewhere."""
    return number(value, lang, decimals) + ("%" if lang == "en" else " %")


def scaled(value: float, lang: str) -> str:
    """A count in millions with the language's scale word: "1.86 million", "1,86 Millionen"."""
    return f"{number(value / 1e6, lang, 2)} {_MILLION[lang]}"


def money(value: float, lang: str) -> str:
    """An amount with k/M/bn the way finance tables write it: "$2.45M" in English, "2,45 M€" elsewhere."""
    for size, suffix in ((1e9, "bn"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            digits = number(value / size, lang, 2 if size > 1e3 else 0)
            break
    else:
        size, suffix, digits = 1.0, "", number(value, lang)
    if lang == "en":
        return f"${digits}{suffix}"
    suffix = {"bn": "Mrd", "M": "M", "k": "k", "": ""}[suffix] if lang == "de" else suffix
    return f"{digits} {suffix}€".replace("  ", " ") if suffix else f"{digits} €"
