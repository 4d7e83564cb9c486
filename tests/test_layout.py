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
