"""The options of a command that works with a remote store: the remote's URL, --offline, and the
branch of its baseline pointers a command moves or compares with.
"""

from __future__ import annotations

import argparse

__all__ = ["branch_option", "remote_options"]


def remote_options(parser: argparse.ArgumentParser) -> None:
    """--remote URL and --offline."""
    parser.add_argument(
        "--remote",
        metavar="URL",
        help="the store a team shares, of which the local store is the working copy: "
        "s3://BUCKET/PREFIX (an S3-compatible server's endpoint from AWS_ENDPOINT_URL), "
        "gs://BUCKET/PREFIX, az://CONTAINER/PREFIX or file:///SHARED/PATH "
        "(env NOISEFLOOR_REMOTE; suite `defaults.remote`)",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="use the local store alone, whatever remote is set",
    )


def branch_option(parser: argparse.ArgumentParser, help_text: str, dest: str) -> None:
    """--branch or --baseline-branch: a branch of the remote's baseline pointers."""
    flag = "--" + dest.replace("_", "-")
    parser.add_argument(flag, metavar="BRANCH", dest=dest, help=help_text)
