"""The data tables behind the suite's tools: one table per tool-output shape, rows per language.

Values are invented for the suite (the tools are the only source a task has, as a user's own tools would be);
each language has its own entities, so a tool's output can be written in that language's number format.
"""

from __future__ import annotations

__all__ = ["COMMITS", "CUSTOMERS", "FOUNDED", "INCIDENTS", "KPI", "LATENCY", "POPULATION", "RELEASES", "REVENUE",
           "SALES", "TEAMS", "TEST_RUNS", "VISITORS"]

VISITORS: dict[str, dict[str, int]] = {
    "en": {"Kew Gardens": 182340, "Tate Modern": 451210, "Science Museum": 298112, "Natural History Museum": 507385},
    "fr": {"Louvre": 689455, "Musée d'Orsay": 301209, "Centre Pompidou": 254870, "Musée Rodin": 61530},
    "de": {"Pergamonmuseum": 88321, "Deutsches Museum": 142870, "Zwinger": 97450, "Städel": 51264},
    "es": {"Prado": 276540, "Reina Sofía": 325112, "Thyssen-Bornemisza": 98764, "Guggenheim Bilbao": 112903},
}
"""Visitors last month per site (plain numbers)."""

CUSTOMERS: dict[str, list[tuple[str, str, int, float]]] = {
    "en": [("C-1042", "Harlow & Finch", 17, 12840.5), ("C-2210", "Brightwater Ltd", 9, 4310.0),
           ("C-3307", "Kestrel Foods", 23, 20975.25), ("C-4471", "Oakmere Tools", 12, 7650.75)],
    "fr": [("F-0815", "Boulangerie Lefèvre", 14, 3120.4), ("F-1933", "Atelier Moreau", 6, 9875.0),
           ("F-2046", "Transports Garnier", 31, 15400.6), ("F-3121", "Vins Delorme", 11, 2210.3)],
    "de": [("D-5120", "Müller GmbH", 21, 18230.9), ("D-6034", "Schreinerei Vogt", 8, 2975.5),
           ("D-7718", "Kessler & Söhne", 15, 11042.0), ("D-8802", "Bäckerei Lang", 5, 1260.8)],
    "es": [("E-3309", "Conservas Ortiz", 19, 8740.2), ("E-4418", "Talleres Ruiz", 7, 3390.0),
           ("E-5527", "Bodegas Navarro", 26, 21560.45), ("E-6636", "Muebles Castillo", 13, 5125.6)],
}
"""(id, name, open orders, balance in EUR) per customer record (JSON records with ids)."""

SALES: dict[str, list[tuple[str, int, float]]] = {
    "en": [("North", 1520, 84210.5), ("Midlands", 2310, 120450.0), ("South West", 980, 51320.25),
           ("Scotland", 1745, 90115.8), ("Wales", 610, 30980.0)],
    "fr": [("Bretagne", 1340, 70220.0), ("Occitanie", 2105, 109870.4), ("Grand Est", 1890, 98760.0),
           ("Normandie", 720, 37415.9), ("Provence", 1610, 84300.5)],
    "de": [("Bayern", 2840, 151230.0), ("Sachsen", 1190, 61870.3), ("Hessen", 1705, 90150.0),
           ("Bremen", 430, 22410.75), ("Nordrhein-Westfalen", 3120, 166780.2)],
    "es": [("Andalucía", 2230, 112560.0), ("Galicia", 1080, 54390.6), ("Cataluña", 2675, 140220.9),
           ("Aragón", 690, 34870.0), ("Murcia", 1315, 66120.4)],
}
"""(region, units, revenue in EUR) per region of each country's sales table (SQL rows)."""

RELEASES: dict[str, tuple[str, str]] = {
    "httpx": ("0.28.1", "2024-12-06"), "requests": ("2.32.3", "2024-05-29"), "numpy": ("2.1.3", "2024-11-02"),
    "pandas": ("2.2.3", "2024-09-20"), "pydantic": ("2.10.3", "2024-12-03"), "flask": ("3.1.0", "2024-11-13"),
    "django": ("5.1.4", "2024-12-04"), "rich": ("13.9.4", "2024-11-01"), "attrs": ("24.3.0", "2024-12-16"),
    "click": ("8.1.8", "2024-12-21"), "black": ("24.10.0", "2024-10-07"), "ruff": ("0.8.4", "2024-12-19"),
    "sqlalchemy": ("2.0.36", "2024-10-15"), "uvicorn": ("0.34.0", "2024-12-15"), "jinja2": ("3.1.5", "2024-12-21"),
    "urllib3": ("2.2.3", "2024-09-12"),
}
"""(latest version, release date) per package (versions)."""

FOUNDED: dict[str, dict[str, tuple[str, str]]] = {
    "en": {"Google": ("1998-09-04", "Larry Page and Sergey Brin"), "Facebook": ("2004-02-04", "Mark Zuckerberg"),
           "Amazon": ("1994-07-05", "Jeff Bezos"), "Netflix": ("1997-08-29", "Reed Hastings and Marc Randolph")},
    "fr": {"Michelin": ("1889-05-28", "André et Édouard Michelin"), "Renault": ("1899-02-25", "Louis Renault"),
           "L'Oréal": ("1909-07-30", "Eugène Schueller"), "Decathlon": ("1976-07-13", "Michel Leclercq")},
    "de": {"Siemens": ("1847-10-01", "Werner von Siemens"), "Bosch": ("1886-11-15", "Robert Bosch"),
           "Adidas": ("1949-08-18", "Adolf Dassler"), "SAP": ("1972-04-01", "fünf ehemaligen IBM-Mitarbeitern")},
    "es": {"Telefónica": ("1924-04-19", "un grupo de inversores"), "Seat": ("1950-05-09", "el INI"),
           "Inditex": ("1985-06-12", "Amancio Ortega"), "Mango": ("1984-03-02", "Isak Andic")},
}
"""(founding date, founders) per company (dates)."""

INCIDENTS: dict[str, dict[str, tuple[str, str]]] = {
    "en": {"INC-4411": ("2025-03-14T09:12:44Z", "2025-03-14T11:40:02Z"),
           "INC-4520": ("2025-03-20T22:05:10Z", "2025-03-21T00:31:55Z")},
    "fr": {"INC-5102": ("2025-04-02T07:45:00Z", "2025-04-02T08:20:30Z"),
           "INC-5177": ("2025-04-09T13:10:12Z", "2025-04-09T16:02:48Z")},
    "de": {"INC-6023": ("2025-05-05T06:00:00Z", "2025-05-05T06:47:15Z"),
           "INC-6090": ("2025-05-11T19:30:40Z", "2025-05-11T21:05:05Z")},
    "es": {"INC-7301": ("2025-06-01T10:15:00Z", "2025-06-01T12:00:00Z"),
           "INC-7345": ("2025-06-03T03:22:18Z", "2025-06-03T03:58:00Z")},
}
"""(opened, resolved) ISO timestamps per incident (dates and timestamps)."""

REVENUE: dict[str, dict[str, tuple[int, int, int]]] = {
    "en": {"Northwind": (2_450_000, 2_810_000, 2_630_000), "Contoso": (1_200_000_000, 1_350_000_000, 1_280_000_000)},
    "fr": {"Ardoise": (350_000, 412_000, 398_000), "Belvédère": (3_150_000, 2_980_000, 3_400_000)},
    "de": {"Brückner": (1_860_000, 1_720_000, 2_040_000), "Kessler": (740_000, 815_000, 690_000)},
    "es": {"Olivar": (5_200_000, 5_650_000, 5_480_000), "Sierra": (960_000, 1_040_000, 910_000)},
}
"""Revenue in Q1, Q2, Q3 2025 per company (money with k/M/bn)."""

KPI: dict[str, dict[str, float]] = {
    "en": {"2025-01": 2.5, "2025-02": 3.1, "2025-03": 2.8, "2025-04": 2.2},
    "fr": {"2025-01": 4.2, "2025-02": 3.6, "2025-03": 3.9, "2025-04": 4.5},
    "de": {"2025-01": 1.9, "2025-02": 2.4, "2025-03": 2.1, "2025-04": 1.6},
    "es": {"2025-01": 5.3, "2025-02": 4.8, "2025-03": 5.6, "2025-04": 5.1},
}
"""Churn rate in percent per month (percents)."""

LATENCY: dict[str, dict[tuple[str, int], float]] = {
    "en": {("checkout", 11): 180.0, ("checkout", 12): 145.0, ("search", 11): 62.5, ("search", 12): 71.0},
    "fr": {("paiement", 11): 212.0, ("paiement", 12): 238.5, ("catalogue", 11): 48.0, ("catalogue", 12): 41.5},
    "de": {("kasse", 11): 156.0, ("kasse", 12): 131.5, ("suche", 11): 88.0, ("suche", 12): 95.5},
    "es": {("pagos", 11): 301.0, ("pagos", 12): 276.0, ("buscador", 11): 54.5, ("buscador", 12): 66.0},
}
"""p95 latency in milliseconds per (service, ISO week) (units)."""

POPULATION: dict[str, dict[str, tuple[int, float, int]]] = {
    "en": {"Leeds": (536280, 551.7, 2021), "Bristol": (472465, 110.0, 2021), "Sheffield": (556500, 367.9, 2021),
           "Glasgow": (635130, 175.0, 2022)},
    "fr": {"Lyon": (522250, 47.87, 2021), "Toulouse": (504078, 118.3, 2021), "Nice": (348085, 71.92, 2021),
           "Nantes": (320732, 65.19, 2021)},
    "de": {"München": (1512491, 310.7, 2022), "Köln": (1084831, 405.0, 2022),
           "Frankfurt am Main": (773068, 248.3, 2022), "Stuttgart": (632865, 207.4, 2022)},
    "es": {"Valencia": (807693, 134.6, 2023), "Sevilla": (684025, 140.8, 2023), "Zaragoza": (682513, 973.8, 2023),
           "Málaga": (586384, 398.3, 2023)},
}
"""(inhabitants, area in km², census year) per city (prose passages)."""

TEST_RUNS: dict[str, tuple[int, int, int, float]] = {
    "api": (14, 2, 1, 3.21), "billing": (52, 0, 3, 11.8), "auth": (31, 4, 0, 6.02), "search": (27, 1, 2, 9.44),
    "ui": (88, 7, 5, 41.3), "sync": (19, 3, 0, 4.75), "export": (12, 5, 1, 2.9), "import": (40, 6, 2, 8.1),
}
"""(passed, failed, skipped, seconds) per test suite (test-runner summaries)."""

COMMITS: dict[str, tuple[str, tuple[tuple[str, int, int], ...]]] = {
    "a1f9c02": ("http/client.py", (("send_request", 6, 2), ("parse_headers", 3, 1), ("close", 1, 0))),
    "b7e4410": ("billing/invoice.py", (("total_due", 4, 4), ("apply_discount", 9, 3))),
    "c3d0a77": ("auth/tokens.py", (("issue_token", 2, 2), ("refresh_token", 5, 0), ("revoke", 3, 1))),
    "d95e3b1": ("search/index.py", (("tokenize", 7, 5), ("rank", 4, 2))),
    "e20f6c8": ("sync/queue.py", (("enqueue", 2, 1), ("drain", 6, 3), ("retry_later", 8, 0))),
    "f4a8d19": ("export/csv_writer.py", (("write_rows", 5, 5), ("escape_cell", 3, 0))),
    "0c6b2e5": ("ui/forms.py", (("validate_email", 4, 1), ("render_errors", 2, 2), ("submit", 3, 3))),
    "17d3f40": ("import/reader.py", (("detect_encoding", 6, 0), ("read_chunk", 4, 4))),
}
"""(file, ((function, lines added, lines removed), ...)) per commit (diffs and code)."""

TEAMS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {"platform": ("Alice Moore", "Ben Carter", "Chloe Diaz", "Dev Patel", "Emma Stone"),
           "payments": ("Ben Carter", "Farah Khan", "Dev Patel", "Grace Lee")},
    "fr": {"plateforme": ("Camille Roux", "Julien Petit", "Léa Martin", "Hugo Bernard"),
           "paiements": ("Julien Petit", "Manon Dubois", "Léa Martin", "Théo Laurent", "Inès Girard")},
    "de": {"plattform": ("Jonas Weber", "Lena Fischer", "Paul Wagner", "Mia Becker", "Felix Hoffmann", "Anna Schulz"),
           "zahlungen": ("Lena Fischer", "Tim Richter", "Mia Becker", "Paul Wagner")},
    "es": {"plataforma": ("Lucía García", "Mateo López", "Sofía Martín", "Hugo Sánchez"),
           "pagos": ("Mateo López", "Valeria Gómez", "Hugo Sánchez", "Daniel Ruiz", "Martina Díaz")},
}
"""Members per team (lists of names)."""
