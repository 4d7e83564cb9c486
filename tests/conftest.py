"""Shared fixtures."""
import os
from pathlib import Path

import pytest

import gcc_sgcl  # noqa: F401  first: registers dgl 2.x's GraphBolt stand-in before test modules import dgl

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The read-only benchmark copy at ``../shared/data`` (next to the repository); skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data not present")
    return SHARED_DATA


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Parsed datasets and views built by tests go to a temporary cache, never to the repository's data/."""
    previous = os.environ.get("GCC_SGCL_CACHE")
    os.environ["GCC_SGCL_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if previous is None:
        os.environ.pop("GCC_SGCL_CACHE", None)
    else:
        os.environ["GCC_SGCL_CACHE"] = previous
