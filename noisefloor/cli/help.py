"""The layout of each command's `--help`: the options people use most first, the store's and the
harness's plumbing after them, the options every command takes last, then two examples and the
exit codes.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Iterator

__all__ = ["EXAMPLES", "EXIT_CODES", "HelpFormatter", "arrange"]

EXIT_CODES = """exit codes:
  0    nothing regressed
  1    a case regressed (with --strict, also an inconclusive one)
  2    a case is broken: the target no longer produces valid results
  3    the harness, its configuration or its invocation is wrong
  130  interrupted by Ctrl-C (SIGINT); finished samples are kept
  143  stopped by SIGTERM; finished samples are kept
"""

#: Two examples of each command (and subcommand), each with what it does.
EXAMPLES: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    "run": (
        ("noisefloor run suite.yaml", "sample every case at the suite's repeats"),
        ("noisefloor run suite.yaml --repeats 20 --set-baseline", "and make it the baseline"),
    ),
    "check": (
        ("noisefloor check suite.yaml", "compare with the baseline (the first check adopts one)"),
        ("noisefloor check suite.yaml --format markdown --output report.md", "for a pull request"),
    ),
    "ab": (
        ("noisefloor ab suite.yaml --baseline-ref main", "the working tree against main"),
        ("noisefloor ab suite.yaml --baseline-ref HEAD~1 --repeats 20", "a fixed design of 20"),
    ),
    "rescore": (
        ("noisefloor rescore suite.yaml", "the newest run, scored with the suite's scorers"),
        ("noisefloor rescore suite.yaml RUN --format json", "a given run, as JSON"),
    ),
    "diff": (
        ("noisefloor diff", "the newest run against its suite's baseline"),
        ("noisefloor diff RUN --baseline nightly -v", "against a label, with the statistics"),
    ),
    "report": (
        ("noisefloor report --html report.html", "the newest run's page"),
        ("noisefloor report RUN --baseline RUN2 --html report.html", "two given runs"),
    ),
    "baseline": (
        ("noisefloor baseline show", "every suite's baseline"),
        ("noisefloor baseline deepen suite.yaml --repeats 200", "a deeper baseline"),
    ),
    "baseline set": (
        ("noisefloor baseline set RUN", "make RUN its suite's baseline"),
        ("noisefloor baseline set nightly", "the newest run of a label"),
    ),
    "baseline show": (
        ("noisefloor baseline show", "every suite's baseline"),
        ("noisefloor baseline show --remote s3://team/nf", "and the remote's on every branch"),
    ),
    "baseline deepen": (
        ("noisefloor baseline deepen suite.yaml", "to the suite's baseline_repeats (or 100)"),
        ("noisefloor baseline deepen suite.yaml --repeats 400 --jobs 8", "deeper, 8 at once"),
    ),
    "runs": (
        ("noisefloor runs", "every stored run, newest first"),
        ("noisefloor runs suite.yaml --format json", "one suite's, as JSON"),
    ),
    "show": (
        ("noisefloor show", "the newest run's outputs"),
        ("noisefloor show RUN --case capital-of-france", "one case's"),
    ),
    "scorers": (
        ("noisefloor scorers", "the built-in scorers"),
        ("noisefloor scorers suite.yaml", "and the suite's own"),
    ),
    "schema": (
        ("noisefloor schema > suite.schema.json", "for an editor's YAML plugin"),
        ("noisefloor schema --report", "the JSON report's schema"),
    ),
    "record": (
        ("noisefloor record suite.yaml --label main", "sample and label the run"),
        ("noisefloor record suite.yaml --label main --replace", "start the label over"),
    ),
    "compare": (
        ("noisefloor compare --baseline main --current pr", "two labels, as check judges"),
        ("noisefloor compare --baseline main --current pr --rule wilson", "the triage table"),
    ),
    "history": (
        ("noisefloor history capital-of-france", "a case across runs"),
        ("noisefloor history --html history.html", "every case over time, one page"),
    ),
    "explain": (
        ("noisefloor explain capital-of-france", "the newest run's case against the baseline"),
        ("noisefloor explain capital-of-france RUN --format markdown", "a given run's"),
    ),
    "ledger": (
        ("noisefloor ledger rebuild", "rebuild the index from the samples"),
        ("noisefloor --root ci-store ledger rebuild", "another store's"),
    ),
    "ledger rebuild": (
        ("noisefloor ledger rebuild", "rebuild the index from the samples"),
        ("noisefloor --root ci-store ledger rebuild", "another store's"),
    ),
    "store": (
        ("noisefloor store verify", "read every file; report what is corrupt"),
        ("noisefloor store push", "every run and baseline to the remote"),
    ),
    "store verify": (
        ("noisefloor store verify", "read every file; report what is corrupt"),
        ("noisefloor store verify --repair", "and rebuild or retake what can be"),
    ),
    "store push": (
        ("noisefloor store push --remote s3://team/nf", "every run and baseline"),
        ("noisefloor store push suite.yaml", "one suite's, to its `defaults.remote`"),
    ),
    "store pull": (
        ("noisefloor store pull suite.yaml", "the suite's baseline, for --offline"),
        ("noisefloor store pull --all --remote s3://team/nf", "everything the remote holds"),
    ),
    "import": (
        ("noisefloor import old-store --suite suite.yaml", "a public-noisefloor store"),
        ("noisefloor --root .noisefloor import old --suite suite.yaml", "into a given store"),
    ),
    "plan": (
        ("noisefloor plan suite.yaml", "what the suite's check can detect"),
        ("noisefloor plan --repeats 20 --cases 50", "a suite yet to be written"),
    ),
}

#: The options a command's help lists first, in this order, when it has them: -v and -q, which
#: every command takes, then the ones its users reach for.
LEAD = (
    "--verbose",
    "--quiet",
    "--repeats",
    "--format",
    "--output",
    "--html",
    "--baseline",
    "--current",
    "--baseline-ref",
    "--suite",
    "--case",
    "--label",
    "--set-baseline",
    "--jobs",
    "--strict",
    "--require-baseline",
    "--adopt",
)
#: The options of where samples are taken and kept: listed after the command's own.
PLUMBING = (
    "--executor",
    "--lock-timeout",
    "--fresh",
    "--remote",
    "--offline",
    "--branch",
    "--baseline-branch",
    "--allow-target-change",
    "--continue-on-scorer-error",
)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's, but a description or epilog keeps its indented lines (examples, exit codes)
    and wraps each of its other lines alone."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for line in text.splitlines():
            if not line.strip() or line.startswith(" ") or line.endswith(":"):
                out.append(indent + line if line.strip() else "")
            else:
                out.extend(
                    textwrap.wrap(line, width, initial_indent=indent, subsequent_indent=indent)
                )
        return "\n".join(out)


def _epilog(name: str) -> str:
    examples = EXAMPLES.get(name)
    if examples is None:
        return EXIT_CODES
    lines = ["examples:"]
    for command, does in examples:
        lines += [f"  {command}", f"      {does}"]
    return "\n".join(lines) + "\n\n" + EXIT_CODES


def _leaves(
    parser: argparse.ArgumentParser, name: str
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _leaves(sub, f"{name} {sub_name}")


def _flag(action: argparse.Action) -> str:
    return next((o for o in action.option_strings if o.startswith("--")), "")


def arrange(parser: argparse.ArgumentParser, name: str) -> None:
    """Lay out the help of a command (and of its subcommands) named `name`: a short usage line,
    the leading options first, the plumbing in a group after the command's own groups, the
    options of every command last, then its examples and the exit codes."""
    # argparse keeps a parser's groups and their actions in lists of its own: moving actions
    # between them is the one way to order its help, as docs/references.py reads them
    for path, p in _leaves(parser, name):
        groups = p._action_groups
        last = [g for g in groups if g.title == "every command"]
        moved = [g for g in groups if g is not p._positionals]
        every = [a for g in moved for a in g._group_actions]
        lead = sorted((a for a in every if _flag(a) in LEAD), key=lambda a: LEAD.index(_flag(a)))
        plumbing = [a for a in every if _flag(a) in PLUMBING]
        for group in moved:
            group._group_actions[:] = [
                a for a in group._group_actions if a not in lead and a not in plumbing
            ]
        own = p._optionals._group_actions
        helps = [a for a in own if isinstance(a, argparse._HelpAction)]
        own[:] = helps + lead + [a for a in own if a not in helps]
        if plumbing:
            group = p.add_argument_group(
                "where samples are taken and kept", "The executor, the store's lock, the remote."
            )
            group._group_actions.extend(plumbing)
        groups[:] = [g for g in groups if g not in last] + last
        words = [_positional(a) for a in p._positionals._group_actions]
        required = [
            f"{a.option_strings[-1]} {a.metavar or a.dest.upper()}"
            for a in p._actions
            if a.required and a.option_strings
        ]
        p.usage = " ".join([p.prog, *words, *required, "[options]"])
        p.formatter_class = HelpFormatter
        p.epilog = _epilog(path)


def _positional(action: argparse.Action) -> str:
    """A positional argument as the usage line shows it: `SUITE`, `[RUN]`, `ACTION ...`."""
    word = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    if isinstance(action, argparse._SubParsersAction):
        return f"{word} ..."
    if action.nargs == "?":
        return f"[{word}]"
    if action.nargs in ("*", "+"):
        return f"[{word} ...]" if action.nargs == "*" else f"{word} ..."
    return word
