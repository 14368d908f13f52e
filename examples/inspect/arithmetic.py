"""An Inspect AI task of 20 arithmetic questions, scored by Inspect's `match()`.

Offline (the default), a simulated model answers each sample right at the rate its metadata
gives (`RATE`, or the sample's entry in `RATES`), with fresh randomness at every epoch: a flaky
model whose flakiness is known. With `-T simulated=false` the same samples go to the model the
eval names, e.g. the local model of examples/local-llm through Inspect's OpenAI-compatible
provider (local.yaml).
"""

import random

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.scorer import match
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver, system_message

#: How often the simulated model is right, unless RATES says otherwise for a sample.
RATE = 0.9
#: A sample's own rate, by id.
RATES: dict[str, float] = {}

SYSTEM = "Answer with the number only, nothing else."

QUESTIONS = [
    ("add_1", "17 + 25", 42),
    ("add_2", "38 + 47", 85),
    ("add_3", "123 + 456", 579),
    ("add_4", "99 + 1", 100),
    ("add_5", "250 + 250", 500),
    ("sub_1", "100 - 37", 63),
    ("sub_2", "81 - 19", 62),
    ("sub_3", "1000 - 1", 999),
    ("sub_4", "64 - 32", 32),
    ("sub_5", "45 - 46", -1),
    ("mul_1", "7 * 8", 56),
    ("mul_2", "12 * 12", 144),
    ("mul_3", "37 * 23", 851),
    ("mul_4", "9 * 11", 99),
    ("mul_5", "25 * 4", 100),
    ("div_1", "144 / 12", 12),
    ("div_2", "81 / 9", 9),
    ("div_3", "1000 / 8", 125),
    ("div_4", "56 / 7", 8),
    ("div_5", "90 / 15", 6),
]


@solver
def simulated_model() -> Solver:
    """Answers right at the sample's `rate`, else one off; reports the tokens it would take."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        right = random.random() < state.metadata["rate"]
        answer = state.target.text if right else str(int(state.target.text) + 1)
        state.output = ModelOutput.from_content(model="simulated", content=answer)
        prompt = len(state.input_text.split())
        state.output.usage = ModelUsage(
            input_tokens=prompt, output_tokens=1, total_tokens=prompt + 1
        )
        state.messages.append(state.output.message)
        return state

    return solve


@task
def arithmetic(simulated: bool = True) -> Task:
    """What is X? for 20 small sums, products and quotients; `match()` reads the number."""
    return Task(
        dataset=[
            Sample(
                id=sample_id,
                input=f"What is {question}?",
                target=str(answer),
                metadata={"rate": RATES.get(sample_id, RATE)},
            )
            for sample_id, question, answer in QUESTIONS
        ],
        solver=simulated_model() if simulated else [system_message(SYSTEM), generate()],
        scorer=match(numeric=True),
    )
