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

The arguments may also come as one string (`"pi --samples 10000 --tol 0.02"`), which is how a
suite passes them. `--seed` replays a call whose output was stored; the suite never passes it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shlex
import sys
import time
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


def estimate_pi(rng: random.Random, args: argparse.Namespace) -> dict[str, Any]:
    """Hit-or-miss: the share of random points of the unit square inside the quarter circle."""
    rand = rng.random
    hits = sum(1 for _ in range(args.samples) if rand() ** 2 + rand() ** 2 <= 1.0)
    estimate = 4.0 * hits / args.samples
    error = abs(estimate - math.pi)
    return {"estimate": estimate, "error": error, "tol": args.tol, "ok": error <= args.tol}


def integrate(rng: random.Random, args: argparse.Namespace) -> dict[str, Any]:
    """Plain Monte-Carlo integration: the width times the mean of f at uniform random points."""
    f, lo, hi, exact = INTEGRANDS[args.fn]
    uniform = rng.uniform
    total = sum(f(uniform(lo, hi)) for _ in range(args.samples))
    estimate = (hi - lo) * total / args.samples
    error = abs(estimate - exact)
    return {"estimate": estimate, "error": error, "tol": args.tol, "ok": error <= args.tol}


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


def select(rng: random.Random, args: argparse.Namespace) -> dict[str, Any]:
    """The k-th smallest of a shuffled 0..n-1 (so the answer is k) within a comparison budget."""
    items = rng.sample(range(args.n), args.n)
    try:
        value, used = quickselect(rng, items, args.k, args.budget)
    except OverBudget as over:
        return {"value": None, "comparisons": over.args[0], "budget": args.budget, "ok": False}
    return {"value": value, "comparisons": used, "budget": args.budget, "ok": True}


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


def prime(rng: random.Random, args: argparse.Namespace) -> dict[str, Any]:
    """Miller-Rabin with `rounds` random bases: 'composite' is certain, 'probable-prime' is not."""
    n = args.n
    if n < 4 or n % 2 == 0:
        verdict = "probable-prime" if n in (2, 3) else "composite"
        return {"n": n, "verdict": verdict, "witness": None, "rounds_run": 0}
    for done in range(1, args.rounds + 1):
        a = rng.randrange(2, n - 1)
        if not strong_liar(n, a):
            return {"n": n, "verdict": "composite", "witness": a, "rounds_run": done}
    return {"n": n, "verdict": "probable-prime", "witness": None, "rounds_run": args.rounds}


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


def optimize(rng: random.Random, args: argparse.Namespace) -> dict[str, Any]:
    """Random restarts of a local search on Rastrigin over [-5.12, 5.12]; keeps the best."""
    best_x, best_f, evals = math.nan, math.inf, 0
    for _ in range(args.restarts):
        x, used = descend(rastrigin, rng.uniform(-5.12, 5.12))
        evals += used
        if rastrigin(x) < best_f:
            best_x, best_f = x, rastrigin(x)
    return {
        "best_x": round(best_x, 6),
        "best_f": best_f,
        "evaluations": evals,
        "found": best_f < 1e-6,
    }


TASKS: dict[str, Callable[[random.Random, argparse.Namespace], dict[str, Any]]] = {
    "pi": estimate_pi,
    "integrate": integrate,
    "select": select,
    "prime": prime,
    "optimize": optimize,
}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--seed", type=int, help="replay a stored call (default: fresh OS entropy)")
    sub = p.add_subparsers(dest="task", required=True)
    pi = sub.add_parser("pi", help="estimate pi by hit-or-miss")
    pi.add_argument("--samples", type=int, default=10_000)
    pi.add_argument("--tol", type=float, default=0.05)
    it = sub.add_parser("integrate", help="integrate a function by plain Monte Carlo")
    it.add_argument("--fn", choices=sorted(INTEGRANDS), required=True)
    it.add_argument("--samples", type=int, default=4_000)
    it.add_argument("--tol", type=float, default=0.05)
    se = sub.add_parser("select", help="randomized quickselect with a comparison budget")
    se.add_argument("--n", type=int, default=1_001)
    se.add_argument("--k", type=int, default=500)
    se.add_argument("--budget", type=int, default=10_000)
    pr = sub.add_parser("prime", help="Miller-Rabin primality test with random bases")
    pr.add_argument("--n", type=int, required=True)
    pr.add_argument("--rounds", type=int, default=1)
    op = sub.add_parser("optimize", help="random restarts of a local search on Rastrigin")
    op.add_argument("--restarts", type=int, default=10)
    return p


def main(argv: list[str]) -> int:
    if len(argv) == 1:  # one string holding every argument, as a suite passes them
        argv = shlex.split(argv[0])
    args = parser().parse_args(argv)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(8), "big")
    started = time.perf_counter()
    result = TASKS[args.task](random.Random(seed), args)
    elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
    print(json.dumps({"task": args.task, **result, "seed": seed, "elapsed_ms": elapsed_ms}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
