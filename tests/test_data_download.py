"""Download: atomic, checksum-verified fetching (file:// URLs stand in for the network) and verification."""
import dataclasses
import hashlib

import pytest

from gcc_sgcl.data import ALLOW_MODIFIED_ENV, DATASETS, CountMismatchError, RemoteFile
from gcc_sgcl.data import download as dl
from gcc_sgcl.data.download import ChecksumError, download_dataset, ensure_file, fetch_file, main
from gcc_sgcl.fileio import sha256_of

PAYLOAD = b"1\n2 0\n0 1 1\n0 1 0\n"
PAYLOAD_SHA256 = hashlib.sha256(PAYLOAD).hexdigest()


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GCC_SGCL_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "remote" / "IMDBBINARY.txt"
    path.parent.mkdir()
    path.write_bytes(PAYLOAD)
    return path


def _leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.startswith(".")]


def test_fetch_lands_the_file_atomically_with_its_checksum(tmp_path, source):
    dest = tmp_path / "root" / "a" / "IMDBBINARY.txt"
    assert fetch_file(source.as_uri(), dest, PAYLOAD_SHA256, progress=False) == PAYLOAD_SHA256
    assert dest.read_bytes() == PAYLOAD and _leftovers(dest.parent) == []


def test_checksum_mismatch_raises_and_leaves_no_partial_file(tmp_path, source):
    dest = tmp_path / "root" / "IMDBBINARY.txt"
    with pytest.raises(ChecksumError, match=f"sha256 mismatch \\(expected {'0' * 64}, got {PAYLOAD_SHA256}\\)"):
        fetch_file(source.as_uri(), dest, "0" * 64, progress=False)
    assert not dest.exists() and _leftovers(dest.parent) == []


def test_checksum_mismatch_keeps_the_previous_file(tmp_path, source):
    dest = tmp_path / "IMDBBINARY.txt"
    dest.write_bytes(b"old")
    with pytest.raises(ChecksumError):
        fetch_file(source.as_uri(), dest, "0" * 64, progress=False)
    assert dest.read_bytes() == b"old"


def test_unknown_checksum_is_computed_and_reported_unverified(tmp_path, source, capsys):
    remote = RemoteFile("x/IMDBBINARY.txt", source.as_uri(), None)
    ensure_file(remote, tmp_path / "root", progress=False)
    assert f"sha256 {PAYLOAD_SHA256} (unverified" in capsys.readouterr().out


def test_present_file_with_right_checksum_is_not_fetched_again(tmp_path, source, monkeypatch):
    root = tmp_path / "root"
    (root / "x").mkdir(parents=True)
    (root / "x" / "f.txt").write_bytes(PAYLOAD)
    monkeypatch.setattr(dl, "fetch_file", lambda *a, **k: pytest.fail("fetched a file that was present"))
    assert ensure_file(RemoteFile("x/f.txt", source.as_uri(), PAYLOAD_SHA256), root) == root / "x" / "f.txt"


def test_present_file_with_wrong_checksum_is_replaced(tmp_path, source):
    root = tmp_path / "root"
    (root / "x").mkdir(parents=True)
    (root / "x" / "f.txt").write_bytes(b"corrupt")
    ensure_file(RemoteFile("x/f.txt", source.as_uri(), PAYLOAD_SHA256), root, progress=False)
    assert sha256_of(root / "x" / "f.txt") == PAYLOAD_SHA256


def _patch_imdb(monkeypatch, source, **expected):
    spec = DATASETS["imdb-binary"]
    remote = dataclasses.replace(spec.files[0], url=source.as_uri(), sha256=PAYLOAD_SHA256)
    monkeypatch.setitem(DATASETS, "imdb-binary", dataclasses.replace(spec, files=(remote,), expected=expected))


def test_download_dataset_places_files_in_the_registry_layout_and_verifies_counts(tmp_path, source, monkeypatch):
    _patch_imdb(monkeypatch, source, num_graphs=1, num_nodes=2, num_edges=1)
    root = tmp_path / "root"
    (path,) = download_dataset("imdb-binary", root, progress=False)
    assert path == root / "graph_classification/IMDB-BINARY/IMDBBINARY.txt" and path.read_bytes() == PAYLOAD


@pytest.mark.parametrize("allow_modified", ["", "1"])
def test_verification_mismatch_names_the_count_even_when_modified_copies_are_allowed(
    tmp_path, source, monkeypatch, allow_modified
):
    monkeypatch.setenv(ALLOW_MODIFIED_ENV, allow_modified)
    _patch_imdb(monkeypatch, source, num_graphs=1000)
    with pytest.raises(CountMismatchError, match="num_graphs: expected 1000, got 1"):
        download_dataset("imdb-binary", tmp_path / "root", progress=False)


def test_a_present_file_without_checksum_is_fetched_again_once_when_its_counts_differ(tmp_path, source, monkeypatch,
                                                                                    capsys):
    spec = DATASETS["imdb-binary"]
    remote = dataclasses.replace(spec.files[0], url=source.as_uri(), sha256=None)
    monkeypatch.setitem(DATASETS, "imdb-binary", dataclasses.replace(spec, files=(remote,), expected={"num_graphs": 1}))
    dest = tmp_path / "root" / remote.path
    dest.parent.mkdir(parents=True)
    two_graphs = b"2\n2 0\n0 1 1\n0 1 0\n2 1\n0 1 1\n0 1 0\n"
    dest.write_bytes(two_graphs)  # a wrong copy
    download_dataset("imdb-binary", tmp_path / "root", progress=False)
    assert dest.read_bytes() == PAYLOAD and "counts ok" in capsys.readouterr().out
    dest.write_bytes(two_graphs)
    source.write_bytes(two_graphs)  # the source itself differs: fetched once, then the error
    fetched = []
    real_fetch = dl.fetch_file
    monkeypatch.setattr(dl, "fetch_file", lambda *a, **k: fetched.append(a[1]) or real_fetch(*a, **k))
    with pytest.raises(CountMismatchError, match="num_graphs: expected 1, got 2"):
        download_dataset("imdb-binary", tmp_path / "root", progress=False)
    assert fetched == [dest]


def test_cli_fetches_named_datasets_and_rejects_unknown_ones(tmp_path, source, monkeypatch, capsys):
    _patch_imdb(monkeypatch, source, num_graphs=1)
    main(["--data-dir", str(tmp_path / "root"), "imdb-binary"])
    assert "imdb-binary: counts ok" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["synthetic"])
    assert info.value.code == 2 and "not downloadable: synthetic" in capsys.readouterr().err


def test_cli_reports_a_checksum_failure_without_a_traceback(tmp_path, source, monkeypatch, capsys):
    _patch_imdb(monkeypatch, source)
    source.write_bytes(b"tampered")
    with pytest.raises(SystemExit) as info:
        main(["--data-dir", str(tmp_path / "root"), "imdb-binary"])
    assert str(info.value.code).startswith("error: ") and "sha256 mismatch" in str(info.value.code)


def test_registry_checksums_match_the_shared_copies(shared_data):
    checked = 0
    for spec in DATASETS.values():
        for remote in spec.files:
            path = shared_data / remote.path
            if remote.sha256 is not None and path.is_file():
                assert sha256_of(path) == remote.sha256, remote.path
                checked += 1
    assert checked == 25  # every staged file except the five SNAP-derived .txt.gz
