"""The docstring examples of gcc_sgcl.augment run and hold."""
import doctest
import importlib

import pytest

MODULES = [
    "align", "base", "config", "crop", "filter", "functional", "global_embedding", "pipeline", "spectral_order"
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name):
    module = importlib.import_module(f"gcc_sgcl.augment.{name}")
    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0
