"""`noisefloor scorers`: the table of registered scorers, their params and what each checks, and
for a user's scorer the file and line it is defined at."""

from __future__ import annotations

__all__ = ["render_scorers"]


def render_scorers(rows: list[dict[str, str]]) -> str:
    """Two lines per scorer (name, kind, params; then its doc), and a third for a user's: where
    it comes from."""
    width = max(len(r["name"]) for r in rows)
    kind_w = max(len(r["kind"]) for r in rows)
    pad = f"{'':<{width}}  {'':<{kind_w}}  "
    out = [f"{'scorer':<{width}}  {'kind':<{kind_w}}  params / what it checks"]
    for row in rows:
        out.append(f"{row['name']:<{width}}  {row['kind']:<{kind_w}}  {row['params'] or '-'}")
        out.append(pad + row["doc"])
        if row["source"] != "built-in":
            out.append(pad + f"from {row['source']}")
    return "\n".join(out) + "\n"
