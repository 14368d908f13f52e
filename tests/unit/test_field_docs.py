"""Field docstrings read on demand: the descriptions pydantic's `use_attribute_docstrings` gave."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from noisefloor.field_docs import describe


class _Nested(BaseModel):
    model_config = ConfigDict(defer_build=True)

    deep: int = 0
    """Held by another model."""


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kept: str = ""
    """Declared by the base.
With a line further left than the class."""
    redeclared: int = 0
    """The base's word, which a redeclaration without a docstring drops."""


class _Model(_Base):
    # a comment between fields
    plain: int = 1
    """A plain field."""
    given: int = Field(default=2, description="Given with Field.")
    """A docstring that Field's description wins over."""
    redeclared: int = 1
    bare: int = 3
    nested: _Nested | None = None
    listed: list[_Nested] = []


class _Reference(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    kept: str = ""
    """Declared by the base.
With a line further left than the class."""
    redeclared: int = 0
    """The base's word, which a redeclaration without a docstring drops."""


def _descriptions(model: type[BaseModel]) -> dict[str, Any]:
    return {name: info.description for name, info in model.model_fields.items()}


def test_descriptions_are_those_pydantic_read_from_the_class_body() -> None:
    assert _Model.model_fields["plain"].description is None  # nothing read at import
    model = describe(_Model)

    assert _descriptions(model) == {
        "kept": "Declared by the base.\nWith a line further left than the class.",
        "plain": "A plain field.",
        "given": "Given with Field.",
        "redeclared": None,
        "bare": None,
        "nested": None,
        "listed": None,
    }
    assert _descriptions(_Nested) == {"deep": "Held by another model."}
    assert _descriptions(describe(_Base)) == _descriptions(_Reference)


def test_a_built_model_is_rebuilt_so_that_its_schema_carries_them() -> None:
    class Built(BaseModel):
        value: int = 0
        """Read from a class defined in a function."""

    assert "description" not in Built.model_json_schema()["properties"]["value"]
    schema = describe(Built).model_json_schema()
    assert (
        schema["properties"]["value"]["description"] == "Read from a class defined in a function."
    )
    nested = describe(_Model).model_json_schema()["$defs"]["_Nested"]["properties"]["deep"]
    assert nested["description"] == "Held by another model."
