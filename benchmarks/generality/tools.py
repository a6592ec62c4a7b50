"""The suite's tools, written as a user writes their own: typed ``@tool`` functions over the data tables, each
returning its shape's output (a number, a record, SQL rows, a sentence in the user's language, a log line, a
test runner's summary, a diff, a list of names). Module-level, so they pickle to Ray workers."""

from __future__ import annotations

import sqlite3
import zlib
from datetime import date

from agents import tool
from agents.tools.errors import ToolArgumentError
from benchmarks.generality import data
from benchmarks.generality.locale import money, number, percent, scaled

__all__ = ["ALL_TOOLS", "COUNTRY", "PRODUCT", "churn_rate", "company_profile", "customer", "encyclopedia",
           "incident", "latest_release", "p95_latency", "payment_reference", "revenue", "run_tests", "schedule_payment",
           "show_commit", "sql", "team_members", "visitors"]

COUNTRY = {"en": "UK", "fr": "FR", "de": "DE", "es": "ES"}
"""The ``country`` column of each language's rows in the sales table."""
PRODUCT = {"en": "Pulse", "fr": "Agenda+", "de": "Kontor", "es": "Mercado"}
"""The product whose churn each language's tasks ask about."""
_MONTHS = {
    "en": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"),
    "fr": ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
           "novembre", "décembre"),
    "de": ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
           "November", "Dezember"),
    "es": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
           "noviembre", "diciembre"),
}


def _find(table: dict, key: str, what: str) -> tuple[str, object]:
    """(language, row) of ``key`` in a per-language table, matched without case."""
    for lang, rows in table.items():
        for name, row in rows.items():
            if name.lower() == key.strip().lower():
                return lang, row
    known = sorted(name for rows in table.values() for name in rows)
    raise ToolArgumentError(f"unknown {what} {key!r}; known: {', '.join(known)}")


@tool
def visitors(site: str) -> int:
    """Visitors counted at a museum or garden last month.

    Args:
        site: The site's name, e.g. "Louvre".
    """
    return int(_find(data.VISITORS, site, "site")[1])  # type: ignore[call-overload]


@tool
def customer(customer_id: str) -> dict:
    """A customer record: id, name, open_orders and balance_eur.

    Args:
        customer_id: The customer's id, e.g. "C-1042".
    """
    for rows in data.CUSTOMERS.values():
        for cid, name, orders, balance in rows:
            if cid == customer_id.strip().upper():
                return {"id": cid, "name": name, "open_orders": orders, "balance_eur": balance}
    raise ToolArgumentError(f"no customer {customer_id!r}")


def _sales_db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE sales (country TEXT, region TEXT, units INTEGER, revenue_eur REAL)")
    db.executemany("INSERT INTO sales VALUES (?, ?, ?, ?)",
                   [(COUNTRY[lang], *row) for lang, rows in data.SALES.items() for row in rows])
    return db


@tool
def sql(query: str) -> list:
    """Run a read-only SQL query on the table sales(country, region, units, revenue_eur); country is UK, FR, DE
    or ES. Returns the rows as records.

    Args:
        query: One SELECT statement.
    """
    if not query.lstrip().lower().startswith("select"):
        raise ToolArgumentError("only SELECT statements are allowed")
    db = _sales_db()
    try:
        cursor = db.execute(query)
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
    except sqlite3.Error as e:
        raise ToolArgumentError(f"SQL error: {e}") from None
    finally:
        db.close()


@tool
def latest_release(package: str) -> str:
    """The latest release of a Python package and its date.

    Args:
        package: The package's name on PyPI.
    """
    version, day = _find({"": data.RELEASES}, package, "package")[1]  # type: ignore[misc]
    return f"{package.strip().lower()} {version} was released on {day}."


def long_date(iso: str, lang: str) -> str:
    """A date as the language writes it in prose ("September 4, 1998", "4. September 1998")."""
    d = date.fromisoformat(iso)
    month = _MONTHS[lang][d.month - 1]
    return {"en": f"{month} {d.day}, {d.year}", "fr": f"{d.day} {month} {d.year}",
            "de": f"{d.day}. {month} {d.year}", "es": f"{d.day} de {month} de {d.year}"}[lang]


@tool
def company_profile(company: str) -> str:
    """A short profile of a company: when and by whom it was founded.

    Args:
        company: The company's name.
    """
    lang, (day, founders) = _find(data.FOUNDED, company, "company")  # type: ignore[misc]
    name = company.strip()
    when = long_date(day, lang)
    return {"en": f"{name} was founded on {when} by {founders}.",
            "fr": f"{name} a été fondée le {when} par {founders}.",
            "de": f"{name} wurde am {when} von {founders} gegründet.",
            "es": f"{name} fue fundada el {when} por {founders}."}[lang]


@tool
def incident(incident_id: str) -> str:
    """The incident tracker's log line for one incident (ISO 8601 timestamps, UTC).

    Args:
        incident_id: The incident's id, e.g. "INC-4411".
    """
    _, (opened, resolved) = _find(data.INCIDENTS, incident_id, "incident")  # type: ignore[misc]
    return f"{incident_id.strip().upper()} status=resolved opened_at={opened} resolved_at={resolved}"


@tool
def revenue(company: str, quarter: str) -> str:
    """A company's revenue in one quarter of 2025, as the finance report states it.

    Args:
        company: The company's name.
        quarter: Q1, Q2 or Q3.
    """
    lang, figures = _find(data.REVENUE, company, "company")
    q = quarter.strip().upper()
    if q not in ("Q1", "Q2", "Q3"):
        raise ToolArgumentError("quarter must be Q1, Q2 or Q3")
    amount = money(figures[int(q[1]) - 1], lang)  # type: ignore[index]
    name = company.strip()
    return {"en": f"{name} revenue in {q} 2025: {amount}", "fr": f"Chiffre d'affaires de {name} au {q} 2025 : {amount}",
            "de": f"Umsatz von {name} im {q} 2025: {amount}",
            "es": f"Ingresos de {name} en el {q} de 2025: {amount}"}[lang]


@tool
def churn_rate(product: str, month: str) -> str:
    """A product's monthly churn rate, as the analytics dashboard shows it.

    Args:
        product: The product's name.
        month: The month as YYYY-MM.
    """
    lang = next((lg for lg, p in PRODUCT.items() if p.lower() == product.strip().lower()), None)
    if lang is None or month.strip() not in data.KPI[lang]:
        raise ToolArgumentError(f"no churn figure for {product!r} in {month!r}")
    rate, m = percent(data.KPI[lang][month.strip()], lang), month.strip()
    name = PRODUCT[lang]
    return {"en": f"Churn rate of {name} in {m}: {rate}", "fr": f"Taux d'attrition de {name} en {m} : {rate}",
            "de": f"Kündigungsquote von {name} im Monat {m}: {rate}",
            "es": f"Tasa de abandono de {name} en {m}: {rate}"}[lang]


@tool
def p95_latency(service: str, week: int) -> str:
    """A service's p95 latency in one ISO week of 2025, from the monitoring report.

    Args:
        service: The service's name.
        week: The ISO week number.
    """
    for lang, rows in data.LATENCY.items():
        if (key := (service.strip().lower(), week)) in rows:
            ms = f"{number(rows[key], lang, 1)} ms"
            return {"en": f"p95 latency of {key[0]} in week {week}: {ms}",
                    "fr": f"Latence p95 de {key[0]} en semaine {week} : {ms}",
                    "de": f"p95-Latenz von {key[0]} in KW {week}: {ms}",
                    "es": f"Latencia p95 de {key[0]} en la semana {week}: {ms}"}[lang]
    raise ToolArgumentError(f"no latency for {service!r} in week {week}")


@tool
def encyclopedia(topic: str) -> str:
    """The encyclopedia's passage about a city, in the city's language.

    Args:
        topic: The city's name.
    """
    lang, (pop, area, year) = _find(data.POPULATION, topic, "city")  # type: ignore[misc]
    city, people, km2 = topic.strip(), number(pop, lang), number(area, lang, 1)
    return {"en": f"{city} is a city in the United Kingdom. At the {year} census it had {people} inhabitants on "
                  f"{km2} km².",
            "fr": f"{city} est une commune française. Au recensement de {year}, elle comptait {people} habitants "
                  f"sur {km2} km².",
            "de": f"{city} ist eine deutsche Großstadt. Im Jahr {year} hatte sie {people} Einwohner (rund "
                  f"{scaled(pop, 'de')}) auf einer Fläche von {km2} km².",
            "es": f"{city} es una ciudad de España. En {year} tenía {people} habitantes en {km2} km²."}[lang]


@tool
def run_tests(suite: str) -> str:
    """Run one test suite and return the test runner's output.

    Args:
        suite: The suite's name, e.g. "api".
    """
    _, (passed, failed, skipped, seconds) = _find({"": data.TEST_RUNS}, suite, "suite")  # type: ignore[misc]
    name = suite.strip().lower()
    lines = [f"FAILED tests/test_{name}.py::test_case_{3 * i + 2} - AssertionError" for i in range(failed)]
    parts = [f"{passed} passed"] + [f"{n} {word}" for n, word in ((failed, "failed"), (skipped, "skipped")) if n]
    return "\n".join(lines + [f"===== {', '.join(parts)} in {seconds:.2f}s ====="])


@tool
def show_commit(sha: str) -> str:
    """The unified diff of one commit.

    Args:
        sha: The commit's short hash.
    """
    _, (path, functions) = _find({"": data.COMMITS}, sha, "commit")  # type: ignore[misc]
    out = [f"commit {sha.strip()}", f"diff --git a/{path} b/{path}", f"--- a/{path}", f"+++ b/{path}"]
    line = 10
    for name, added, removed in functions:
        out.append(f"@@ -{line},{removed + 2} +{line},{added + 2} @@ def {name}(self, timeout=30):")
        out += [f"-    old_{name}_{i} = {i * 7}" for i in range(removed)]
        out += [f"+    new_{name}_{i} = retry({i + 2}, timeout)" for i in range(added)]
        line += 40
    return "\n".join(out)


@tool
def team_members(team: str) -> list:
    """The members of a team, from the company directory.

    Args:
        team: The team's name.
    """
    return list(_find(data.TEAMS, team, "team")[1])  # type: ignore[call-overload]


def payment_reference(customer_id: str, amount_eur: float) -> str:
    """The reference the finance system gives a payment: stable for the same customer and amount."""
    return f"PAY-{zlib.crc32(f'{customer_id.strip().upper()}:{amount_eur:.2f}'.encode()) % 100000:05d}"


@tool(permission="write")
def schedule_payment(customer_id: str, amount_eur: float) -> str:
    """Schedule a payment to a customer in the finance system; returns the payment's reference.

    Args:
        customer_id: The customer's id, e.g. "C-1042".
        amount_eur: The amount in EUR.
    """
    if amount_eur <= 0:
        raise ToolArgumentError("amount_eur must be positive")
    return f"scheduled {payment_reference(customer_id, amount_eur)}"


ALL_TOOLS = [visitors, customer, sql, latest_release, company_profile, incident, revenue, churn_rate, p95_latency,
             encyclopedia, run_tests, show_commit, team_members, schedule_payment]
"""Every tool of the suite (the built-in calculator is added beside them by the runners)."""
