"""Developer-tool shapes: test-runner summaries, diffs and code, lists of names. The outputs are what the tools
print (the runner's summary line, a unified diff, a JSON list); the reviewer counts and lists from them."""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.generality import data
from benchmarks.generality.kinds import off, off_count
from benchmarks.generality.model import Expect, GenTask, call
from benchmarks.generality.shapes_text import names, task

__all__ = ["WORK_SHAPES"]

_SUITES = {"en": ("api", "billing", "auth", "search"), "fr": ("ui", "sync", "export", "api"),
           "de": ("import", "auth", "ui", "sync"), "es": ("search", "export", "sync", "import")}
_COMMITS = {"en": ("a1f9c02", "b7e4410", "d95e3b1"), "fr": ("d95e3b1", "e20f6c8", "f4a8d19"),
            "de": ("0c6b2e5", "17d3f40", "a1f9c02"), "es": ("c3d0a77", "e20f6c8", "b7e4410")}

_TESTS_Q = {
    "count": {"en": "How many tests failed in the {a} suite?",
              "fr": "Combien de tests ont échoué dans la suite {a} ?",
              "de": "Wie viele Tests sind in der Suite {a} fehlgeschlagen?",
              "es": "¿Cuántas pruebas fallaron en la suite {a}?"},
    "total": {"en": "How many tests failed in total in the {a} and {b} suites?",
              "fr": "Combien de tests ont échoué au total dans les suites {a} et {b} ?",
              "de": "Wie viele Tests sind in den Suiten {a} und {b} insgesamt fehlgeschlagen?",
              "es": "¿Cuántas pruebas fallaron en total en las suites {a} y {b}?"},
    "compare": {"en": "Which suite has more failing tests, {a} or {b}?",
                "fr": "Quelle suite a le plus de tests en échec, {a} ou {b} ?",
                "de": "Welche Suite hat mehr fehlgeschlagene Tests, {a} oder {b}?",
                "es": "¿Qué suite tiene más pruebas fallidas, {a} o {b}?"},
}
_FAILED = {"en": "{x} failed", "fr": "{x} en échec", "de": "{x} fehlgeschlagen", "es": "{x} fallidas"}


def test_summaries(lang: str) -> list[GenTask]:
    s = _SUITES[lang]
    q = {k: v[lang] for k, v in _TESTS_Q.items()}
    fails = {name: data.TEST_RUNS[name][1] for name in s}
    failed = _FAILED[lang]
    out = []
    for i, name in enumerate(s[:2]):
        passed, n, _, _ = data.TEST_RUNS[name]
        out.append(task("test_summaries", lang, i, "count", q["count"].format(a=name),
                        [call(1, "run_tests", suite=name)], failed.format(x=n) + f" ({name}).",
                        # passed + failed: the count a reader gets by adding the wrong fields of the summary.
                        {"unsupported_figure": failed.format(x=passed + n) + f" ({name})."}, Expect(number=n)))
    for i, (a, b) in enumerate(((s[0], s[2]), (s[1], s[3])), start=2):
        steps = [call(1, "run_tests", suite=a), call(2, "run_tests", suite=b)]
        both = fails[a] + fails[b]
        parts = f" ({a}: {fails[a]}, {b}: {fails[b]})."
        out.append(task("test_summaries", lang, i, "total", q["total"].format(a=a, b=b), steps,
                        failed.format(x=both) + parts,
                        {"item_left_out": failed.format(x=fails[a]) + f" ({a}: {fails[a]}).",
                         "unsupported_figure": failed.format(x=off_count(both)) + parts}, Expect(number=both)))
    a, b = s[2], s[3]
    (fw, w), (fl, l_) = sorted([(fails[a], a), (fails[b], b)], reverse=True)
    out.append(task("test_summaries", lang, 4, "compare", q["compare"].format(a=a, b=b),
                    [call(1, "run_tests", suite=a), call(2, "run_tests", suite=b)],
                    f"{w} ({failed.format(x=fw)}; {l_}: {fl}).",
                    {"wrong_entity": f"{l_} ({failed.format(x=fl)}; {w}: {fw}).",
                     "unsupported_figure": f"{w} ({failed.format(x=off_count(fw))}; {l_}: {fl})."},
                    Expect(names=(w,), rivals=(l_,))))
    return out


def diffs_code(lang: str) -> list[GenTask]:
    q_list = {"en": "Which functions does commit {a} change?", "fr": "Quelles fonctions le commit {a} modifie-t-il ?",
              "de": "Welche Funktionen ändert der Commit {a}?", "es": "¿Qué funciones cambia el commit {a}?"}[lang]
    q_added = {"en": "How many lines does commit {a} add?", "fr": "Combien de lignes le commit {a} ajoute-t-il ?",
               "de": "Wie viele Zeilen fügt der Commit {a} hinzu?",
               "es": "¿Cuántas líneas añade el commit {a}?"}[lang]
    q_more = {"en": "Which commit adds more lines, {a} or {b}?",
              "fr": "Quel commit ajoute le plus de lignes, {a} ou {b} ?",
              "de": "Welcher Commit fügt mehr Zeilen hinzu, {a} oder {b}?",
              "es": "¿Qué commit añade más líneas, {a} o {b}?"}[lang]
    lines = {"en": "{x} lines added in {f}",
             "fr": "{x} lignes ajoutées dans {f}",
             "de": "{x} Zeilen hinzugefügt in {f}",
             "es": "{x} líneas añadidas en {f}"}[lang]
    c = _COMMITS[lang]
    out = []
    for i, sha in enumerate(c[:2]):
        path, funcs = data.COMMITS[sha]
        fn = [f[0] for f in funcs]
        out.append(task("diffs_code", lang, i, "list", q_list.format(a=sha), [call(1, "show_commit", sha=sha)],
                        f"{names(fn, lang)} ({path}).", {"item_left_out": f"{names(fn[:-1], lang)} ({path})."},
                        Expect(names=tuple(fn))))
    for i, sha in enumerate(c[1:], start=2):
        path, funcs = data.COMMITS[sha]
        added = sum(f[1] for f in funcs)
        out.append(task("diffs_code", lang, i, "count", q_added.format(a=sha), [call(1, "show_commit", sha=sha)],
                        lines.format(x=added, f=path) + ".",
                        {"item_left_out": lines.format(x=added - funcs[-1][1], f=path) + ".",
                         "unsupported_figure": lines.format(x=off_count(added), f=path) + "."},
                        Expect(number=added)))
    a, b = c[0], c[2]
    (nw, w), (nl, l_) = sorted([(sum(f[1] for f in data.COMMITS[x][1]), x) for x in (a, b)], reverse=True)
    out.append(task("diffs_code", lang, 4, "compare", q_more.format(a=a, b=b),
                    [call(1, "show_commit", sha=a), call(2, "show_commit", sha=b)],
                    f"{w} (+{nw}; {l_}: +{nl}).", {"wrong_entity": f"{l_} (+{nl}; {w}: +{nw}).",
                                                   "unsupported_figure": f"{w} (+{off_count(nw)}; {l_}: +{nl})."},
                    Expect(names=(w,), rivals=(l_,))))
    return out


def name_lists(lang: str) -> list[GenTask]:
    (t0, m0), (t1, m1) = data.TEAMS[lang].items()
    q_count = {"en": "How many people are on the {a} team?", "fr": "Combien de personnes compte l'équipe {a} ?",
               "de": "Wie viele Personen sind im Team {a}?", "es": "¿Cuántas personas hay en el equipo {a}?"}[lang]
    q_both = {"en": "Who is on both the {a} and the {b} teams?",
              "fr": "Qui fait partie à la fois de l'équipe {a} et de l'équipe {b} ?",
              "de": "Wer ist sowohl im Team {a} als auch im Team {b}?",
              "es": "¿Quién está a la vez en el equipo {a} y en el equipo {b}?"}[lang]
    q_big = {"en": "Which team is bigger, {a} or {b}?", "fr": "Quelle équipe est la plus grande, {a} ou {b} ?",
             "de": "Welches Team ist größer, {a} oder {b}?", "es": "¿Qué equipo es más grande, {a} o {b}?"}[lang]
    q_who = {"en": "Who is on the {a} team?", "fr": "Qui fait partie de l'équipe {a} ?", "de": "Wer ist im Team {a}?",
             "es": "¿Quién está en el equipo {a}?"}[lang]
    people = {"en": "{x} people", "fr": "{x} personnes", "de": "{x} Personen", "es": "{x} personas"}[lang]
    out = []
    for i, (team, members) in enumerate(((t0, m0), (t1, m1))):
        ms = list(members)
        out.append(task("name_lists", lang, i, "count", q_count.format(a=team), [call(1, "team_members", team=team)],
                        people.format(x=len(ms)) + f": {names(ms, lang)}.",
                        {"item_left_out": people.format(x=len(ms) - 1) + f": {names(ms[:-1], lang)}.",
                         "unsupported_figure": people.format(x=off_count(len(ms))) + f": {names(ms, lang)}."},
                        Expect(number=len(ms))))
    both_steps = [call(1, "team_members", team=t0), call(2, "team_members", team=t1)]
    common = [m for m in m0 if m in m1]
    out.append(task("name_lists", lang, 2, "list", q_both.format(a=t0, b=t1), both_steps, f"{names(common, lang)}.",
                    {"item_left_out": f"{names(common[:-1], lang)}."}, Expect(names=tuple(common))))
    (nw, w), (nl, l_) = sorted([(len(m0), t0), (len(m1), t1)], reverse=True)
    out.append(task("name_lists", lang, 3, "compare", q_big.format(a=t0, b=t1), both_steps,
                    f"{w} ({people.format(x=nw)}; {l_}: {nl}).",
                    {"wrong_entity": f"{l_} ({people.format(x=nl)}; {w}: {nw}).",
                     "unsupported_figure": f"{w} ({people.format(x=off_count(nw))}; {l_}: {nl})."},
                    Expect(names=(w,), rivals=(l_,))))
    ms = list(m1)
    out.append(task("name_lists", lang, 4, "list", q_who.format(a=t1), [call(1, "team_members", team=t1)],
                    f"{names(ms, lang)}.", {"item_left_out": f"{names(ms[:-1], lang)}."}, Expect(names=tuple(ms))))
    return out


WORK_SHAPES: dict[str, Callable[[str], list[GenTask]]] = {
    "test_summaries": test_summaries, "diffs_code": diffs_code, "name_lists": name_lists}
