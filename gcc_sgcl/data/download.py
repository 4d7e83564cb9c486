"""Fetch datasets from their original public URLs into the data-root layout, then check them.

    python -m gcc_sgcl.data.download [--data-dir DIR] [--no-verify] NAME... | all

Each file is streamed to a temporary file next to its destination, hashed on the way, and renamed into
place only when its sha256 matches the registry (files whose source publishes no checksum are kept and
their sha256 printed as unverified). Files already present with the right checksum are skipped. After
fetching, each dataset is loaded and its counts compared with the registry's expected counts.
"""
from __future__ import annotations

import argparse
import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import requests
from tqdm import tqdm

from gcc_sgcl.cli import PlainHelpParser, user_errors
from gcc_sgcl.config import InputConfig
from gcc_sgcl.data.graphs import check_simple_undirected
from gcc_sgcl.data.load import CountMismatchError, check_expected_counts, graphs_of, load_any, summarize
from gcc_sgcl.data.paths import resolve_data_dir
from gcc_sgcl.data.registry import DATASETS, RemoteFile, get_spec
from gcc_sgcl.fileio import atomic_target, sha256_of
from gcc_sgcl.settings import Settings, add_arguments, from_args, setting

_CHUNK = 1 << 20


class ChecksumError(ValueError):
    """A downloaded file's sha256 differs from the registry's; nothing was written."""


@contextmanager
def _open_stream(url: str) -> Iterator[tuple[Iterator[bytes], int | None]]:
    """``(chunks, size or None)`` of an ``http(s)://`` or ``file://`` URL."""
    parsed = urlparse(url)
    if parsed.scheme == "file":
        path = Path(url2pathname(parsed.path))
        with open(path, "rb") as f:
            yield iter(lambda: f.read(_CHUNK), b""), path.stat().st_size
    else:
        with requests.get(url, stream=True, timeout=60) as response:
            response.raise_for_status()
            size = response.headers.get("Content-Length")
            yield response.iter_content(_CHUNK), int(size) if size else None


def fetch_file(url: str, dest: Path, sha256: str | None, progress: bool = True) -> str:
    """Download ``url`` to ``dest`` atomically and return its sha256.

    A mismatch with a known ``sha256`` raises :class:`ChecksumError` and leaves ``dest`` untouched.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with atomic_target(dest) as tmp, open(tmp, "wb") as out, _open_stream(url) as (chunks, size):
        with tqdm(total=size, unit="B", unit_scale=True, desc=dest.name, disable=not progress) as bar:
            for chunk in chunks:
                out.write(chunk)
                digest.update(chunk)
                bar.update(len(chunk))
        got = digest.hexdigest()
        if sha256 is not None and got != sha256:
            raise ChecksumError(f"{url}: sha256 mismatch (expected {sha256}, got {got}); {dest} not written")
    return got


def ensure_file(remote: RemoteFile, data_dir: Path, progress: bool = True) -> Path:
    """``remote`` under ``data_dir``, fetched unless already present with the right checksum."""
    dest = data_dir / remote.path
    if dest.is_file():
        if remote.sha256 is None:
            print(f"{dest}: present (no published checksum to compare)")
            return dest
        if sha256_of(dest) == remote.sha256:
            print(f"{dest}: present, sha256 ok")
            return dest
        print(f"{dest}: sha256 differs from the registry, fetching again")
    got = fetch_file(remote.url, dest, remote.sha256, progress=progress)
    if remote.sha256 is None:
        print(f"{dest}: sha256 {got} (unverified: the source publishes no checksum)")
    else:
        print(f"{dest}: fetched, sha256 ok")
    return dest


def verify_dataset(name: str, data_dir: Path) -> dict[str, int]:
    """Load ``name`` and compare its :func:`summarize` counts with the registry's (even when
    ``$GCC_SGCL_ALLOW_MODIFIED_DATA`` is set); returns the counts."""
    spec = get_spec(name)
    data = load_any(name, data_dir)
    for i, g in enumerate(graphs_of(data)):
        check_simple_undirected(g, f"dataset {name!r} graph {i}")
    check_expected_counts(spec, data, spec.locate(data_dir))
    return summarize(data)


def download_dataset(name: str, data_dir: str | os.PathLike | None = None, verify: bool = True,
                     progress: bool = True) -> list[Path]:
    """Fetch every file of dataset ``name`` into the data root, then (``verify``) check its counts; files present
    without a published checksum are fetched again once if the counts differ."""
    spec = get_spec(name)
    if not spec.files:
        raise ValueError(f"dataset {name!r} is built in and has nothing to download")
    root = resolve_data_dir(data_dir)
    kept = [r for r in spec.files if r.sha256 is None and (root / r.path).is_file()]
    paths = [ensure_file(remote, root, progress=progress) for remote in spec.files]
    if verify and spec.expected:
        try:
            counts = verify_dataset(name, root)
        except CountMismatchError:
            if not kept:
                raise
            # a file without a published checksum was kept because it was present: its counts are the only check
            print(f"{name}: counts differ from the registry; fetching {', '.join(r.path for r in kept)} again")
            for remote in kept:
                fetch_file(remote.url, root / remote.path, None, progress=progress)
            counts = verify_dataset(name, root)
        print(f"{name}: counts ok {counts}")
    return paths


def downloadable() -> list[str]:
    """Names of the registered datasets that have files to fetch."""
    return sorted(name for name, spec in DATASETS.items() if spec.files)


def sources() -> str:
    """The downloadable datasets by role, each with where its files come from (``--help``'s epilog)."""
    lines = ["downloadable datasets (name: where its files come from):"]
    for kind in ("pretrain", "node", "graph", "similarity"):
        names = [n for n in downloadable() if DATASETS[n].kind == kind]
        if names:
            lines.append(f"  {kind}:")
            lines += [f"    {n}: {', '.join(dict.fromkeys(_host(f.url) for f in DATASETS[n].files))}" for n in names]
    return "\n".join(lines)


def _host(url: str) -> str:
    """The folder a file is fetched from (``https://host/path/`` without the file name)."""
    return url.rsplit("/", 1)[0] + "/"


@dataclass
class DownloadConfig(Settings):
    """Dataset download (``scripts/download.sh``)."""

    names: list[str] = setting(help="'all' or downloadable dataset names (listed below)", positional=True)
    verify: bool = setting(True, "load each dataset afterwards and check its counts")


def command_line() -> argparse.ArgumentParser:
    """The command line: :class:`DownloadConfig` and the data root."""
    p = PlainHelpParser(prog="python -m gcc_sgcl.data.download", description=__doc__.split("\n")[0],
                        epilog=sources(), formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p, DownloadConfig)
    add_arguments(p, InputConfig, only=("data_dir",))
    return p


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point (see the module docstring)."""
    p = command_line()
    args = p.parse_args(argv)
    request, data_dir = from_args(DownloadConfig, args), from_args(InputConfig, args).data_dir
    names = downloadable() if request.names == ["all"] else request.names
    unknown = [n for n in names if n not in downloadable()]
    if unknown:
        p.error(f"not downloadable: {', '.join(unknown)}; choose from: all, {', '.join(downloadable())}")
    with user_errors():
        for name in names:
            download_dataset(name, data_dir, verify=request.verify)


if __name__ == "__main__":
    main()
