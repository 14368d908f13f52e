"""Five small randomized algorithms behind one command line: the program under test of the
monte-carlo example.

Every call draws a fresh seed from the operating system, so two calls with the same arguments
give different numbers. Each prints one JSON object: what it computed, how much work it did and
whether the result met the case's tolerance or budget.

    python3 montecarlo.py pi --samples 10000 --tol 0.02
    python3 montecarlo.py integrate --fn exp --samples 4000 --tol 0.03
    python3 montecarlo.py select --n 1001 --k 500 --budget 4000
    python3 montecarlo.py prime --n 8911 --rounds 1
    python3 montecarlo.py optimize --restarts 8

The arguments may also come as one string ("pi --samples 10000 --tol 0.02"), which is how a
suite passes them. `--seed S` after the task replays a call from the seed printed in its output;
the suite never passes it.

Start-up is most of the cost of a call, so only modules that load fast are imported (`json`
would pull in the regular-expression engine and nearly double it).
"""

from __future__ import annotations

import math
import os
import random
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# name: (integrand, lower bound, upper bound, exact value of the integral)
INTEGRANDS: dict[str, tuple[Callable[[float], float], float, float, float]] = {
    "exp": (math.exp, 0.0, 1.0, math.e - 1.0),
    "sin": (math.sin, 0.0, math.pi, 2.0),
    "square": (lambda x: x * x, 0.0, 1.0, 1.0 / 3.0),
    "quarter-circle": (lambda x: math.sqrt(1.0 - x * x), 0.0, 1.0, math.pi / 4.0),
    "gauss": (lambda x: math.exp(-x * x), -3.0, 3.0, math.sqrt(math.pi) * math.erf(3.0)),
}


def estimate_pi(rng: random.Random, samples: int, tol: float) -> dict[str, Any]:
    """Hit-or-miss: the share of random points of the unit square inside the quarter circle."""
    rand = rng.random
    hits = sum(1 for _ in range(samples) if rand() ** 2 + rand() ** 2 <= 1.0)
    estimate = 4.0 * hits / samples
    error = abs(estimate - math.pi)
    return {"estimate": estimate, "error": error, "tol": tol, "ok": error <= tol}


def integrate(rng: random.Random, fn: str, samples: int, tol: float) -> dict[str, Any]:
    """Plain Monte-Carlo integration: the width times the mean of f at uniform random points."""
    f, lo, hi, exact = INTEGRANDS[fn]
    uniform = rng.uniform
    total = sum(f(uniform(lo, hi)) for _ in range(samples))
    estimate = (hi - lo) * total / samples
    error = abs(estimate - exact)
    return {"estimate": estimate, "error": error, "tol": tol, "ok": error <= tol}


class OverBudget(Exception):
    """Quickselect used more comparisons than it was allowed."""


def quickselect(rng: random.Random, items: list[int], k: int, budget: int) -> tuple[int, int]:
    """The k-th smallest item (0-based) with random pivots; returns it and the comparisons used."""
    used = 0
    while True:
        if len(items) == 1:
            return items[0], used
        pivot = items[rng.randrange(len(items))]
        used += len(items)
        if used > budget:
            raise OverBudget(used)
        lower = [x for x in items if x < pivot]
        if k < len(lower):
            items = lower
            continue
        upper = [x for x in items if x > pivot]
        if k < len(items) - len(upper):
            return pivot, used
        k -= len(items) - len(upper)
        items = upper


def select(rng: random.Random, n: int, k: int, budget: int) -> dict[str, Any]:
    """The k-th smallest of a shuffled 0..n-1 (so the answer is k) within a comparison budget."""
    items = rng.sample(range(n), n)
    try:
        value, used = quickselect(rng, items, k, budget)
    except OverBudget as over:
        return {"value": None, "comparisons": over.args[0], "budget": budget, "ok": False}
    return {"value": value, "comparisons": used, "budget": budget, "ok": True}


def strong_liar(n: int, a: int) -> bool:
    """True when base `a` fails to witness that `n` (odd, > 3) is composite."""
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    x = pow(a, d, n)
    if x in (1, n - 1):
        return True
    for _ in range(s - 1):
        x = x * x % n
        if x == n - 1:
            return True
    return False


def prime(rng: random.Random, n: int, rounds: int) -> dict[str, Any]:
    """Miller-Rabin with `rounds` random bases: 'composite' is certain, 'probable-prime' is not."""
    if n < 4 or n % 2 == 0:
        verdict = "probable-prime" if n in (2, 3) else "composite"
        return {"n": n, "verdict": verdict, "witness": None, "rounds_run": 0}
    for done in range(1, rounds + 1):
        a = rng.randrange(2, n - 1)
        if not strong_liar(n, a):
            return {"n": n, "verdict": "composite", "witness": a, "rounds_run": done}
    return {"n": n, "verdict": "probable-prime", "witness": None, "rounds_run": rounds}


def rastrigin(x: float) -> float:
    """One-dimensional Rastrigin: global minimum 0 at x = 0, a local minimum near every integer."""
    return 10.0 + x * x - 10.0 * math.cos(2.0 * math.pi * x)


def descend(f: Callable[[float], float], x: float, step: float = 0.1) -> tuple[float, int]:
    """Pattern search from x: step to a better neighbour, else halve the step; returns (x, evals)."""
    fx, evals = f(x), 1
    while step > 1e-7:
        for candidate in (x - step, x + step):
            fc = f(candidate)
            evals += 1
            if fc < fx:
                x, fx = candidate, fc
                break
        else:
            step /= 2.0
    return x, evals


def optimize(rng: random.Random, restarts: int) -> dict[str, Any]:
    """Random restarts of a local search on Rastrigin over [-5.12, 5.12]; keeps the best."""
    best_x, best_f, evals = None, math.inf, 0
    for _ in range(restarts):
        x, used = descend(rastrigin, rng.uniform(-5.12, 5.12))
        evals += used
        if rastrigin(x) < best_f:
            best_x, best_f = round(x, 6), rastrigin(x)
    return {"best_x": best_x, "best_f": best_f, "evaluations": evals, "found": best_f < 1e-6}


def to_json(value: Any) -> str:
    """JSON for what the tasks return: flat dicts of words, numbers, booleans and null."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{to_json(k)}: {to_json(v)}" for k, v in value.items()) + "}"
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


#: task: (function, its options with their defaults; a type instead of a default is required)
TASKS: dict[str, tuple[Callable[..., dict[str, Any]], dict[str, Any]]] = {
    "pi": (estimate_pi, {"samples": 10_000, "tol": 0.05}),
    "integrate": (integrate, {"fn": str, "samples": 4_000, "tol": 0.05}),
    "select": (select, {"n": 1_001, "k": 500, "budget": 10_000}),
    "prime": (prime, {"n": int, "rounds": 1}),
    "optimize": (optimize, {"restarts": 10}),
}


def parse(argv: list[str]) -> tuple[str, dict[str, Any], int | None]:
    """`TASK --option value ... [--seed S]` into the task, its options and the seed."""
    if not argv or argv[0] not in TASKS:
        raise ValueError(f"the first argument must be one of: {', '.join(TASKS)}")
    task, rest = argv[0], argv[1:]
    spec = TASKS[task][1]
    if len(rest) % 2:
        raise ValueError(f"every option needs a value: {' '.join(rest)}")
    given = dict(zip(rest[::2], rest[1::2], strict=True))
    seed = int(given.pop("--seed")) if "--seed" in given else None
    options: dict[str, Any] = {}
    for flag, text in given.items():
        name = flag.removeprefix("--")
        if not flag.startswith("--") or name not in spec:
            raise ValueError(f"{task} takes {', '.join('--' + o for o in spec)}; not {flag}")
        kind = spec[name] if isinstance(spec[name], type) else type(spec[name])
        options[name] = kind(text)
    for name, default in spec.items():
        if isinstance(default, type) and name not in options:
            raise ValueError(f"{task} needs --{name}")
        options.setdefault(name, default)
    if task == "integrate" and options["fn"] not in INTEGRANDS:
        raise ValueError(f"--fn must be one of: {', '.join(INTEGRANDS)}")
    return task, options, seed


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if len(argv) == 1:  # one string holding every argument, as a suite passes them
        argv = argv[0].split()
    try:
        task, options, seed = parse(argv)
    except ValueError as problem:
        print(f"montecarlo.py: {problem}", file=sys.stderr)
        return 2
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "big")
    started = time.perf_counter()
    result = TASKS[task][0](random.Random(seed), **options)
    elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
    print(to_json({"task": task, **result, "seed": seed, "elapsed_ms": elapsed_ms}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
