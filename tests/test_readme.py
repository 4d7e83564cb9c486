"""What README.md says is true and stays true: its length, its generated headline, its Python block (run), its
shell blocks (parsed, their pre-training flags accepted) and its links."""
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_the_readme_is_a_front_page_of_at_most_1500_words():
    assert len(README.split()) <= 1500


def test_the_headline_block_is_what_the_stored_rows_give():
    from gcc_sgcl.experiments.studies.readme import HEADLINE_END, HEADLINE_START, readme_headline

    grid = re.search(r"C_GRID=\(([0-9. ]+)\)", (ROOT / "scripts" / "reproduce.sh").read_text().split("else", 1)[1])
    block = README[README.index(HEADLINE_START):README.index(HEADLINE_END) + len(HEADLINE_END)]
    assert block == readme_headline(ROOT / "docs" / "results" / "rows.jsonl.gz", [float(c) for c in grid[1].split()])


def test_the_stability_sentence_is_what_the_measurements_give():
    from gcc_sgcl.experiments.studies.readme import STABILITY_END, STABILITY_START, stability_block

    block = README[README.index(STABILITY_START):README.index(STABILITY_END) + len(STABILITY_END)]
    assert block == stability_block(ROOT / "docs" / "results")


def test_the_python_block_runs_as_written(monkeypatch, capsys):
    (code,) = _blocks("python")
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "(34, 64) (2, 64)"


@pytest.mark.parametrize("block", _blocks("bash"))
def test_each_shell_block_parses(block):
    subprocess.run(["bash", "-n"], input=block, text=True, check=True)


def test_the_pre_training_commands_name_a_method_and_flags_pretrain_accepts():
    from gcc_sgcl.presets import PretrainParser, make_config

    commands = [line.split("#")[0] for block in _blocks("bash") for line in block.splitlines()
                if "scripts/pretrain.sh" in line.split("#")[0]]
    assert commands
    for command in commands:
        words = shlex.split(command)
        gpu, method, *flags = words[words.index("scripts/pretrain.sh") + 1:]
        args = PretrainParser().parse_args(["--method", method, *flags])
        assert gpu == "-1" and make_config(args.method)


def test_every_relative_link_points_at_a_file():
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README)
    assert links and all((ROOT / link).exists() for link in links), [l for l in links if not (ROOT / l).exists()]
