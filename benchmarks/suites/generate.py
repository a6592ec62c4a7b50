"""Write the benchmark world and suites (deterministic: `python -m benchmarks.suites.generate`).

Suites (≥ 30 tasks each), every task with a gold plan, a gold ReAct trajectory and a gold answer:
- parallel: compare / aggregate N independent lookups (LLMCompiler's ParallelQA pattern);
- chain: each lookup needs the previous answer (no parallelism to exploit);
- mixed: fan-out, per-branch follow-ups, then joins (5-12 steps);
- repair: the first plan misspells an entity, the tool fails, the reflector must replan.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent
SYLLABLES = ["vel", "mor", "cas", "trin", "dal", "var", "lun", "bre", "oss", "kan", "tel", "rion", "zar", "ith",
             "mar", "quen", "sol", "dor", "fen", "gal", "hal", "ost", "pra", "wyn"]


def _name(rng: random.Random, used: set[str]) -> str:
    while True:
        n = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 3)))).capitalize()
        if n not in used and len(n) > 4:
            used.add(n)
            return n


def build_world(seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    used: set[str] = set()
    entities: dict[str, dict[str, Any]] = {}
    countries = [_name(rng, used) for _ in range(24)]
    for country in countries:
        capital = _name(rng, used)
        entities[capital] = {"population_millions": round(rng.uniform(0.3, 9.5), 2),
                             "area_km2": rng.randint(80, 2500), "country": country,
                             "founded": rng.randint(600, 1900)}
        entities[country] = {"capital": capital, "population_millions": round(rng.uniform(2, 90), 1),
                             "area_km2": rng.randint(10_000, 900_000)}
    for _ in range(40):
        city = _name(rng, used)
        entities[city] = {"population_millions": round(rng.uniform(0.2, 6.0), 2), "area_km2": rng.randint(50, 1500),
                          "country": rng.choice(countries), "founded": rng.randint(500, 1950)}
    for _ in range(20):
        company = _name(rng, used) + " " + rng.choice(["Corp", "Works", "Labs", "Group"])
        entities[company] = {"revenue_billions": round(rng.uniform(0.5, 120), 1),
                             "headquarters": rng.choice([k for k, v in entities.items() if "founded" in v])}
    return {"seed": seed, "entities": entities}


def _describe(tool: str, inp: dict[str, Any]) -> str:
    """A short description as a model writes one ("capital of Halhal", "founded of step 1's result"): the
    previous JSON dump of the arguments cost the planner ~2x the tokens a model spends on it."""
    if tool == "lookup":
        entity = inp["entity"]
        ref = re.fullmatch(r"\$step_(\d+)_result", entity)
        subject = f"the result of step {ref.group(1)}" if ref else entity
        return f"{inp['attribute'].replace('_', ' ')} of {subject}"
    return "compute the result"


def _step(i: int, tool: str, inp: dict[str, Any], deps: list[int] | None = None, desc: str = "") -> dict[str, Any]:
    return {"step_id": i, "description": desc or _describe(tool, inp), "tool_name": tool,
            "tool_input": inp, "depends_on": deps or []}


def _fmt(x: float) -> str:
    return f"{round(x, 2):g}"


def parallel_task(rng: random.Random, ents: dict[str, Any], k: int) -> dict[str, Any]:
    cities = rng.sample([e for e, v in ents.items() if "population_millions" in v and "country" in v], k)
    pops = [ents[c]["population_millions"] for c in cities]
    kind = rng.choice(["total", "range"])
    steps = [_step(i + 1, "lookup", {"entity": c, "attribute": "population_millions"}, desc=f"population of {c}")
             for i, c in enumerate(cities)]
    refs = ", ".join(f"{{$step_{i + 1}_result}}" for i in range(k))
    if kind == "total":
        expr = " + ".join(f"{{$step_{i + 1}_result}}" for i in range(k))
        value = sum(pops)
        task = f"What is the combined population, in millions, of {', '.join(cities[:-1])} and {cities[-1]}?"
        answer = f"The combined population is {_fmt(value)} million."
        concrete = " + ".join(str(p) for p in pops)
    else:
        expr = f"max({refs}) - min({refs})"
        value = max(pops) - min(pops)
        big, small = cities[pops.index(max(pops))], cities[pops.index(min(pops))]
        task = (f"Among {', '.join(cities[:-1])} and {cities[-1]}, which city has the largest population and by how "
                f"many million people does it exceed the smallest one?")
        answer = f"{big} is the largest; it exceeds {small} by {_fmt(value)} million people."
        concrete = f"max({', '.join(map(str, pops))}) - min({', '.join(map(str, pops))})"
    steps.append(_step(k + 1, "calculator", {"expression": expr}, list(range(1, k + 1)), "compute the result"))
    react = [[{"tool_name": "lookup", "tool_input": s["tool_input"]} for s in steps[:-1]],
             [{"tool_name": "calculator", "tool_input": {"expression": concrete}}]]
    return {"task": task, "plan": steps, "answer": answer, "answer_number": round(value, 4), "react_turns": react}


def chain_task(rng: random.Random, ents: dict[str, Any]) -> dict[str, Any]:
    country = rng.choice([e for e, v in ents.items() if "capital" in v])
    capital = ents[country]["capital"]
    factor = rng.choice([2, 3, 4, 10])
    if rng.random() < 0.5:
        task = (f"Find the capital of {country}, then the year that capital was founded, and say how "
                f"many years passed between its founding and the year 2000.")
        value = 2000 - ents[capital]["founded"]
        steps = [_step(1, "lookup", {"entity": country, "attribute": "capital"}),
                 _step(2, "lookup", {"entity": "$step_1_result", "attribute": "founded"}, [1]),
                 _step(3, "calculator", {"expression": "2000 - {$step_2_result}"}, [2])]
        react = [[{"tool_name": "lookup", "tool_input": {"entity": country, "attribute": "capital"}}],
                 [{"tool_name": "lookup", "tool_input": {"entity": capital, "attribute": "founded"}}],
                 [{"tool_name": "calculator", "tool_input": {"expression": f"2000 - {ents[capital]['founded']}"}}]]
        answer = f"{capital} was founded {value} years before 2000."
    else:
        task = (f"Find the capital of {country}, look up its population and its area, and compute its population "
                f"density in people per km2 times {factor}.")
        pop, area = ents[capital]["population_millions"], ents[capital]["area_km2"]
        value = pop * 1_000_000 / area * factor
        steps = [_step(1, "lookup", {"entity": country, "attribute": "capital"}),
                 _step(2, "lookup", {"entity": "$step_1_result", "attribute": "population_millions"}, [1]),
                 _step(3, "lookup", {"entity": "$step_1_result", "attribute": "area_km2"}, [1]),
                 _step(4, "calculator", {"expression": f"{{$step_2_result}} * 1000000 / {{$step_3_result}} * {factor}"},
                       [2, 3])]
        react = [[{"tool_name": "lookup", "tool_input": {"entity": country, "attribute": "capital"}}],
                 [{"tool_name": "lookup", "tool_input": {"entity": capital, "attribute": "population_millions"}},
                  {"tool_name": "lookup", "tool_input": {"entity": capital, "attribute": "area_km2"}}],
                 [{"tool_name": "calculator", "tool_input": {"expression": f"{pop} * 1000000 / {area} * {factor}"}}]]
        answer = f"The result is {_fmt(value)}."
    return {"task": task, "plan": steps, "answer": answer, "answer_number": round(value, 4), "react_turns": react}


def mixed_task(rng: random.Random, ents: dict[str, Any]) -> dict[str, Any]:
    countries = rng.sample([e for e, v in ents.items() if "capital" in v], rng.choice((2, 3, 4)))
    caps = [ents[c]["capital"] for c in countries]
    pops = [ents[c]["population_millions"] for c in caps]
    n = len(countries)
    steps = [_step(i + 1, "lookup", {"entity": c, "attribute": "capital"}) for i, c in enumerate(countries)]
    steps += [_step(n + i + 1, "lookup", {"entity": f"$step_{i + 1}_result", "attribute": "population_millions"},
                    [i + 1]) for i in range(n)]
    refs = [f"{{$step_{n + i + 1}_result}}" for i in range(n)]
    steps.append(_step(2 * n + 1, "calculator", {"expression": " + ".join(refs)}, [n + i + 1 for i in range(n)],
                       "combined population"))
    steps.append(_step(2 * n + 2, "calculator", {"expression": f"max({', '.join(refs)})"},
                       [n + i + 1 for i in range(n)], "largest population"))
    steps.append(_step(2 * n + 3, "calculator",
                       {"expression": f"{{$step_{2 * n + 2}_result}} / {{$step_{2 * n + 1}_result}} * 100"},
                       [2 * n + 1, 2 * n + 2], "share of the largest in percent"))
    total, biggest = sum(pops), max(pops)
    value = biggest / total * 100
    task = (f"Look up the capitals of {', '.join(countries[:-1])} and {countries[-1]}, then the population of each "
            f"capital. What share (in percent) of their combined population lives in the largest capital?")
    react = [[{"tool_name": "lookup", "tool_input": {"entity": c, "attribute": "capital"}} for c in countries],
             [{"tool_name": "lookup", "tool_input": {"entity": c, "attribute": "population_millions"}} for c in caps],
             [{"tool_name": "calculator", "tool_input": {"expression": " + ".join(map(str, pops))}},
              {"tool_name": "calculator", "tool_input": {"expression": f"max({', '.join(map(str, pops))})"}}],
             [{"tool_name": "calculator", "tool_input": {"expression": f"{biggest} / {round(total, 6)} * 100"}}]]
    answer = f"{caps[pops.index(biggest)]} holds {_fmt(value)}% of the combined population."
    return {"task": task, "plan": steps, "answer": answer, "answer_number": round(value, 4), "react_turns": react}


def repair_task(rng: random.Random, ents: dict[str, Any]) -> dict[str, Any]:
    base = parallel_task(rng, ents, rng.choice((2, 3, 4)))
    victim = base["plan"][0]["tool_input"]["entity"]
    typo = victim[:-1] + ("x" if victim[-1] != "x" else "q")
    first = json.loads(json.dumps(base["plan"]))
    first[0]["tool_input"]["entity"] = typo
    base["first_plan"] = first
    base["replan_feedback"] = f"Step 1 failed: the entity is spelled {victim!r}, not {typo!r}. Fix it and plan again."
    wrong = {"tool_name": "lookup", "tool_input": {"entity": typo, "attribute": "population_millions"}}
    first_turn = [wrong] + base["react_turns"][0][1:]
    fix = [{"tool_name": "lookup", "tool_input": {"entity": victim, "attribute": "population_millions"}}]
    base["react_turns"] = [first_turn, fix, *base["react_turns"][1:]]
    return base


def _distinct(make: Callable[[], dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """n tasks with distinct texts: a repeated task would be counted twice and, since the simulated model
    finds its gold behaviour by the task text, must not exist."""
    tasks: dict[str, dict[str, Any]] = {}
    for _ in range(100 * n):
        task = make()
        tasks.setdefault(task["task"], task)
        if len(tasks) == n:
            return list(tasks.values())
    raise RuntimeError(f"only {len(tasks)} distinct tasks after {100 * n} draws; widen the world")


def build_suites(world: dict[str, Any], n: int = 32, seed: int = 11) -> dict[str, list[dict[str, Any]]]:
    ents = world["entities"]
    rng = random.Random(seed)
    makers: dict[str, Callable[[], dict[str, Any]]] = {
        "parallel": lambda: parallel_task(rng, ents, rng.choice((3, 4, 5, 6))),
        "chain": lambda: chain_task(rng, ents),
        "mixed": lambda: mixed_task(rng, ents),
        "repair": lambda: repair_task(rng, ents),
    }
    suites = {name: _distinct(make, n) for name, make in makers.items()}
    for name, tasks in suites.items():
        for i, t in enumerate(tasks):
            t["id"] = f"{name}-{i + 1:03d}"
    return suites


def main() -> None:
    world = build_world()
    (OUT / "world.json").write_text(json.dumps(world, indent=1, sort_keys=True) + "\n")
    for name, tasks in build_suites(world).items():
        doc = {"suite": name, "description": __doc__.split(f"- {name}: ")[1].split("\n")[0], "tasks": tasks}
        (OUT / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {name}.json ({len(tasks)} tasks)")


if __name__ == "__main__":
    main()
