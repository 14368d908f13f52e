"""Inspect AI tasks the tests run offline: `coins`, right at a rate per sample, each epoch's
outcome drawn from a hash of this file's content, its sample id and its epoch (a program with a
fixed seed: two evals of the same file and epochs agree), or with `seeded=False` afresh at every
call, as a model at a temperature; and `faulty`, which fails in the way its `mode` names."""

import hashlib
import random
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.scorer import Score, Target, accuracy, match, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

#: How often a sample is answered right, unless RATES says otherwise for it.
RATE = 0.9
RATES: dict[str, float] = {}


#: The seed of every draw: this file as it is.
SEED = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def _draw(sample_id: object, epoch: int) -> float:
    digest = hashlib.sha256(f"{SEED}:{sample_id}:{epoch}".encode()).hexdigest()
    return int(digest[:12], 16) / 16**12


@solver
def coin(seeded: bool) -> Solver:
    """Right when the draw (of file, sample id and epoch, or a fresh one) falls under the
    sample's rate."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        draw = _draw(state.sample_id, state.epoch) if seeded else random.random()
        right = draw < state.metadata["rate"]
        answer = "heads" if right else "tails"
        state.output = ModelOutput.from_content(model="coin", content=answer)
        state.output.usage = ModelUsage(input_tokens=2, output_tokens=1, total_tokens=3)
        state.messages.append(state.output.message)
        return state

    return solve


@task
def coins(n: int = 20, seeded: bool = True) -> Task:
    return Task(
        dataset=[
            Sample(
                id=f"c{i:02d}",
                input=f"toss {i}",
                target="heads",
                metadata={"rate": RATES.get(f"c{i:02d}", RATE)},
            )
            for i in range(n)
        ],
        solver=coin(seeded),
        scorer=match(),
    )


@solver
def raising(which: str) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if which == "all" or state.sample_id == "f1":
            raise RuntimeError("the solver broke")
        state.output = ModelOutput.from_content(model="coin", content="heads")
        return state

    return solve


@scorer(metrics=[accuracy()])
def silent() -> object:
    async def score(state: TaskState, target: Target) -> Score | None:
        return None

    return score


@task
def faulty(mode: str) -> Task:
    if mode == "task":
        raise ValueError("the task could not be made")
    return Task(
        dataset=[Sample(id=f"f{i}", input=f"q{i}", target="heads") for i in range(3)],
        solver=raising("all" if mode == "all" else "one" if mode == "one" else "none"),
        scorer=silent() if mode == "silent" else match(),
    )
