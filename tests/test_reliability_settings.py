"""Every setting declares its help and valid range and is refused out of range before any work; training that
diverges stops; inputs that cannot mean anything are refused; the Python API checks as the command line does."""
import dataclasses
import math
import typing

import dgl
import networkx as nx
import numpy as np
import pytest
import torch

import gcc_sgcl
import gcc_sgcl.config as config
import gcc_sgcl.data
import gcc_sgcl.engine.pretrain as pretrain_module
import gcc_sgcl.settings as settings
from gcc_sgcl.engine.checkpoint import load_checkpoint
from gcc_sgcl.presets import make_config

# Every dataclass of settings that a command line is built from (Config is not settings).
SETTINGS = [k for k in vars(config).values() if isinstance(k, type) and dataclasses.is_dataclass(k)
            and k.__module__ == config.__name__ and k is not config.Config]


def _numeric(klass: type, f: dataclasses.Field) -> bool:
    hint = settings._value_type(typing.get_type_hints(klass)[f.name])
    item = typing.get_args(hint)[0] if typing.get_origin(hint) is list else hint
    return item in (int, float)


def _outside(valid: settings.Range) -> float:
    """A value just outside ``valid``."""
    if valid.low is not None:
        return valid.low if valid.low_open else valid.low - 1
    return valid.high if valid.high_open else valid.high + 1


FIELDS = [(k, f) for k in SETTINGS for f in dataclasses.fields(k)]


@pytest.mark.parametrize("klass,f", FIELDS, ids=[f"{k.__name__}.{f.name}" for k, f in FIELDS])
def test_every_setting_has_a_help_text_and_every_number_a_range(klass, f):
    assert f.metadata.get("help"), f"{klass.__name__}.{f.name} has no help text"
    if _numeric(klass, f):
        assert isinstance(f.metadata.get("valid"), settings.Range), f"{klass.__name__}.{f.name} declares no range"


RANGED = [(k, f) for k, f in FIELDS if f.metadata.get("valid")]


@pytest.mark.parametrize("klass,f", RANGED, ids=[f"{k.__name__}.{f.name}" for k, f in RANGED])
def test_an_out_of_range_value_is_refused_by_the_parser_naming_the_flag(klass, f, capsys):
    parser = settings.OneLineParser(prog="tool")
    settings.add_arguments(parser, klass)
    bad = _outside(f.metadata["valid"])
    required = [a for a in parser._actions if a.required and a.dest != f.name]
    filler = [x for a in required for x in ((a.option_strings[0], "1") if a.option_strings else ("1",))]
    with pytest.raises(SystemExit) as info:
        parser.parse_args([*filler, settings.flag_name(f.name, klass), str(bad)])
    err = capsys.readouterr().err
    assert info.value.code == 2 and f"argument {'/'.join(settings.flag_names(f.name, klass))}: must be" in err
    assert err.count("\n") == 1  # one line, not the whole usage


# (method, group, settings class): the groups of every method, and each augmentation family through one method of it
PRETRAIN_GROUPS = [("sgcl", g, k) for g, k in config.GROUPS.items()] + [
    ("sgcl" if family == "sgcl" else family, "augment", k) for family, k in config.AUGMENT_FAMILIES.items()]


@pytest.mark.parametrize("method,group,klass,field", [(m, g, k, f.name) for m, g, k in PRETRAIN_GROUPS
                                                      for f in dataclasses.fields(k) if f.metadata.get("valid")])
def test_an_out_of_range_pretraining_setting_is_refused_from_python_naming_the_flag(method, group, klass, field):
    bad = _outside(next(f for f in dataclasses.fields(klass) if f.name == field).metadata["valid"])
    if isinstance(klass.__dataclass_fields__[field].default, int):
        bad = int(bad) if bad == int(bad) else bad
    with pytest.raises(ValueError, match=f"{settings.flag_name(field, klass)} must be"):
        make_config(method, {group: {field: bad}})


@pytest.mark.parametrize("flag,value", [("--nce-t", "0"), ("--nce-t", "-1"), ("--batch-size", "-3"),
                                        ("--lr", "-1"), ("--beta1", "5"), ("--eps", "-1"), ("--weight-decay", "-1"),
                                        ("--dropout", "2"), ("--clip-norm", "-1"), ("--rw-hops", "0"),
                                        ("--degree-embedding-size", "0"), ("--hidden-size", "0"),
                                        ("--max-degree", "-1"), ("--positional-embedding-size", "-1"),
                                        ("--walk-length", "0"), ("--filter-mode", "foo"), ("--global-method", "foo"),
                                        ("--crop-kind", "foo"), ("--crop-basis", "foo"), ("--permute-kind", "foo"),
                                        ("--filter-threshold", "2"), ("--c", "2"), ("--nce-t", "nan")])
def test_pretrain_refuses_a_bad_value_before_loading_data_or_making_a_folder(flag, value, tmp_path, monkeypatch,
                                                                            capsys):
    _refused_before_data(["--method", "sgcl", flag, value], f"argument {_argument(flag)}:", tmp_path, monkeypatch,
                         capsys)


def _argument(flag: str) -> str:
    """How argparse names the argument of ``flag`` in its errors: every spelling of an aliased one
    (``--filter-threshold/--c``)."""
    spellings = settings.flag_names("c", config.AugmentConfig)
    return "/".join(spellings) if flag in spellings else flag


def _refused_before_data(argv, message, tmp_path, monkeypatch, capsys):
    """``pretrain argv`` exits 2 with the one-line ``message``, loading no data and making no folder."""
    monkeypatch.setattr(gcc_sgcl.data, "load_pretrain_corpus", lambda *a, **k: pytest.fail("data was loaded"))
    with pytest.raises(SystemExit) as info:
        pretrain_module.main(["--output-dir", str(tmp_path), "--steps", "1", *argv])
    err = capsys.readouterr().err
    assert info.value.code == 2 and message in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("method,flag,value", [("graphcl", "--graphcl-ratio", "1.5"), ("grace", "--grace-drop-edge-k", "-1"),
                                               ("mvgrl", "--mvgrl-sparsify", "knn"), ("mvgrl", "--mvgrl-alpha", "0"),
                                               ("gca", "--gca-p-tau", "2")])
def test_pretrain_refuses_a_bad_value_of_a_baselines_setting_before_loading_data(method, flag, value, tmp_path,
                                                                                monkeypatch, capsys):
    _refused_before_data(["--method", method, flag, value], f"argument {flag}:", tmp_path, monkeypatch, capsys)


@pytest.mark.parametrize("method,flag,value,owner", [
    ("sgcl", "--mvgrl-sparsify", "threshold", "mvgrl"), ("gcc", "--graphcl-ratio=0.3", None, "graphcl"),
    ("graphcl", "--c", "0.3", "sgcl"), ("gca", "--filter-threshold", "0.3", "sgcl"),
    ("mvgrl", "--no-use-crop", None, "sgcl"), ("grace", "--gca-p-tau", "0.5", "gca"),
    ("sgcl-crop[c=0.4]", "--grace-drop-edge-q", "0.1", "grace")])
def test_pretrain_refuses_a_flag_of_another_family_naming_it_and_the_method(method, flag, value, owner, tmp_path,
                                                                           monkeypatch, capsys):
    name = flag.split("=")[0]
    _refused_before_data(["--method", method, flag, *([value] if value else [])],
                         f"argument {name}: a setting of the {owner} family, not of method {method!r}", tmp_path,
                         monkeypatch, capsys)


def test_a_registry_valued_setting_given_from_python_is_refused_naming_its_flag():
    with pytest.raises(ValueError, match="--mvgrl-sparsify must be one of threshold, topk, got 'foo'"):
        make_config("mvgrl", {"augment": {"sparsify": "foo"}})
    with pytest.raises(ValueError, match="method 'sgcl' .sgcl family. has no augment setting 'sparsify'"):
        make_config("sgcl", {"augment": {"sparsify": "topk"}})


def _tiny(tmp_path, **train):
    return make_config("gcc", {
        "sampling": {"rw_hops": 16, "positional_embedding_size": 8},
        "model": {"hidden_size": 16, "num_layers": 2, "degree_embedding_size": 4},
        "train": {"batch_size": 4, "steps": 6, "save_freq": 2, "log_freq": 1, "output_dir": str(tmp_path),
                  "run_name": "run", **train},
    })


def test_a_non_finite_loss_stops_the_run_naming_the_step_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch):
    from gcc_sgcl.contrastive import builder

    real = builder.info_nce
    calls = []

    def diverging(logits, target):
        calls.append(1)
        loss, prob = real(logits, target)
        return (loss * math.nan if len(calls) == 3 else loss), prob

    monkeypatch.setattr(builder, "info_nce", diverging)
    graphs = [dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(120, 3, seed=0)))]
    with pytest.raises(ValueError, match="the loss is nan at step 3 .*keeps step 2"):
        pretrain_module.pretrain(_tiny(tmp_path), progress=False, graphs=graphs)
    state = load_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert state["step"] == 2 and all(torch.isfinite(v).all() for v in state["model"].values() if v.is_floating_point())


def test_a_header_only_edge_list_is_refused_for_embedding_and_as_a_corpus(tmp_path):
    from gcc_sgcl.data import DataFormatError, load_pretrain_corpus
    from gcc_sgcl.data.readers import read_id_edge_list

    path = tmp_path / "edges.csv"
    path.write_text("source,target\n")
    with pytest.raises(DataFormatError, match="header without any edge"):
        read_id_edge_list(path)
    with pytest.raises(DataFormatError, match="header without any edge"):
        load_pretrain_corpus([str(path)])


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    from gcc_sgcl.engine.pretrain import pretrain

    folder = tmp_path_factory.mktemp("enc")
    graphs = [dgl.to_bidirected(dgl.from_networkx(nx.barabasi_albert_graph(120, 3, seed=0)))]
    return gcc_sgcl.load_encoder(pretrain(_tiny(folder, steps=1), progress=False, graphs=graphs))


def _mask():
    mask = np.zeros(34, dtype=np.int64)
    mask[[3, 5]] = 1
    return mask


@pytest.mark.parametrize("nodes", [_mask(), torch.tensor(_mask()), torch.tensor(_mask(), dtype=torch.uint8),
                                   _mask().astype(float), _mask().tolist()],
                         ids=["numpy-int", "torch-int64", "torch-uint8", "float", "list-int"])
def test_a_zero_one_sequence_of_node_count_length_is_refused_as_ambiguous(encoder, nodes):
    with pytest.raises(ValueError, match="a 0/1 mask or node ids"):
        encoder.embed_nodes(nx.karate_club_graph(), nodes=nodes)


@pytest.mark.parametrize("nodes", [_mask().astype(bool), torch.tensor(_mask().astype(bool)),
                                   [bool(v) for v in _mask()]], ids=["numpy-bool", "torch-bool", "list-bool"])
def test_a_boolean_mask_of_any_kind_selects_its_true_nodes(encoder, nodes):
    graph = nx.karate_club_graph()
    assert np.array_equal(encoder.embed_nodes(graph, nodes=nodes), encoder.embed_nodes(graph, nodes=[3, 5]))


def test_distinct_ids_zero_and_one_of_a_two_node_graph_are_ids(encoder):
    assert encoder.embed_nodes(nx.path_graph(2), nodes=[1, 0]).shape == (2, encoder.hidden_size)


def test_embed_graphs_refuses_a_single_graph_and_names_a_bad_list_entry(encoder):
    with pytest.raises(TypeError, match=r"takes a list of graphs, got one Graph: pass \[graph\]"):
        encoder.embed_graphs(nx.cycle_graph(5))
    with pytest.raises(TypeError, match=r"graphs\[1\]: expected a DGLGraph"):
        encoder.embed_graphs([nx.cycle_graph(5), 3])


def test_an_edgeless_graph_is_refused_by_the_api_as_by_the_cli(encoder):
    with pytest.raises(ValueError, match="no edges"):
        encoder.embed_nodes(nx.empty_graph(5))
    with pytest.raises(ValueError, match=r"none of the 1 graphs has an edge"):
        encoder.embed_graphs([nx.empty_graph(3)])


def test_an_unknown_device_string_is_refused_naming_the_argument(tmp_path):
    with pytest.raises(ValueError, match="device must be a torch device .*got 'tpu'"):
        gcc_sgcl.load_encoder(tmp_path, device="tpu")


def test_warnings_of_a_command_print_on_one_line():
    from gcc_sgcl.cli import one_line_warning

    assert one_line_warning(UserWarning("run unfinished:\n step 3 of 10"), UserWarning, "f.py", 1) == \
        "warning: run unfinished: step 3 of 10\n"
