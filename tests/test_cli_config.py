"""Every command line is generated from the settings dataclasses (the method's in ``gcc_sgcl.config``, each tool's
beside the tool) by the machinery of ``gcc_sgcl.settings``: flags, defaults and help come from one place."""
import argparse
import dataclasses
import re
from pathlib import Path

import pytest

from gcc_sgcl.bench import cli as bench_cli
from gcc_sgcl.bench.cli import BenchConfig
from gcc_sgcl.classical import __main__ as classical_cli
from gcc_sgcl.classical.__main__ import ClassicalConfig
from gcc_sgcl.config import InputConfig, ModelConfig, TrainConfig
from gcc_sgcl.data import download
from gcc_sgcl.engine import generate
from gcc_sgcl.engine.generate import GenerateConfig
from gcc_sgcl.experiments import __main__ as experiments_cli
from gcc_sgcl.experiments import demo, plot_training, runtime
from gcc_sgcl.experiments.demo import DEMO_MOCO_QUEUE, DemoConfig
from gcc_sgcl.experiments.runtime import RuntimeConfig
from gcc_sgcl.experiments.settings import SweepConfig
from gcc_sgcl.presets import PretrainParser
from gcc_sgcl.settings import Settings, add_arguments, default_of, from_args
from gcc_sgcl.tasks import finetune, graph_classification, node_classification, similarity_search
from gcc_sgcl.tasks.finetune import FinetuneConfig
from gcc_sgcl.tasks.settings import EvalConfig, TaskConfig

ROOT = Path(__file__).resolve().parents[1]
COMMAND_LINES = {
    "pretrain": PretrainParser,
    "generate": generate.command_line,
    "finetune": finetune.command_line,
    "node_classification": node_classification.command_line,
    "graph_classification": graph_classification.command_line,
    "similarity_search": similarity_search.command_line,
    "classical": classical_cli.command_line,
    "experiments": experiments_cli.command_line,
    "runtime": runtime.command_line,
    "demo": demo.command_line,
    "plot_training": plot_training.command_line,
    "download": download.command_line,
    "bench": bench_cli.command_line,
}


def _settings_classes(klass: type = Settings) -> list[type]:
    """Every settings dataclass (of the modules imported above: the method's and each tool's)."""
    subs = klass.__subclasses__()
    return [k for k in subs if dataclasses.is_dataclass(k)] + [k for sub in subs for k in _settings_classes(sub)]


CONFIGS = _settings_classes()
FIELDS = {f.name for klass in CONFIGS for f in dataclasses.fields(klass)}


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and each of its subcommands' parsers."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [parser] + [p for action in subs for p in action.choices.values()]


@pytest.mark.parametrize("name", COMMAND_LINES)
def test_every_flag_is_a_config_field_left_unset_so_the_dataclass_default_applies(name):
    for parser in _parsers(COMMAND_LINES[name]()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.dest in (
                    "method", "resume"):  # pre-training's preset choice and resume switch
                continue
            assert action.dest.split(".")[-1] in FIELDS, (name, action.dest)
            assert action.default is None, (name, action.dest)


@pytest.mark.parametrize("name", COMMAND_LINES)
def test_help_shows_each_default_once_and_never_none(name):
    for parser in _parsers(COMMAND_LINES[name]()):
        text = parser.format_help()
        assert "(default: None)" not in text
        for option in re.split(r"\n  (?=-)", text):
            assert option.count("(default:") <= 1, option


# The flags no settings field holds: pre-training's preset choice and resume switch (gcc_sgcl/presets.py)
BY_HAND = {"presets.py": ["--method", "--resume"]}


def test_no_command_line_adds_a_flag_by_hand():
    package = ROOT / "gcc_sgcl"
    written = {str(p.relative_to(package)): re.findall(r"\.add_argument\(\s*\"([^\"]*)\"", p.read_text())
               for p in package.rglob("*.py") if p != package / "settings.py" and ".add_argument(" in p.read_text()}
    assert written == BY_HAND


@pytest.mark.parametrize("argv, groups", [
    (["generate", "--load-path", "run", "--dataset", "a"], [GenerateConfig]),
    (["finetune", "--load-path", "run", "--dataset", "a"], [FinetuneConfig]),
    (["graph_classification", "--load-path", "run", "--hidden", "64", "--dataset", "a"], [EvalConfig]),
    (["runtime"], [RuntimeConfig]),
    (["demo"], [DemoConfig]),
    (["bench"], [BenchConfig]),
])
def test_parsing_no_flags_gives_the_dataclass_defaults(argv, groups):
    args = COMMAND_LINES[argv[0]]().parse_args(argv[1:])
    for klass in groups:
        assert from_args(klass, args) == klass()


def test_the_sweeps_batch_size_is_pre_trainings_not_fine_tunings():
    args = experiments_cli.command_line().parse_args(["finetune", "--methods", "gcc", "--seeds", "0", "--datasets", "x",
                                                      "--batch-size", "256", "--epochs", "3",
                                                      "--view-copies", "4"])
    assert experiments_cli.finetune_settings(args) == FinetuneConfig(epochs=3, view_copies=4)
    assert experiments_cli.finetune_settings(args).batch_size == 32


def test_given_flags_override_the_defaults_and_round_trip_to_the_dataclass():
    args = finetune.command_line().parse_args(["--load-path", "r", "--dataset", "a", "b", "--epochs", "2",
                                               "--no-progress", "--max-folds", "1"])
    assert from_args(FinetuneConfig, args) == FinetuneConfig(epochs=2, progress=False, max_folds=1)
    assert from_args(InputConfig, args) == InputConfig(load_path="r", dataset=["a", "b"])
    task = similarity_search.command_line().parse_args(["--load-path", "r", "--hidden", "8", "--dataset", "a",
                                                        "--ks", "5"])
    assert from_args(TaskConfig, task) == TaskConfig(hidden=8, ks=[5])


def test_required_and_positional_arguments_keep_gccs_interface():
    with pytest.raises(SystemExit):
        generate.command_line().parse_args(["--dataset", "a"])  # --load-path is required
    args = plot_training.command_line().parse_args(["runA", "runB"])
    assert from_args(plot_training.PlotConfig, args).runs == ["runA", "runB"]
    args = download.command_line().parse_args(["imdb-binary", "--no-verify"])
    assert from_args(download.DownloadConfig, args) == download.DownloadConfig(names=["imdb-binary"], verify=False)


def test_a_field_with_a_fixed_set_of_values_refuses_others():
    parser = argparse.ArgumentParser()
    add_arguments(parser, SweepConfig, only=("modes",))
    assert parser.parse_args(["--modes", "moco", "e2e"]).modes == ["moco", "e2e"]
    with pytest.raises(SystemExit):
        parser.parse_args(["--modes", "nope"])
    with pytest.raises(SystemExit):
        graph_classification.command_line().parse_args(["--load-path", "r", "--hidden", "8", "--dataset", "a",
                                                        "--svc", "nope"])


def test_the_moco_queue_has_one_default_across_entry_points():
    paper = TrainConfig().nce_k
    assert paper == 16384
    pretrain = PretrainParser().parse_args([])
    sweep = experiments_cli.command_line().parse_args(["run", "--methods", "gcc", "--seeds", "0", "--datasets", "a"])
    assert getattr(pretrain, "train.nce_k") is None  # not given: the dataclass default applies
    assert SweepConfig(methods=[], seeds=[], datasets=[]).moco_queue == paper
    assert from_args(experiments_cli.Sweep, sweep).moco_queue == paper
    # the demo's smaller queue is a named value of its CPU profile, not a default of a flag
    assert DEMO_MOCO_QUEUE < paper and "nce_k" not in {f.name for f in dataclasses.fields(DemoConfig)}
    assert "--moco-queue" in (ROOT / "scripts/reproduce.sh").read_text()


@pytest.mark.parametrize("klass, name, source, source_name", [
    (SweepConfig, "moco_queue", TrainConfig, "nce_k"),
    (SweepConfig, "corpus", TrainConfig, "corpus"),
    (SweepConfig, "device", TrainConfig, "device"),
    (SweepConfig, "folds", EvalConfig, "folds"),
    (SweepConfig, "repeats", EvalConfig, "repeats"),
    (SweepConfig, "eval_seed", EvalConfig, "seed"),
    (SweepConfig, "svc", EvalConfig, "svc"),
    (FinetuneConfig, "folds", EvalConfig, "folds"),
    (FinetuneConfig, "seed", EvalConfig, "seed"),
    (InputConfig, "device", TrainConfig, "device"),
    (ClassicalConfig, "hidden", ModelConfig, "hidden_size"),
    (RuntimeConfig, "corpus", TrainConfig, "corpus"),
    (BenchConfig, "runtime_batch_size", RuntimeConfig, "batch_size"),
    (BenchConfig, "runtime_batches", RuntimeConfig, "batches"),
    (DemoConfig, "mode", TrainConfig, "mode"),
])
def test_fields_of_the_same_quantity_share_one_default(klass, name, source, source_name):
    assert default_of(klass, name) == default_of(source, source_name)


@pytest.mark.parametrize("make, flag", [
    (lambda: ModelConfig(num_layers=1), "--num-layers"),
    (lambda: experiments_cli.Sweep(methods=["gcc"], seeds=[-1], datasets=[]), "--seeds"),
    (lambda: experiments_cli.Sweep(methods=["gcc"], seeds=[0], datasets=[], modes=["nope"]), "--modes"),
    (lambda: FinetuneConfig(folds=3, max_folds=4), "--max-folds"),
])
def test_every_settings_class_checks_its_fields_when_made(make, flag):
    with pytest.raises(ValueError, match=flag):
        make()


def test_every_settings_class_is_a_settings_dataclass():
    assert ModelConfig in CONFIGS and experiments_cli.Sweep in CONFIGS
    assert {"GenerateConfig", "EvalConfig", "SweepConfig", "BenchConfig", "DemoConfig"} <= {k.__name__ for k in CONFIGS}
