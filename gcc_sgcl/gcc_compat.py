"""GCC's command-line spellings, read as this code's: ``bash scripts/pretrain.sh <gpu> --moco --nce-k 16384`` (GCC's
README) works as written.

GCC's ``train.py`` names some settings differently (``--num-layer``, ``--learning_rate``, ``--alpha``), counts
training in epochs, switches MoCo on with ``--moco`` and resumes from a checkpoint path. :func:`translate_pretrain`
rewrites a GCC command line into this code's flags and returns one note per rewrite, which the command prints; a
GCC flag with no counterpart here is refused by name. Sits in the first layer: it imports nothing of the package.

>>> translate_pretrain(["--moco", "--nce-k", "16384", "--num-layer", "5"])[0]
['--mode', 'moco', '--nce-k', '16384', '--num-layers', '5']
"""
from __future__ import annotations

import os
from pathlib import Path

# GCC's spelling → this code's flag, for settings both have (same meaning and unit)
RENAMED = {"--num-layer": "--num-layers", "--learning_rate": "--lr", "--learning-rate": "--lr",
           "--alpha": "--momentum", "--tb-freq": "--log-freq", "--model-path": "--output-dir",
           "--weight_decay": "--weight-decay"}
# GCC's flags whose value this code has fixed: accepted at that value (GCC's default), refused at another
FIXED = {"--model": "gin", "--optimizer": "adam", "--aug": "1st", "--readout": "avg"}
# GCC's flags that choose where logs go or name the run folder: TensorBoard writes into the run folder here
IGNORED = ("--tb-path", "--exp", "--print-freq")
# GCC's store_true flags with no value: --norm is always on here (GCC's default True), --moco is --mode moco
SWITCHES = {"--moco": ["--mode", "moco"], "--norm": []}
GCC_SAMPLES_PER_EPOCH = 12 * 2000
"""GCC's samples per epoch: ``--num-workers`` 12 × ``--num-samples`` 2000 (its defaults); its 100 epochs of MoCo
batch 32 are the papers' 75 000 steps."""
GCC_CORPUS = ["ca-grqc", "ca-hepth", "ca-hepph", "ca-condmat", "email-enron"]
"""What ``--dataset dgl`` (GCC's pre-training graphs, ``small.bin``) trains on here: GCC's five SNAP graphs."""
MODE_BATCH = {"e2e": 1024, "moco": 32}  # GCC's batch per mode when --batch-size is not given (train.py: 32 for both)

HELP = ("GCC's spellings are accepted: --moco (= --mode moco), --num-layer (= --num-layers), --learning_rate (= --lr), "
        "--alpha (= --momentum, MoCo's key momentum), --tb-freq (= --log-freq), --model-path (= --output-dir), "
        "--dataset dgl (= --corpus " + " ".join(GCC_CORPUS) + "; another name = --corpus <name>), --epochs E "
        f"(= --steps E x {GCC_SAMPLES_PER_EPOCH} / batch, GCC's samples per epoch), --resume <run folder or its "
        "checkpoint file> (= --resume with that folder); --model gin, --optimizer adam, --aug 1st, --readout avg and "
        "--norm are accepted (this code's fixed choices); --tb-path, --exp and --print-freq are ignored (TensorBoard "
        "writes into the run folder). GCC's --save-freq counts epochs, this code's counts steps.")


def _value(argv: list[str], i: int, flag: str) -> str:
    if i + 1 >= len(argv) or argv[i + 1].startswith("--"):
        raise ValueError(f"{flag} (GCC's spelling) needs a value")
    return argv[i + 1]


def _given(argv: list[str], flag: str) -> str | None:
    """The value of ``flag`` in ``argv`` (``--flag v`` or ``--flag=v``), else None."""
    for i, item in enumerate(argv):
        if item == flag and i + 1 < len(argv):
            return argv[i + 1]
        if item.startswith(flag + "="):
            return item.split("=", 1)[1]
    return None


def _split_equals(argv: list[str]) -> list[str]:
    """``--flag=value`` as ``--flag value`` for the GCC flags this module rewrites."""
    known = (*RENAMED, *FIXED, *IGNORED, "--dataset", "--epochs", "--resume", "--num-samples")
    out = []
    for item in argv:
        flag, eq, value = item.partition("=")
        out += [flag, value] if eq and flag in known else [item]
    return out


def translate_pretrain(argv: list[str]) -> tuple[list[str], list[str]]:
    """``argv`` with GCC's spellings rewritten into this code's flags, and one note per rewrite that changes
    more than a name (epochs into steps, a corpus, a resume path). A GCC flag at a value this code does not
    implement raises ``ValueError`` naming it.

    >>> translate_pretrain(["--dataset", "dgl", "--epochs", "2", "--batch-size", "256"])[0][:2]
    ['--corpus', 'ca-grqc']
    >>> translate_pretrain(["--epochs", "2", "--batch-size", "256"])
    (['--batch-size', '256', '--steps', '187'], ['--epochs 2 (GCC): 2 x 24000 samples / batch 256 = --steps 187'])
    >>> translate_pretrain(["--resume", "saved/run/current.pth"])
    (['--resume', '--output-dir', 'saved', '--run-name', 'run'], ['--resume saved/run/current.pth (GCC): continues the run folder saved/run'])
    """
    argv = _split_equals(argv)
    out: list[str] = []
    notes: list[str] = []
    epochs = samples = None
    i = 0
    while i < len(argv):
        flag = argv[i]
        if flag in SWITCHES:
            out += SWITCHES[flag]
            i += 1
        elif flag in RENAMED:
            out += [RENAMED[flag], _value(argv, i, flag)]
            i += 2
        elif flag in FIXED:
            value = _value(argv, i, flag)
            if value != FIXED[flag]:
                raise ValueError(f"{flag} {value} (GCC's flag): this code implements only {flag} {FIXED[flag]}, GCC's "
                                 f"default")
            i += 2
        elif flag in IGNORED:
            notes.append(f"{flag} {_value(argv, i, flag)} (GCC's flag) is ignored: TensorBoard and checkpoints go into "
                         "the run folder")
            i += 2
        elif flag == "--dataset":
            value = _value(argv, i, flag)
            out += ["--corpus", *(GCC_CORPUS if value == "dgl" else [value])]
            if value == "dgl":
                notes.append(f"--dataset dgl (GCC's pre-training graphs): --corpus {' '.join(GCC_CORPUS)}")
            i += 2
        elif flag == "--epochs":
            epochs = _value(argv, i, flag)
            i += 2
        elif flag == "--num-samples":
            samples = _value(argv, i, flag)
            i += 2
        elif flag == "--resume" and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            path = Path(argv[i + 1])
            folder = path if path.is_dir() or not path.suffix else path.parent
            out += ["--resume", "--output-dir", str(folder.parent), "--run-name", folder.name]
            notes.append(f"--resume {argv[i + 1]} (GCC): continues the run folder {folder}")
            i += 2
        else:
            out.append(flag)
            i += 1
    if epochs is not None:
        out, note = _epochs_to_steps(out, epochs, samples)
        notes.append(note)
    elif samples is not None:
        raise ValueError("--num-samples (GCC's flag) only sets the size of an epoch: give --epochs with it, or --steps")
    return out, notes


def _epochs_to_steps(argv: list[str], epochs: str, samples: str | None) -> tuple[list[str], str]:
    """``argv`` with ``--steps`` for GCC's ``--epochs`` (GCC: epochs x samples per epoch / batch)."""
    if _given(argv, "--steps") is not None:
        raise ValueError("give --epochs (GCC's) or --steps, not both")
    try:
        count = int(epochs)
        per_epoch = GCC_SAMPLES_PER_EPOCH if samples is None else 12 * int(samples)
    except ValueError:
        raise ValueError(f"--epochs {epochs}: expected a whole number of epochs") from None
    batch = _given(argv, "--batch-size")
    mode = "moco" if _given(argv, "--mode") == "moco" else "e2e"
    size = int(batch) if batch and batch.isdigit() and int(batch) > 0 else MODE_BATCH[mode]
    steps = count * per_epoch // size
    return [*argv, "--steps", str(steps)], (f"--epochs {epochs} (GCC): {epochs} x {per_epoch} samples / batch {size} "
                                            f"= --steps {steps}")


def run_folder_of(load_path: str | os.PathLike) -> Path:
    """The run folder of GCC's ``<load_path>``: the folder itself, or the folder of a checkpoint file inside it
    (GCC's ``saved/<run>/current.pth``, this code's ``saved/<run>/checkpoint.pt``).

    >>> str(run_folder_of("saved/run/current.pth")), str(run_folder_of("saved/run"))
    ('saved/run', 'saved/run')
    """
    path = Path(load_path)
    return path.parent if path.is_file() or (path.suffix in (".pth", ".pt") and not path.is_dir()) else path
