"""A run's augmentation settings are its family's (SGCL's stages, or one baseline's): stored alone, listed alone by
``--help``, and a configuration stored in the flat layout before the families is migrated to the same run."""
import dataclasses
import subprocess
from pathlib import Path

import os

import pytest

from gcc_sgcl.config import AUGMENT_FAMILIES, STAGES, AugmentConfig, Config, migrate
from gcc_sgcl.presets import PRESETS, PretrainParser, config_from_args, family_of, make_config

ROOT = Path(__file__).resolve().parents[1]
BASELINES = [family for family in AUGMENT_FAMILIES if family != "sgcl"]


def _flags(klass: type) -> set[str]:
    return {"--" + (klass.FLAG_PREFIX + f.name).replace("_", "-") for f in dataclasses.fields(klass)}


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as info:
        PretrainParser().parse_args([*argv, "--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


def flat_layout(cfg: Config) -> dict:
    """``cfg`` as a checkpoint written before the families stored it: one flat augment group holding SGCL's
    stages (all off for a baseline), the baseline's name and every baseline's prefixed settings."""
    d = cfg.to_dict()
    flat = {**dataclasses.asdict(AugmentConfig.only() if cfg.family != "sgcl" else cfg.augment),
            "baseline": "" if cfg.family == "sgcl" else cfg.family}
    for family in BASELINES:
        own = d["augment"] if family == cfg.family else dataclasses.asdict(AUGMENT_FAMILIES[family]())
        flat.update({AUGMENT_FAMILIES[family].FLAG_PREFIX + name: value for name, value in own.items()})
    del d["family"]
    return {**d, "augment": flat}


@pytest.mark.parametrize("method", [*PRESETS, "sgcl[c=0.25]", "sgcl-crop+reorder[basis=combinatorial]"])
def test_a_stored_configuration_holds_only_its_familys_settings_and_reads_back_equal(method):
    cfg = make_config(method)
    d = cfg.to_dict()
    assert d["family"] == family_of(method) and set(d["augment"]) == {
        f.name for f in dataclasses.fields(AUGMENT_FAMILIES[d["family"]])}
    assert Config.from_dict(d) == cfg and migrate(d) is d


@pytest.mark.parametrize("method", [*PRESETS, "sgcl[c=0.25]", "sgcl-no-align[c=0.4,k=64]"])
def test_a_configuration_of_the_flat_layout_is_migrated_to_the_same_training(method):
    cfg = make_config(method, {"train": {"steps": 7}})
    old = flat_layout(cfg)
    assert Config.from_dict(old) == cfg and Config.from_dict(old).learning_settings() == cfg.learning_settings()


def test_migration_keeps_a_setting_changed_from_its_default_and_drops_the_other_families():
    cfg = make_config("mvgrl", {"augment": {"sparsify": "threshold", "eps": 0.05}})
    old = flat_layout(cfg)
    old["augment"]["grace_drop_edge_q"] = 0.9  # another family's setting: never read by an mvgrl run
    assert migrate(old)["augment"] == {"alpha": 0.2, "sparsify": "threshold", "topk": 0, "eps": 0.05,
                                       "diffusion": "ppr", "t": 5.0}
    assert Config.from_dict(old) == cfg
    with pytest.raises(ValueError, match=r"unknown augment config keys: \['bogus'\]"):
        Config.from_dict({**old, "augment": {**old["augment"], "bogus": 1}})


def test_help_of_a_method_lists_its_familys_flags_and_no_other(capsys):
    sgcl, others = _flags(AugmentConfig), {f for family in BASELINES for f in _flags(AUGMENT_FAMILIES[family])}
    for family in BASELINES:
        text = _help(capsys, "--method", family)
        own = _flags(AUGMENT_FAMILIES[family])
        assert all(flag in text for flag in own)
        assert not any(f"{flag} " in text for flag in (sgcl | others) - own), family
    for method in ("sgcl", "sgcl-crop+reorder[c=0.4]"):
        text = _help(capsys, "--method", method)
        assert all(flag in text for flag in sgcl) and not any(flag in text for flag in others)
    default = " ".join(_help(capsys).split())  # the epilog as one line, whatever the terminal's width
    assert "--method <method> --help" in default and "'gcc' (sgcl family)" in default
    assert "--use-crop" in default and not any(flag in default for flag in others)


def test_help_through_pretrain_sh_is_the_methods():
    out = subprocess.run(["bash", str(ROOT / "scripts" / "pretrain.sh"), "-1", "graphcl", "--help"], check=True,
                         capture_output=True, text=True).stdout
    assert "--graphcl-ratio" in out and "--use-crop" not in out and "--mvgrl-alpha" not in out


def test_a_flag_of_another_family_is_refused_as_the_command_line_is_parsed(capsys):
    with pytest.raises(SystemExit) as info:
        PretrainParser().parse_args(["--method", "sgcl", "--mvgrl-sparsify", "threshold"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1
    assert "--mvgrl-sparsify: a setting of the mvgrl family, not of method 'sgcl'" in err
    args = PretrainParser().parse_args(["--method", "mvgrl", "--mvgrl-sparsify", "threshold", "--steps", "3"])
    assert getattr(args, "augment.sparsify") == "threshold"


@pytest.mark.parametrize("flag", ["--filter-threshold", "--c"])
def test_the_filter_threshold_and_its_alias_c_set_the_stored_c(flag):
    cfg = config_from_args(PretrainParser().parse_args(["--method", "sgcl", flag, "0.35"]))
    assert cfg.augment.c == 0.35 and cfg.to_dict()["augment"]["c"] == 0.35 and cfg.method == "sgcl[c=0.35]"


def test_gcc_is_sgcls_family_with_every_stage_off_and_a_baseline_has_no_sgcl_stage():
    gcc = make_config("gcc").augment
    assert isinstance(gcc, AugmentConfig) and not any(getattr(gcc, f"use_{stage}") for stage in STAGES)
    assert not any(isinstance(make_config(b).augment, AugmentConfig) for b in BASELINES)
    assert not any(hasattr(make_config(b).augment, f"use_{stage}") for b in BASELINES for stage in STAGES)


def test_resuming_with_another_family_names_the_family():
    from gcc_sgcl.engine.pretrain import _check_resume_config

    with pytest.raises(ValueError, match="family: checkpoint 'sgcl' vs now 'grace'"):
        _check_resume_config(make_config("gcc").to_dict(), make_config("grace"), Path("run"))
    _check_resume_config(flat_layout(make_config("grace")), make_config("grace"), Path("run"))


def test_every_baseline_family_has_its_views_registered_and_its_preset():
    from gcc_sgcl.augment.pipeline import BASELINES as VIEWS

    assert set(VIEWS) == set(BASELINES) and all(PRESETS[b].family == b for b in BASELINES)


def test_help_shows_the_values_the_method_trains_with():
    import subprocess
    import sys

    def shown(method: str, flag: str) -> str:
        text = subprocess.run([sys.executable, "-m", "gcc_sgcl.engine.pretrain", "--method", method, "--help"],
                              capture_output=True, text=True, check=True, env={**os.environ, "COLUMNS": "200"}).stdout
        entry = text.split(f"\n  {flag}", 1)[1].split("\n  -", 1)[0]  # the flag's help, to the next flag
        return " ".join(entry.split()).rsplit("(default: ", 1)[1].split(")")[0]

    assert shown("gcc", "--use-filter") == "False" and shown("sgcl", "--use-filter") == "True"
    assert shown("sgcl[c=0.35]", "--filter-threshold ") == "0.35" and shown("sgcl", "--filter-threshold ") == "0.4"


@pytest.mark.parametrize("argv, message", [
    (["--method", "bogus", "--help"], "argument --method: unknown method 'bogus'"),
    (["--method", "sgcl[c=high]", "--help"], "argument --method: method 'sgcl[c=high]': c must be float"),
    (["--method", "bogus", "--graphcl-ratio", "0.3"], "argument --method: unknown method 'bogus'"),
])
def test_a_bad_method_is_one_line_even_with_help_or_a_family_flag(argv, message):
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "gcc_sgcl.engine.pretrain", *argv], capture_output=True, text=True)
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr
