"""The package's imports point down the data flow of the style guide (``LAYERS``: the method name and the settings
machinery, config and the registry type, then the file and CLI helpers (GCC's flag spellings among them), data,
sampling, augment, presets, models, contrastive, classical, engine, then tasks, api, experiments, bench).
``classical`` (training-free embeddings and the structural join) reads only data, and sits below ``engine`` so
that ``generate --with-structural`` joins with its ``joined``. Read from the source with ``ast``, lazy imports
inside functions included."""
from __future__ import annotations

import ast
from pathlib import Path

import gcc_sgcl

ROOT = Path(gcc_sgcl.__file__).parent
# Top-level modules and packages, lowest first; a unit may import only units of an earlier layer.
LAYERS = [
    {"method", "settings"},
    {"config", "_dgl_compat", "registry"},
    {"fileio", "cli", "gcc_compat"},
    {"data"},
    {"sampling"},
    {"augment"},
    {"presets"},
    {"models"},
    {"contrastive"},
    {"classical"},
    {"engine"},
    {"tasks"},
    {"api"},
    {"experiments"},
    {"bench"},
]
RANK = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}


def package_imports(path: Path) -> set[str]:
    """Top-level units of ``gcc_sgcl`` that the module at ``path`` imports (anywhere in its body)."""
    units = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "gcc_sgcl":
            names = [node.module] if node.module != "gcc_sgcl" else [f"gcc_sgcl.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] == "gcc_sgcl"]
        else:
            continue
        units |= {name.split(".")[1] for name in names if "." in name}
    return units


def unit_of(path: Path) -> str:
    return path.relative_to(ROOT).parts[0].removesuffix(".py")


def test_every_unit_has_a_layer():
    units = {unit_of(p) for p in ROOT.rglob("*.py")} - {"__init__"}
    assert units <= set(RANK), f"add {sorted(units - set(RANK))} to LAYERS"


def test_imports_point_down_the_data_flow():
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        unit = unit_of(path)
        if unit == "__init__":  # the package root re-exports the API lazily
            continue
        upward += [f"{path.relative_to(ROOT)} imports {target}" for target in package_imports(path)
                   if target != unit and RANK[target] >= RANK[unit]]
    assert not upward, "imports against the data flow:\n" + "\n".join(upward)


def test_config_imports_only_the_method_name_and_the_settings_machinery():
    assert package_imports(ROOT / "config.py") <= {"method", "settings"}
    assert package_imports(ROOT / "method.py") == set()
    assert package_imports(ROOT / "settings.py") == set()


def test_the_method_package_imports_nothing_from_the_reproduction_code():
    method_rooms = {unit for unit, rank in RANK.items() if rank < RANK["experiments"]}
    leaks = [f"{path.relative_to(ROOT)} imports {target}" for path in sorted(ROOT.rglob("*.py"))
             if unit_of(path) in method_rooms for target in package_imports(path) & {"experiments", "bench"}]
    assert leaks == []


def test_no_two_modules_share_a_name_unless_their_docstrings_say_they_are_one_idea():
    """Modules of one name are the same idea at several layers, and each one's docstring names all of them; any
    other shared name is an accident (``view.py`` beside ``views.py`` is two names)."""
    by_name: dict[str, list[str]] = {}
    for path in ROOT.rglob("*.py"):
        if path.name not in ("__init__.py", "__main__.py"):
            dotted = ".".join(("gcc_sgcl", *path.relative_to(ROOT).with_suffix("").parts))
            by_name.setdefault(path.name, []).append(dotted)
    for name, modules in by_name.items():
        if len(modules) < 2:
            continue
        for module in modules:
            path = ROOT.joinpath(*module.split(".")[1:]).with_suffix(".py")
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            missing = [m for m in modules if f":mod:`{m}`" not in doc]
            assert not missing, f"{module} shares the name {name} with {missing} but its docstring does not say so"


RUNNER = ("sweep", "frozen_sweep", "finetune_sweep", "plan", "encoders", "rows", "tables", "settings", "code_version")


def test_the_runner_imports_nothing_of_the_report():
    """The sweep trains and scores; the report (``experiments/report.py`` and ``experiments/studies/``) reads the rows.
    What both need (the tables' spec, the heat-map's stages) lives in ``experiments/tables.py``, below both."""
    for name in RUNNER:
        path = ROOT / "experiments" / f"{name}.py"
        modules = {node.module for node in ast.walk(ast.parse(path.read_text()))
                   if isinstance(node, ast.ImportFrom) and node.module}
        modules |= {alias.name for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Import)
                    for alias in node.names}
        report = sorted(m for m in modules if m.startswith(("gcc_sgcl.experiments.studies", "gcc_sgcl.experiments.report")))
        assert not report, f"experiments/{name}.py imports the report: {report}"


def test_the_reproduction_does_not_grow_into_the_library():
    """``experiments/`` + ``bench/`` stay at most 37 % of the package's lines (35.6 % on 2026-12-07): new studies
    reuse the report's table machinery, measurements for documents are scripts (docs/architecture.md)."""
    lines = {path: len(path.read_text().splitlines()) for path in ROOT.rglob("*.py")}
    reproduction = sum(n for path, n in lines.items() if path.relative_to(ROOT).parts[0] in ("experiments", "bench"))
    assert reproduction / sum(lines.values()) <= 0.37, f"{reproduction} of {sum(lines.values())} lines"
