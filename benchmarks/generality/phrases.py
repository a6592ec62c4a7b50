"""The question and answer wording of each task kind, in each language of the suite.

A template's slots: ``{metric}`` (the shape's noun, already in the language), ``{a}``/``{b}``/``{c}`` (the
entities), ``{va}``/``{vb}``/``{vc}`` (their values as the tool wrote them), ``{x}`` (the computed figure),
``{win}``/``{lose}`` (the entity with more and with less).
"""

from __future__ import annotations

__all__ = ["ANSWERS", "QUESTIONS", "ROSE_FELL"]

QUESTIONS: dict[str, dict[str, str]] = {
    "difference": {
        "en": "Which has more {metric}, {a} or {b}, and by how much?",
        "fr": "Lequel a le plus de {metric}, {a} ou {b}, et de combien ?",
        "de": "Wer hat mehr {metric}, {a} oder {b}, und um wie viel?",
        "es": "¿Cuál tiene más {metric}, {a} o {b}, y por cuánto?",
    },
    "ratio": {
        "en": "How many times the {metric} of {b} is the {metric} of {a}? Give two decimals.",
        "fr": "Combien de fois {metric} de {b} représente {metric} de {a} ? Deux décimales.",
        "de": "Das Wievielfache von {metric} von {b} ist {metric} von {a}? Zwei Nachkommastellen.",
        "es": "¿Cuántas veces {metric} de {b} es {metric} de {a}? Con dos decimales.",
    },
    "smaller": {
        "en": "How many times smaller is {b} than {a} in {metric}? Give two decimals.",
        "fr": "{b} a combien de fois moins de {metric} que {a} ? Deux décimales.",
        "de": "Wie viel Mal weniger {metric} hat {b} als {a}? Zwei Nachkommastellen.",
        "es": "¿Cuántas veces menos {metric} tiene {b} que {a}? Con dos decimales.",
    },
    "total": {
        "en": "What is the total {metric} of {a}, {b} and {c}?",
        "fr": "Quel est le total de {metric} pour {a}, {b} et {c} ?",
        "de": "Wie hoch ist die Summe von {metric} für {a}, {b} und {c}?",
        "es": "¿Cuál es el total de {metric} de {a}, {b} y {c}?",
    },
    "change": {
        "en": "How did the {metric} change from {a} to {b}? Give the signed change.",
        "fr": "Comment {metric} a-t-il évolué entre {a} et {b} ? Donnez la variation avec son signe.",
        "de": "Wie hat sich {metric} von {a} bis {b} verändert? Mit Vorzeichen, bitte.",
        "es": "¿Cómo cambió {metric} de {a} a {b}? Da el cambio con su signo.",
    },
    "compare": {
        "en": "Which has the higher {metric}, {a} or {b}?",
        "fr": "Lequel a {metric} le plus élevé, {a} ou {b} ?",
        "de": "Wer hat den höheren Wert bei {metric}, {a} oder {b}?",
        "es": "¿Cuál tiene {metric} más alto, {a} o {b}?",
    },
}

ANSWERS: dict[str, dict[str, str]] = {
    "difference": {
        "en": "{win}, by {x} ({va} against {vb}).",
        "fr": "{win}, de {x} ({va} contre {vb}).",
        "de": "{win}, um {x} ({va} gegenüber {vb}).",
        "es": "{win}, por {x} ({va} frente a {vb}).",
    },
    "ratio": {
        "en": "{x} times ({va} / {vb}).",
        "fr": "{x} fois ({va} / {vb}).",
        "de": "Das {x}-Fache ({va} / {vb}).",
        "es": "{x} veces ({va} / {vb}).",
    },
    "smaller": {
        "en": "{x} times smaller ({va} / {vb}).",
        "fr": "{x} fois moins ({va} / {vb}).",
        "de": "{x}-mal weniger ({va} / {vb}).",
        "es": "{x} veces menos ({va} / {vb}).",
    },
    "total": {
        "en": "{x} in total ({parts}).",
        "fr": "{x} au total ({parts}).",
        "de": "Insgesamt {x} ({parts}).",
        "es": "{x} en total ({parts}).",
    },
    "change": {
        "en": "{x}: it {moved} from {va} to {vb}.",
        "fr": "{x} : {moved} de {va} à {vb}.",
        "de": "{x}: {moved} von {va} auf {vb}.",
        "es": "{x}: {moved} de {va} a {vb}.",
    },
    "compare": {
        "en": "{win} ({va} against {vb} for {lose}).",
        "fr": "{win} ({va} contre {vb} pour {lose}).",
        "de": "{win} ({va} gegenüber {vb} bei {lose}).",
        "es": "{win} ({va} frente a {vb} de {lose}).",
    },
}

ROSE_FELL: dict[str, tuple[str, str]] = {
    "en": ("rose", "fell"),
    "fr": ("en hausse", "en baisse"),
    "de": ("gestiegen", "gesunken"),
    "es": ("subió", "bajó"),
}
"""(went up, went down) in each language, for a signed change's answer."""
