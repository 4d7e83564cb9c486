"""Platform limits stated up front: the Python version check of scripts/_env.sh and a GPU request that the
installed DGL build cannot serve, both with the conditions faked."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from gcc_sgcl.engine import device

ROOT = Path(__file__).resolve().parents[1]


def _fake_python(folder: Path, version: str) -> Path:
    """An executable that reports ``version`` to ``-c`` and records every other call (then fails)."""
    path = folder / f"python{version}"
    path.write_text(
        "#!/usr/bin/env bash\n"
        f'if [ "$1" = -c ]; then echo {version}; exit 0; fi\n'
        f'echo "$@" >> "{folder}/calls.log"\n'
        "exit 1\n"
    )
    path.chmod(0o755)
    return path


def _source_env(tmp_path: Path, python: Path) -> subprocess.CompletedProcess:
    """Source a copy of scripts/_env.sh as the scripts do, in a fresh project folder (no .venv yet) with
    ``PYTHON=python``."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts/_env.sh", project / "scripts/_env.sh")
    shutil.copy(ROOT / "setup.py", project / "setup.py")
    env = {**os.environ, "PYTHON": str(python)}
    return subprocess.run(["bash", "-c", f"source {project}/scripts/_env.sh; echo activated"],
                          env=env, capture_output=True, text=True, timeout=60)


def test_env_refuses_python_3_12_in_one_line_naming_the_fix(tmp_path):
    out = _source_env(tmp_path, _fake_python(tmp_path, "3.12"))
    assert out.returncode != 0 and "activated" not in out.stdout
    (line,) = out.stderr.strip().splitlines()
    assert "Python 3.12" in line and "3.10 or 3.11" in line and "PYTHON=python3.11 bash scripts/" in line
    assert not (tmp_path / "project" / ".venv").exists() and not (tmp_path / "calls.log").exists()


def test_env_creates_the_virtualenv_with_the_chosen_python_3_11(tmp_path):
    out = _source_env(tmp_path, _fake_python(tmp_path, "3.11"))
    assert out.returncode != 0  # the fake cannot create a virtualenv, but it was asked to
    assert (tmp_path / "calls.log").read_text().startswith(f"-m venv {tmp_path / 'project' / '.venv'}")


def test_setup_states_the_supported_python_range():
    assert 'python_requires=">=3.10,<3.12"' in (ROOT / "setup.py").read_text()


@pytest.fixture
def cuda_torch(monkeypatch):
    """torch reports one CUDA device."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)


def test_device_cli_prints_one_error_line_and_exits_2_for_a_missing_gpu(cuda_torch, capsys):
    with pytest.raises(SystemExit) as exit_info:
        device.main(["1"])
    assert exit_info.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: GPU 1 does not exist")


def test_gpu_is_used_when_both_torch_and_dgl_have_cuda(cuda_torch, monkeypatch):
    monkeypatch.setattr(device, "dgl_sees_gpu", lambda index: True)
    assert device.resolve_device("0") == "cuda:0" and device.resolve_device("-1") == "cpu"


def test_gpu_index_beyond_torchs_devices_is_refused(cuda_torch):
    with pytest.raises(device.DeviceError, match="GPU 3 does not exist: torch sees 1"):
        device.resolve_device("3")


def test_without_cuda_a_gpu_index_falls_back_to_cpu(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert device.resolve_device("0") == "cpu"
    assert "running on CPU instead of GPU 0" in capsys.readouterr().err
