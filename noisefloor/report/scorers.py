"""`noisefloor scorers`: the table of registered scorers, their params, what each checks and needs
of its target, and for a user's scorer the file and line it is defined at."""

from __future__ import annotations

__all__ = ["render_scorers"]


def render_scorers(rows: list[dict[str, str]]) -> str:
    """Two lines per scorer (name, kind, params; then its doc), a line of what it needs from its
    target for one that needs something, and one for a user's: where it comes from."""
    width = max(len(r["name"]) for r in rows)
    kind_w = max(len(r["kind"]) for r in rows)
    pad = f"{'':<{width}}  {'':<{kind_w}}  "
    out = [f"{'scorer':<{width}}  {'kind':<{kind_w}}  params / what it checks"]
    for row in rows:
        out.append(f"{row['name']:<{width}}  {row['kind']:<{kind_w}}  {row['params'] or '-'}")
        out.append(pad + row["doc"])
        if row["needs"]:
            out.append(pad + f"needs from its target: {row['needs']}")
        if row["source"] != "built-in":
            out.append(pad + f"from {row['source']}")
    return "\n".join(out) + "\n"
