"""Shapes whose answer is read, not computed by a step: SQL rows, versions, and dates with ISO timestamps.

The right plan only fetches (one query, or one call per entity); the reviewer reads the rows or sentences and
answers, doing any arithmetic itself, as a model does with a user's tools that return text or rows.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime

from benchmarks.generality import data
from benchmarks.generality.kinds import off, off_count
from benchmarks.generality.locale import number
from benchmarks.generality.model import Expect, GenTask, call, plan
from benchmarks.generality.tools import COUNTRY

__all__ = ["TEXT_SHAPES"]

_AND = {"en": "and", "fr": "et", "de": "und", "es": "y"}


def names(items: list[str], lang: str) -> str:
    """"a, b and c" in the language."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {_AND[lang]} {items[-1]}"


def task(shape: str, lang: str, i: int, kind: str, question: str, steps: list[dict], answer: str,
         wrong: dict, expect: Expect) -> GenTask:
    tools = tuple(sorted({s["tool_name"] for s in steps}))
    return GenTask(f"{shape}-{lang}-{i}-{kind}", shape, lang, kind, question, tools, plan(*steps), answer,
                   tuple(wrong.items()), expect)


_SQL_Q = {
    "top": {"en": "Which region of the {c} sales table sold the most units?",
            "fr": "Quelle région de la table des ventes {c} a vendu le plus d'unités ?",
            "de": "Welche Region der Verkaufstabelle {c} hat die meisten Einheiten verkauft?",
            "es": "¿Qué región de la tabla de ventas {c} vendió más unidades?"},
    "total": {"en": "How many units were sold in total in {c}?",
              "fr": "Combien d'unités ont été vendues au total en {c} ?",
              "de": "Wie viele Einheiten wurden in {c} insgesamt verkauft?",
              "es": "¿Cuántas unidades se vendieron en total en {c}?"},
    "list": {"en": "Which regions in {c} sold more than 1500 units?",
             "fr": "Quelles régions de {c} ont vendu plus de 1500 unités ?",
             "de": "Welche Regionen in {c} haben mehr als 1500 Einheiten verkauft?",
             "es": "¿Qué regiones de {c} vendieron más de 1500 unidades?"},
    "count": {"en": "How many regions in {c} had a revenue above 60000 EUR?",
              "fr": "Combien de régions de {c} ont un chiffre d'affaires supérieur à 60000 EUR ?",
              "de": "Wie viele Regionen in {c} hatten einen Umsatz über 60000 EUR?",
              "es": "¿Cuántas regiones de {c} tuvieron ingresos superiores a 60000 EUR?"},
}
_SQL_A = {"top": {"en": "{w} ({u} units; next: {r} with {ru}).", "fr": "{w} ({u} unités ; ensuite : {r} avec {ru}).",
                  "de": "{w} ({u} Einheiten; danach {r} mit {ru}).",
                  "es": "{w} ({u} unidades; después {r} con {ru})."},
          "total": {"en": "{x} units over {n} regions.", "fr": "{x} unités sur {n} régions.",
                    "de": "{x} Einheiten in {n} Regionen.", "es": "{x} unidades en {n} regiones."},
          "list": {"en": "{x}.", "fr": "{x}.", "de": "{x}.", "es": "{x}."},
          "count": {"en": "{x} regions: {names}.", "fr": "{x} régions : {names}.", "de": "{x} Regionen: {names}.",
                    "es": "{x} regiones: {names}."}}


def sql_rows(lang: str) -> list[GenTask]:
    c = COUNTRY[lang]
    rows = sorted(data.SALES[lang], key=lambda r: -r[1])
    where = f"FROM sales WHERE country = '{c}'"
    q, a = {k: v[lang] for k, v in _SQL_Q.items()}, {k: v[lang] for k, v in _SQL_A.items()}
    top = [call(1, "sql", query=f"SELECT region, units {where} ORDER BY units DESC")]
    (w, u, _), (r, ru, _) = rows[0], rows[1]
    units = sum(x[1] for x in rows)
    big = sorted(x[0] for x in rows if x[1] > 1500)
    rich = sorted(x[0] for x in rows if x[2] > 60000)
    n = lambda v: number(v, lang)  # noqa: E731
    out = [
        task("sql_rows", lang, 0, "compare", q["top"].format(c=c), top,
             a["top"].format(w=w, u=n(u), r=r, ru=n(ru)),
             {"wrong_entity": a["top"].format(w=r, u=n(ru), r=w, ru=n(u)),
              "unsupported_figure": a["top"].format(w=w, u=n(off_count(u)), r=r, ru=n(ru))},
             Expect(names=(w,), rivals=(r,))),
        task("sql_rows", lang, 1, "total", q["total"].format(c=c),
             [call(1, "sql", query=f"SELECT region, units {where}")],
             a["total"].format(x=n(units), n=len(rows)),
             {"item_left_out": a["total"].format(x=n(units - rows[-1][1]), n=len(rows) - 1),
              "unsupported_figure": a["total"].format(x=n(off_count(units)), n=len(rows))},
             Expect(number=units)),
        task("sql_rows", lang, 2, "list", q["list"].format(c=c),
             [call(1, "sql", query=f"SELECT region, units {where} AND units > 1500 ORDER BY region")],
             a["list"].format(x=names(big, lang)), {"item_left_out": a["list"].format(x=names(big[:-1], lang))},
             Expect(names=tuple(big))),
        task("sql_rows", lang, 3, "count", q["count"].format(c=c),
             [call(1, "sql", query=f"SELECT region, revenue_eur {where} AND revenue_eur > 60000")],
             a["count"].format(x=len(rich), names=names(rich, lang)),
             {"item_left_out": a["count"].format(x=len(rich) - 1, names=names(rich[:-1], lang)),
              "unsupported_figure": a["count"].format(x=off_count(len(rich)), names=names(rich, lang))},
             Expect(number=len(rich))),
    ]
    return out + [_sql_revenue_gap(lang, where, rows[1][0], rows[-1][0])]


def _sql_revenue_gap(lang: str, where: str, first: str, second: str) -> GenTask:
    """Two queries and a calculator over fields of their first rows (``$step_N_result.0.revenue_eur``)."""
    rev = {r[0]: r[2] for r in data.SALES[lang]}
    gap = rev[first] - rev[second]
    steps = [call(i, "sql", query=f"SELECT revenue_eur {where} AND region = '{region}'")
             for i, region in ((1, first), (2, second))]
    steps.append(call(3, "calculator", (1, 2),
                      expression="{$step_1_result.0.revenue_eur} - {$step_2_result.0.revenue_eur}"))
    q = {"en": f"How much more revenue did {first} make than {second}?",
         "fr": f"Combien de chiffre d'affaires {first} a-t-elle fait de plus que {second} ?",
         "de": f"Wie viel mehr Umsatz hat {first} gemacht als {second}?",
         "es": f"¿Cuántos ingresos más tuvo {first} que {second}?"}[lang]
    ans = {"en": "{x} EUR more ({a} against {b}).", "fr": "{x} EUR de plus ({a} contre {b}).",
           "de": "{x} EUR mehr ({a} gegenüber {b}).", "es": "{x} EUR más ({a} frente a {b})."}[lang]
    fmt = lambda v: number(v, lang, 2)  # noqa: E731
    slots = {"a": fmt(rev[first]), "b": fmt(rev[second])}
    return task("sql_rows", lang, 4, "difference", q, steps, ans.format(x=fmt(gap), **slots),
                {"wrong_sign": ans.format(x=fmt(-gap), **slots),
                 "unsupported_figure": ans.format(x=fmt(off(gap)), **slots)}, Expect(number=gap, sign=1))


_ON = {"en": "on", "fr": "le", "de": "am", "es": "el"}
_VERSION_PAIRS = {"en": [("httpx", "requests"), ("numpy", "pandas"), ("flask", "django"), ("rich", "attrs")],
                  "fr": [("pydantic", "flask"), ("click", "black"), ("ruff", "sqlalchemy"), ("uvicorn", "httpx")],
                  "de": [("requests", "jinja2"), ("urllib3", "numpy"), ("django", "ruff"), ("pandas", "click")],
                  "es": [("black", "uvicorn"), ("attrs", "pydantic"), ("sqlalchemy", "rich"), ("jinja2", "urllib3")]}


def versions(lang: str) -> list[GenTask]:
    q_recent = {"en": "Which package had the more recent latest release, {a} or {b}?",
                "fr": "Quel paquet a publié sa dernière version le plus récemment, {a} ou {b} ?",
                "de": "Welches Paket hat die neuere letzte Veröffentlichung, {a} oder {b}?",
                "es": "¿Qué paquete tiene la última versión más reciente, {a} o {b}?"}[lang]
    q_days = {"en": "How many days apart were the latest releases of {a} and {b}?",
              "fr": "Combien de jours séparent les dernières versions de {a} et de {b} ?",
              "de": "Wie viele Tage liegen zwischen den letzten Veröffentlichungen von {a} und {b}?",
              "es": "¿Cuántos días separan las últimas versiones de {a} y {b}?"}[lang]
    days_a = {"en": "{x} days", "fr": "{x} jours", "de": "{x} Tage", "es": "{x} días"}[lang]
    out = []
    for i, (a, b) in enumerate(_VERSION_PAIRS[lang]):
        (va, da), (vb, db) = data.RELEASES[a], data.RELEASES[b]
        steps = [call(1, "latest_release", package=a), call(2, "latest_release", package=b)]
        w, l_ = (a, b) if da > db else (b, a)

        def rel(p: str, v: str | None = None) -> str:
            return f"{p} {v or data.RELEASES[p][0]} {_ON[lang]} {data.RELEASES[p][1]}"

        if i < 3:
            bumped = f"{int(data.RELEASES[w][0].split('.')[0]) + 1}.0.0"
            out.append(task("versions", lang, i, "compare", q_recent.format(a=a, b=b), steps,
                            f"{w} ({rel(w)}; {rel(l_)}).", {
                                "wrong_entity": f"{l_} ({rel(l_)}; {rel(w)}).",
                                "unsupported_figure": f"{w} ({rel(w, v=bumped)}; {rel(l_)})."},
                            Expect(names=(w,), rivals=(l_,))))
        else:
            gap = abs((date.fromisoformat(da) - date.fromisoformat(db)).days)
            tail = f" ({rel(a)}; {rel(b)})."
            out.append(task("versions", lang, i, "difference", q_days.format(a=a, b=b), steps,
                            days_a.format(x=gap) + tail,
                            {"unsupported_figure": days_a.format(x=off_count(gap)) + tail}, Expect(number=gap)))
    return out


def dates(lang: str) -> list[GenTask]:
    (a, (da, _)), (b, (db, _)), (c, (dc, _)), (d, (dd, _)) = data.FOUNDED[lang].items()
    first, later = sorted([(da, a), (db, b)])
    q_after = {"en": "How many years after {a} was {b} founded?",
               "fr": "Combien d'années après {a} {b} a-t-elle été fondée ?",
               "de": "Wie viele Jahre nach {a} wurde {b} gegründet?",
               "es": "¿Cuántos años después de {a} se fundó {b}?"}[lang]
    ans_after = {"en": "{x} years ({a} in {ya}, {b} in {yb}).", "fr": "{x} ans ({a} en {ya}, {b} en {yb}).",
                 "de": "{x} Jahre ({a} {ya}, {b} {yb}).", "es": "{x} años ({a} en {ya}, {b} en {yb})."}[lang]
    out = []
    for i, ((d1, n1), (d2, n2)) in enumerate([(first, later), tuple(sorted([(dc, c), (dd, d)]))]):
        gap = int(d2[:4]) - int(d1[:4])
        slots = {"a": n1, "b": n2, "ya": d1[:4], "yb": d2[:4]}
        steps = [call(1, "company_profile", company=n1), call(2, "company_profile", company=n2)]
        out.append(task("dates", lang, i, "change", q_after.format(a=n1, b=n2), steps, ans_after.format(x=gap, **slots),
                        {"wrong_sign": ans_after.format(x=-gap, **slots),
                         "unsupported_figure": ans_after.format(x=off_count(gap), **slots)},
                        Expect(number=gap, sign=1)))
    q_first = {"en": "Which was founded first, {a} or {b}?", "fr": "Laquelle a été fondée en premier, {a} ou {b} ?",
               "de": "Welches Unternehmen wurde zuerst gegründet, {a} oder {b}?",
               "es": "¿Cuál se fundó primero, {a} o {b}?"}[lang]
    (d1, n1), (d2, n2) = sorted([(dd, d), (da, a)])
    steps = [call(1, "company_profile", company=d), call(2, "company_profile", company=a)]
    out.append(task("dates", lang, 2, "compare", q_first.format(a=d, b=a), steps, f"{n1} ({d1}; {n2}: {d2}).",
                    {"wrong_entity": f"{n2} ({d2}; {n1}: {d1})."}, Expect(names=(n1,), rivals=(n2,))))
    return out + _incidents(lang)


def _minutes(opened: str, resolved: str) -> float:
    at = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    return (at(resolved) - at(opened)).total_seconds() / 60


def _incidents(lang: str) -> list[GenTask]:
    (i1, (o1, r1)), (i2, (o2, r2)) = data.INCIDENTS[lang].items()
    m1, m2 = _minutes(o1, r1), _minutes(o2, r2)
    q_long = {"en": "How many minutes did incident {a} take from opening to resolution?",
              "fr": "Combien de minutes l'incident {a} a-t-il duré entre ouverture et résolution ?",
              "de": "Wie viele Minuten lagen bei Vorfall {a} zwischen Eröffnung und Lösung?",
              "es": "¿Cuántos minutos pasaron en el incidente {a} entre la apertura y la resolución?"}[lang]
    ans = {"en": "About {x} minutes.", "fr": "Environ {x} minutes.", "de": "Etwa {x} Minuten.",
           "es": "Unos {x} minutos."}[lang]
    q_cmp = {"en": "Which incident took longer to resolve, {a} or {b}?",
             "fr": "Quel incident a été le plus long à résoudre, {a} ou {b} ?",
             "de": "Welcher Vorfall wurde langsamer gelöst, {a} oder {b}?",
             "es": "¿Qué incidente tardó más en resolverse, {a} o {b}?"}[lang]
    (mw, w), (ml, l_) = sorted([(m1, i1), (m2, i2)], reverse=True)
    fmt: Callable[[float], str] = lambda v: number(v, lang, 1)  # noqa: E731
    return [
        task("dates", lang, 3, "difference", q_long.format(a=i1), [call(1, "incident", incident_id=i1)],
             ans.format(x=fmt(m1)), {"unsupported_figure": ans.format(x=fmt(off(m1)))}, Expect(number=m1)),
        task("dates", lang, 4, "compare", q_cmp.format(a=i1, b=i2),
             [call(1, "incident", incident_id=i1), call(2, "incident", incident_id=i2)],
             f"{w} ({fmt(mw)} min; {l_}: {fmt(ml)} min).",
             {"wrong_entity": f"{l_} ({fmt(ml)} min; {w}: {fmt(mw)} min).",
              "unsupported_figure": f"{w} ({fmt(off(mw))} min; {l_}: {fmt(ml)} min)."},
             Expect(names=(w,), rivals=(l_,))),
    ]


TEXT_SHAPES: dict[str, Callable[[str], list[GenTask]]] = {"sql_rows": sql_rows, "versions": versions, "dates": dates}
