"""The JSON Schema of suite files, every registered kind's `target` and every scorer's entry
included, for editors (`noisefloor schema`).
"""

from __future__ import annotations

from typing import Any

from noisefloor.field_docs import describe
from noisefloor.scorers.registry import REGISTRY
from noisefloor.suite.model import suite_model

__all__ = ["suite_json_schema"]


def suite_json_schema() -> dict[str, Any]:
    """The JSON Schema of suite files, scorer entries included, for editors."""
    schema = describe(suite_model()).model_json_schema()
    scorer_schema = REGISTRY.json_schema()
    defs = schema.setdefault("$defs", {})
    defs["ScorerEntry"] = scorer_schema
    for model in ("CaseSpec", "Defaults"):
        props = defs.get(model, {}).get("properties", {})
        if "scorers" in props:
            props["scorers"] = {
                "type": "array",
                "items": {"$ref": "#/$defs/ScorerEntry"},
                "description": props["scorers"].get("description", ""),
            }
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "noisefloor suite"
    return schema
