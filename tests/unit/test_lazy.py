"""Lazy package attributes: one helper serves the package, `noisefloor.targets` and
`noisefloor.pipeline`; and the public names users import keep their paths."""

from __future__ import annotations

import sys
import types

import pytest

import noisefloor
import noisefloor.pipeline
import noisefloor.targets
from noisefloor.lazy import lazy_exports


@pytest.mark.parametrize(
    "package", [noisefloor, noisefloor.targets, noisefloor.pipeline], ids=lambda p: p.__name__
)
def test_packages_share_the_lazy_helper(package: types.ModuleType) -> None:
    assert package.__getattr__.__qualname__ == "lazy_exports.<locals>.getattr_"
    assert dir(package) == package.__all__
    with pytest.raises(
        AttributeError, match=f"module '{package.__name__}' has no attribute 'nope'"
    ):
        package.__getattr__("nope")


def test_a_loaded_name_is_kept_in_the_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    package = types.ModuleType("lazy_pkg")
    monkeypatch.setitem(sys.modules, "lazy_pkg", package)
    getattr_, dir_ = lazy_exports("lazy_pkg", {"dumps": "json"}, ["dumps"])
    import json

    assert getattr_("dumps") is json.dumps
    assert package.__dict__["dumps"] is json.dumps
    assert dir_() == ["dumps"]


def test_the_names_users_import_keep_their_paths() -> None:
    # a user's dodo.py and a user's scorer name these, as the documentation shows them
    from noisefloor.pipeline import suite_tasks
    from noisefloor.scorers import NotJson, Params, ScoreInput, ScoreResult, scorer

    assert suite_tasks.__module__ == "noisefloor.pipeline.tasks"
    assert issubclass(NotJson, ValueError)
    assert scorer.__self__ is noisefloor.REGISTRY
    assert {Params, ScoreInput, ScoreResult} == {
        noisefloor.Params,
        noisefloor.ScoreInput,
        noisefloor.ScoreResult,
    }
