"""The numeric shapes: plain numbers, JSON records with ids, money with k/M/bn, percents, units and prose
passages. Each builds five tasks per language from its data table with the shared kinds (``kinds``)."""

from __future__ import annotations

from collections.abc import Callable

from benchmarks.generality import data
from benchmarks.generality.kinds import Frame, Item, change, compare, difference, ratio, smaller, total
from benchmarks.generality.locale import money, number, percent
from benchmarks.generality.model import GenTask
from benchmarks.generality.tools import PRODUCT

__all__ = ["NUMERIC_SHAPES"]

_POINTS = {"en": "percentage points", "fr": "points", "de": "Prozentpunkte", "es": "puntos"}
_WEEK = {"en": "week {}", "fr": "semaine {}", "de": "KW {}", "es": "semana {}"}


def _frames(shape: str, lang: str, metric: str, fmt: Callable[[float], str]) -> Callable[[int], Frame]:
    return lambda i: Frame(shape, lang, metric, fmt, index=i)


def plain_numbers(lang: str) -> list[GenTask]:
    metric = {"en": "visitors", "fr": "visiteurs", "de": "Besucher", "es": "visitantes"}[lang]
    f = _frames("plain_numbers", lang, metric, lambda x: number(x, lang))
    s = [Item(site, v, number(v, lang), "visitors", {"site": site}) for site, v in data.VISITORS[lang].items()]
    return [difference(f(0), s[0], s[1]), ratio(f(1), s[1], s[2]), total(f(2), s[0], s[2], s[3]),
            difference(f(3), s[3], s[2]), ratio(f(4), s[3], s[0]), smaller(f(5), s[1], s[0])]


def json_records(lang: str) -> list[GenTask]:
    rows = data.CUSTOMERS[lang]
    orders_metric = {"en": "open orders", "fr": "commandes ouvertes", "de": "offene Bestellungen",
                     "es": "pedidos abiertos"}[lang]
    balance_metric = {"en": "balance (EUR)", "fr": "solde (EUR)", "de": "Saldo (EUR)", "es": "saldo (EUR)"}[lang]
    orders = [Item(cid, n, str(n), "customer", {"customer_id": cid}, field="open_orders") for cid, _, n, _ in rows]
    balance = [Item(cid, b, number(b, lang, 2), "customer", {"customer_id": cid}, field="balance_eur")
               for cid, _, _, b in rows]
    fo = _frames("json_records", lang, orders_metric, lambda x: number(x, lang))
    fb = _frames("json_records", lang, balance_metric, lambda x: number(x, lang, 2))
    return [total(fo(0), orders[0], orders[1], orders[2]), difference(fo(1), orders[3], orders[1]),
            ratio(fb(2), balance[2], balance[0]), difference(fb(3), balance[0], balance[3]),
            compare(fo(4), orders[1], orders[2])]


def money_amounts(lang: str) -> list[GenTask]:
    (c0, q0), (c1, q1) = data.REVENUE[lang].items()
    quarter = {"en": "Q{} 2025", "fr": "T{} 2025", "de": "Q{} 2025", "es": "T{} de 2025"}[lang]

    def items(company: str, figures: tuple[int, ...]) -> list[Item]:
        return [Item(quarter.format(i + 1), v, money(v, lang), "revenue", {"company": company, "quarter": f"Q{i + 1}"},
                     numeric=False) for i, v in enumerate(figures)]

    def of(company: str) -> Callable[[int], Frame]:
        metric = {"en": f"revenue of {company}", "fr": f"chiffre d'affaires de {company}",
                  "de": f"Umsatz von {company}", "es": f"ingresos de {company}"}[lang]
        return _frames("money", lang, metric, lambda x: money(x, lang))

    a, b = items(c0, q0), items(c1, q1)
    q3 = [Item(c, figs[2], money(figs[2], lang), "revenue", {"company": c, "quarter": "Q3"}, numeric=False)
          for c, figs in ((c0, q0), (c1, q1))]
    in_q3 = {"en": "revenue in Q3 2025", "fr": "chiffre d'affaires au T3 2025", "de": "Umsatz im Q3 2025",
             "es": "ingresos en el T3 de 2025"}[lang]
    return [change(of(c0)(0), a[0], a[1]), change(of(c1)(1), b[1], b[2]), total(of(c0)(2), *a),
            difference(_frames("money", lang, in_q3, lambda x: money(x, lang))(3), q3[0], q3[1]),
            change(of(c0)(4), a[1], a[2])]


def percents(lang: str) -> list[GenTask]:
    product = PRODUCT[lang]
    metric = {"en": f"churn rate of {product}", "fr": f"taux d'attrition de {product}",
              "de": f"Kündigungsquote von {product}", "es": f"tasa de abandono de {product}"}[lang]
    f = _frames("percents", lang, metric, lambda x: f"{number(x, lang, 1)} {_POINTS[lang]}")
    shown = _frames("percents", lang, metric, lambda x: percent(x, lang))
    m = [Item(month, v, percent(v, lang), "churn_rate", {"product": product, "month": month}, numeric=False)
         for month, v in data.KPI[lang].items()]
    return [change(f(0), m[0], m[1]), change(f(1), m[1], m[2]), change(f(2), m[2], m[3]),
            compare(shown(3), m[0], m[3]), difference(f(4), m[1], m[2])]


def units(lang: str) -> list[GenTask]:
    (s0, _), _, (s1, _), _ = data.LATENCY[lang]

    def item(service: str, week: int, label: str) -> Item:
        v = data.LATENCY[lang][(service, week)]
        return Item(label, v, f"{number(v, lang, 1)} ms", "p95_latency", {"service": service, "week": week},
                    numeric=False)

    def metric(of: str) -> str:
        return {"en": f"p95 latency{of and ' of ' + of}", "fr": f"latence p95{of and ' de ' + of}",
                "de": f"p95-Latenz{of and ' von ' + of}", "es": f"latencia p95{of and ' de ' + of}"}[lang]

    ms = lambda x: f"{number(x, lang, 1)} ms"  # noqa: E731
    week = _WEEK[lang]
    w11 = metric("") + {"en": " in week 11", "fr": " en semaine 11", "de": " in KW 11", "es": " en la semana 11"}[lang]
    w12 = metric("") + {"en": " in week 12", "fr": " en semaine 12", "de": " in KW 12", "es": " en la semana 12"}[lang]
    def weeks(service: str) -> tuple[Item, Item]:
        return item(service, 11, week.format(11)), item(service, 12, week.format(12))

    return [change(Frame("units", lang, metric(s0), ms, 0), *weeks(s0)),
            change(Frame("units", lang, metric(s1), ms, 1), *weeks(s1)),
            ratio(Frame("units", lang, w12, ms, 2), item(s0, 12, s0), item(s1, 12, s1)),
            difference(Frame("units", lang, w11, ms, 3), item(s0, 11, s0), item(s1, 11, s1)),
            compare(Frame("units", lang, metric(s1), ms, 4), *weeks(s1))]


def prose(lang: str) -> list[GenTask]:
    metric = {"en": "inhabitants", "fr": "habitants", "de": "Einwohner", "es": "habitantes"}[lang]
    f = _frames("prose", lang, metric, lambda x: number(x, lang))
    c = [Item(city, pop, number(pop, lang), "encyclopedia", {"topic": city}, numeric=False)
         for city, (pop, _, _) in data.POPULATION[lang].items()]
    return [difference(f(0), c[0], c[1]), ratio(f(1), c[0], c[3]), total(f(2), c[1], c[2], c[3]),
            difference(f(3), c[3], c[2]), ratio(f(4), c[3], c[0]), smaller(f(5), c[0], c[3])]


NUMERIC_SHAPES: dict[str, Callable[[str], list[GenTask]]] = {
    "plain_numbers": plain_numbers, "json_records": json_records, "money": money_amounts, "percents": percents,
    "units": units, "prose": prose}
