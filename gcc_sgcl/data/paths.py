"""Where datasets and the parsed-graph cache live."""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

DATA_ENV = "GCC_SGCL_DATA"
CACHE_ENV = "GCC_SGCL_CACHE"


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data root: ``data_dir`` if given, else ``$GCC_SGCL_DATA``, else ``./data`` (relative to the cwd); one that
    exists as something other than a folder is a ``NotADirectoryError`` naming where it came from."""
    root = Path(data_dir) if data_dir is not None else Path(os.environ.get(DATA_ENV) or "data")
    if root.exists() and not root.is_dir():
        given = "--data-dir" if data_dir is not None else f"${DATA_ENV}" if os.environ.get(DATA_ENV) else "./data"
        raise NotADirectoryError(f"the data root {root} ({given}) is a file, not a folder: give the folder that holds "
                                 f"node_classification/, graph_classification/, ...")
    return root


def resolve_cache_dir() -> Path:
    """The parsed-graph cache: ``$GCC_SGCL_CACHE``, else ``./data/cache``."""
    return Path(os.environ.get(CACHE_ENV) or Path("data") / "cache")


class DatasetNotFoundError(FileNotFoundError):
    """A dataset's files are absent from the data root; the message says how to fetch them."""

    def __init__(self, name: str, data_dir: Path, expected: Sequence[str]):
        self.name = name
        self.data_dir = data_dir
        self.expected = tuple(expected)
        data_dir = data_dir.resolve()
        super().__init__(
            f"dataset {name!r} not found under {data_dir}: expected "
            + ", ".join(self.expected)
            + f". Fetch it with `bash scripts/download.sh --data-dir {data_dir} {name}` "
            f"(or `python -m gcc_sgcl.data.download --data-dir {data_dir} {name}`)."
        )

    def __str__(self) -> str:
        return self.args[0]

