"""Answer a question about the Meadowbot M2 from its handbook: BM25 retrieval, then a local model.

Prints one JSON object: the question, the model's answer, and the passages it was given as
citations, each with its document id and BM25 score. `--retrieve-only` skips the model.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import Stemmer

HANDBOOK = Path(__file__).resolve().with_name("handbook.jsonl")
DEFAULT_URL = "http://127.0.0.1:8765/v1"
DEFAULT_MODEL = "qwen2.5-coder-0.5b"
REFUSAL = "I don't know."
SYSTEM = (
    "You answer questions about the Meadowbot M2 robot lawn mower. Use only the numbered "
    "passages from its handbook that the user sends. Answer in one or two short sentences. "
    f"If the passages do not contain the answer, reply exactly: {REFUSAL}"
)
_STEMMER = Stemmer.Stemmer("english")


@dataclass(frozen=True)
class Passage:
    """One handbook document, as retrieved for a question."""

    doc_id: str
    title: str
    text: str
    score: float


class Retriever:
    """A BM25 index over the handbook's documents (title and text), built once at start."""

    def __init__(self, path: Path = HANDBOOK) -> None:
        lines = path.read_text(encoding="utf-8").splitlines()
        self.docs: list[dict[str, str]] = [json.loads(line) for line in lines if line.strip()]
        corpus = [f"{doc['title']}. {doc['text']}" for doc in self.docs]
        self.index = bm25s.BM25()
        self.index.index(self._tokens(corpus), show_progress=False)

    @staticmethod
    def _tokens(texts: list[str]) -> bm25s.tokenization.Tokenized:
        """Lower-cased, stemmed words ("charges" and "charging" meet), common words dropped."""
        return bm25s.tokenize(
            texts, stopwords="en_plus", stemmer=_STEMMER.stemWords, show_progress=False
        )

    def search(self, question: str, k: int) -> list[Passage]:
        """The `k` best documents for `question`, best first; documents scoring 0 are left out."""
        tokens = self._tokens([question])
        if not tokens.vocab:
            return []
        found, scores = self.index.retrieve(tokens, k=min(k, len(self.docs)), show_progress=False)
        passages = []
        for position, score in zip(found[0], scores[0], strict=True):
            if score > 0:
                doc = self.docs[int(position)]
                passages.append(Passage(doc["id"], doc["title"], doc["text"], float(score)))
        return passages


def prompt_for(question: str, passages: list[Passage]) -> str:
    """The user message: the numbered passages, then the question."""
    if not passages:
        return f"(no passage matched)\n\nQuestion: {question}"
    blocks = [f"[{n}] {p.title}: {p.text}" for n, p in enumerate(passages, start=1)]
    return "Passages:\n" + "\n".join(blocks) + f"\n\nQuestion: {question}"


def ask_model(args: argparse.Namespace, question: str, passages: list[Passage]) -> dict[str, Any]:
    """POST one chat completion to the OpenAI-compatible endpoint; the parsed response."""
    body = {
        "model": args.model,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": prompt_for(question, passages)},
        ],
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        # -1: a fresh random seed per request (llama-cpp-python otherwise replays its seed chain)
        "seed": -1,
    }
    request = urllib.request.Request(
        args.base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=args.timeout) as response:
        result: dict[str, Any] = json.load(response)
    return result


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("question", help="the question to answer")
    parser.add_argument("-k", type=int, default=3, help="passages to retrieve (default 3)")
    parser.add_argument("--base-url", default=DEFAULT_URL, help=f"default {DEFAULT_URL}")
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"default {DEFAULT_MODEL}")
    parser.add_argument("--temperature", type=float, default=0.8)
    parser.add_argument("--max-tokens", type=int, default=80)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    parser.add_argument(
        "--retrieve-only", action="store_true", help="print the citations; call no model"
    )
    args = parser.parse_args(argv)
    if args.k < 1:
        parser.error("-k must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    passages = Retriever().search(args.question, args.k)
    result: dict[str, Any] = {"question": args.question}
    if not args.retrieve_only:
        try:
            response = ask_model(args, args.question, passages)
            choice = response["choices"][0]
            answer = choice["message"]["content"]
        except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError) as exc:
            print(f"ask.py: no answer from {args.base_url}: {exc}", file=sys.stderr)
            return 1
        result["answer"] = (answer or "").strip()
        result["model"] = response.get("model")
        result["finish_reason"] = choice.get("finish_reason")
    result["citations"] = [{"doc_id": p.doc_id, "score": round(p.score, 4)} for p in passages]
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
