"""A tiny deterministic question answerer: the program under test in the quickstart.

It prints one JSON object per call; edit ANSWERS to see `noisefloor check` catch the change.
"""

import json
import sys

ANSWERS = {
    "capital of france": ("Paris is the capital of France.", "high"),
}
UNKNOWN = ("I don't know.", "low")


def main() -> None:
    question = sys.argv[1] if len(sys.argv) > 1 else ""
    asked = question.lower()
    answer, confidence = next((a for topic, a in ANSWERS.items() if topic in asked), UNKNOWN)
    print(json.dumps({"question": question, "answer": answer, "confidence": confidence}))


if __name__ == "__main__":
    main()
