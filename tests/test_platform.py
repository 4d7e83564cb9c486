"""Platform support stated up front, with the conditions faked: the interpreter check and install modes of
scripts/_env.sh, the dgl pins of setup.py, the GraphBolt stand-in for dgl 2.x and the GPU index check."""
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import setuptools
import torch
from packaging.requirements import Requirement

from gcc_sgcl import _dgl_compat
from gcc_sgcl.engine import device

ROOT = Path(__file__).resolve().parents[1]


def _fake_python(folder: Path, version: str, torch_version: str | None = None, pip_fails: bool = False,
                 pip_seconds: int = 0) -> Path:
    """An interpreter stand-in: reports ``version`` (and ``torch_version``, or fails to import torch), runs other
    ``-c`` snippets with the real Python, and for ``-m venv … DIR`` records the call and makes DIR a virtualenv
    whose ``pip`` and ``python`` only record their arguments in ``calls.log`` (and fail with ``pip_fails``), taking
    ``pip_seconds`` to do it."""
    recorder = (f'#!/usr/bin/env bash\necho "$(basename "$0") $*" >> "{folder}/calls.log"\nsleep {pip_seconds}\n'
                f'exit {int(pip_fails)}\n')
    torch_line = f"echo {torch_version}; exit 0" if torch_version else "exit 1"
    path = folder / f"python{version}"
    path.write_text(
        "#!/usr/bin/env bash\n"
        f'if [ "$1" = -c ] && [[ "$2" == *version_info* ]]; then echo {version}; exit 0; fi\n'
        f'if [ "$1" = -c ] && [[ "$2" == *"import torch"* ]]; then {torch_line}; fi\n'
        f'if [ "$1" = -c ]; then exec "{sys.executable}" "$@"; fi\n'
        f'echo "python $*" >> "{folder}/calls.log"\n'
        'if [ "$1 $2" = "-m venv" ]; then\n'
        '  dir="${@: -1}"; mkdir -p "$dir/bin"\n'
        f"  printf '%s' '{recorder}' > \"$dir/bin/pip\"; cp \"$dir/bin/pip\" \"$dir/bin/python\"\n"
        '  chmod +x "$dir/bin/pip" "$dir/bin/python"; exit 0\n'
        "fi\n"
        "exit 1\n"
    )
    path.chmod(0o755)
    return path


def _source_env(tmp_path: Path, python: Path, inside_if: bool = False, **env: str) -> subprocess.CompletedProcess:
    """Source a copy of scripts/_env.sh as the scripts do (or as the condition of an ``if``, where bash ignores
    ``set -e``), in a fresh project folder (no .venv yet) with ``PYTHON=python`` and the mode variables ``env``."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts/_env.sh", project / "scripts/_env.sh")
    shutil.copy(ROOT / "setup.py", project / "setup.py")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GCC_SGCL_")}
    source = f"source {project}/scripts/_env.sh"
    command = f"if ({source}); then echo activated; fi" if inside_if else f"{source}; echo activated"
    return subprocess.run(["bash", "-c", command],
                          env={**clean, "PYTHON": str(python), **env}, capture_output=True, text=True, timeout=60)


def _calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_env_refuses_python_3_13_in_one_line_naming_the_fix(tmp_path):
    out = _source_env(tmp_path, _fake_python(tmp_path, "3.13"))
    assert out.returncode != 0 and "activated" not in out.stdout
    (line,) = out.stderr.strip().splitlines()
    assert "Python 3.13" in line and "3.10, 3.11 or 3.12" in line and "PYTHON=python3.12 bash scripts/" in line
    assert not (tmp_path / "project" / ".venv").exists() and _calls(tmp_path) == []


@pytest.mark.parametrize("version", ["3.10", "3.11", "3.12"])
def test_env_by_default_makes_a_fresh_virtualenv_with_torch_2_13_from_the_registry(tmp_path, version):
    out = _source_env(tmp_path, _fake_python(tmp_path, version, torch_version="2.11.0+cu130"))
    assert out.returncode == 0 and "activated" in out.stdout, out.stderr
    venv = tmp_path / "project" / ".venv"
    assert _calls(tmp_path) == [
        f"python -m venv {venv}",
        f"pip install -q --disable-pip-version-check -e {tmp_path / 'project'}[test] torch==2.13.0",
    ]


def test_system_torch_mode_sees_the_system_packages_and_installs_only_what_is_missing(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    venv = tmp_path / "elsewhere"
    out = _source_env(tmp_path, _fake_python(tmp_path, "3.12", torch_version="2.11.0+cu130"),
                      GCC_SGCL_SYSTEM_TORCH="1", GCC_SGCL_WHEELS=str(wheels), GCC_SGCL_VENV=str(venv))
    assert out.returncode == 0, out.stderr
    assert "system torch 2.11.0+cu130" in out.stderr
    assert _calls(tmp_path) == [  # no torch requirement: pip keeps the system's; no index: only the folder
        f"python -m venv --system-site-packages {venv}",
        f"pip install -q --disable-pip-version-check --no-index --find-links {wheels} -e {tmp_path / 'project'}[test]",
    ]
    assert (venv / ".setup-stamp").exists() and not (tmp_path / "project" / ".venv").exists()


def test_a_long_install_says_every_heartbeat_that_it_is_still_working(tmp_path):
    out = _source_env(tmp_path, _fake_python(tmp_path, "3.11", pip_seconds=4), GCC_SGCL_HEARTBEAT="1")
    assert out.returncode == 0 and "activated" in out.stdout
    beats = [line for line in out.stderr.splitlines() if line.startswith("[env] still installing")]
    assert len(beats) >= 2 and "usually 2-10 minutes" in beats[0]


def test_a_failed_install_stops_even_when_sourced_inside_an_if_and_leaves_no_stamp(tmp_path):
    out = _source_env(tmp_path, _fake_python(tmp_path, "3.12", pip_fails=True), inside_if=True)
    assert "activated" not in out.stdout and "installing into" in out.stderr and "failed" in out.stderr
    assert not (tmp_path / "project" / ".venv" / ".setup-stamp").exists()


def test_system_torch_mode_without_a_torch_stops_naming_the_fix(tmp_path):
    out = _source_env(tmp_path, _fake_python(tmp_path, "3.12"), GCC_SGCL_SYSTEM_TORCH="1")
    assert out.returncode != 0 and _calls(tmp_path) == []
    (line,) = out.stderr.strip().splitlines()
    assert "cannot import torch" in line and "unset it to install torch==2.13.0" in line


def test_system_torch_mode_refuses_a_torch_older_than_the_oldest_tested(tmp_path):
    out = _source_env(tmp_path, _fake_python(tmp_path, "3.12", torch_version="2.10.1"), GCC_SGCL_SYSTEM_TORCH="1")
    assert out.returncode != 0 and _calls(tmp_path) == []
    assert "has torch 2.10.1; gcc_sgcl is tested with torch >= 2.11" in out.stderr


def _install_requires() -> list[Requirement]:
    """setup.py's requirements, read by running it with ``setuptools.setup`` replaced."""
    seen = {}
    original = setuptools.setup
    setuptools.setup = lambda **kwargs: seen.update(kwargs)
    try:
        runpy.run_path(str(ROOT / "setup.py"))
    finally:
        setuptools.setup = original
    assert seen["python_requires"] == ">=3.10,<3.13"
    return [Requirement(r) for r in seen["install_requires"]]


@pytest.mark.parametrize("python,dgl,extra", [("3.10", "==1.1.3", {"pandas"}), ("3.11", "==1.1.3", {"pandas"}),
                                              ("3.12", "==2.1.0", {"torchdata", "pandas"})])
def test_setup_pins_the_dgl_with_wheels_for_each_python(python, dgl, extra):
    wanted = {r.name: str(r.specifier) for r in _install_requires()
              if r.marker is None or r.marker.evaluate({"python_version": python})}
    assert wanted["dgl"] == dgl and wanted["torch"] == ">=2.11"
    assert extra <= wanted.keys() and ({"torchdata", "pandas"} - extra).isdisjoint(wanted)
    if "torchdata" in extra:
        assert wanted["torchdata"] in ("<0.10,>=0.5", ">=0.5,<0.10")  # 0.10 dropped the datapipes dgl 2.1 imports


def _fake_dgl(folder: Path, version: str, libraries: tuple[str, ...] = ()) -> Path:
    """An installed ``dgl`` of ``version`` whose ``graphbolt`` raises as dgl 2.1's does without its library, with
    the GraphBolt ``libraries`` present."""
    package = folder / "dgl"
    (package / "graphbolt").mkdir(parents=True)
    (package / "__init__.py").write_text("from . import graphbolt\n")
    (package / "graphbolt" / "__init__.py").write_text("raise FileNotFoundError('Cannot find DGL C++ graphbolt')\n")
    for name in libraries:
        (package / "graphbolt" / name).write_text("")
    info = folder / f"dgl-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: dgl\nVersion: {version}\n")
    return package


def test_graphbolt_stub_is_needed_only_for_dgl_2_without_the_library_of_the_running_torch(tmp_path):
    package = _fake_dgl(tmp_path, "2.1.0", ("libgraphbolt_pytorch_2.2.1.so",))
    assert _dgl_compat.needs_graphbolt_stub("2.1.0", package, "2.13.0+cpu")
    assert not _dgl_compat.needs_graphbolt_stub("2.1.0", package, "2.2.1+cu121")  # the wheel has this one
    assert not _dgl_compat.needs_graphbolt_stub("1.1.3", package, "2.13.0+cpu")  # dgl 1.x has no GraphBolt
    assert not _dgl_compat.needs_graphbolt_stub(None, None, "2.13.0")  # no dgl installed


def test_graphbolt_stub_is_registered_once_and_never_after_dgl_is_imported(tmp_path, monkeypatch):
    package = _fake_dgl(tmp_path, "2.1.0")
    monkeypatch.setattr(_dgl_compat, "_dgl_dir", lambda: package)
    monkeypatch.setattr(_dgl_compat, "_installed_version", {"dgl": "2.1.0", "torch": "2.11.0+cu130"}.get)
    modules = {}
    assert _dgl_compat.install(modules) and list(modules) == ["dgl.graphbolt"]
    assert not _dgl_compat.install(modules)
    assert not _dgl_compat.install({"dgl": object()})  # too late, and not needed: dgl imported already


def test_graphbolt_stub_lets_a_dgl_2_without_the_library_import(tmp_path):
    _fake_dgl(tmp_path, "2.1.0")
    code = "import gcc_sgcl, dgl, sys; print(sys.modules['dgl.graphbolt'].__doc__.split(':')[0])"
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Empty stand-in registered by gcc_sgcl._dgl_compat"
    plain = subprocess.run([sys.executable, "-c", "import dgl"], env=env, capture_output=True, text=True, timeout=60)
    assert "Cannot find DGL C++ graphbolt" in plain.stderr  # what happens without the package's import first


def test_the_installed_dgl_imports_with_the_stub_exactly_when_it_lacks_graphbolt():
    import dgl

    needed = _dgl_compat.needs_graphbolt_stub(dgl.__version__, Path(dgl.__file__).parent, torch.__version__)
    module = sys.modules.get("dgl.graphbolt")
    assert (module is not None and (module.__doc__ or "").startswith("Empty stand-in")) == needed


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
