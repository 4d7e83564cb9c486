"""saved/pretrained/README.md lists every shipped encoder, with its configuration, as the folders are."""
import shutil
from pathlib import Path

import pytest

from gcc_sgcl.experiments.__main__ import main as experiments_main
from gcc_sgcl.experiments.shipped import LISTING_END, LISTING_START, listed_block, listing, shipped_encoders

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "saved" / "pretrained"


def test_the_committed_readme_lists_the_shipped_folders_as_they_are():
    """A shipped encoder not listed (or listed with another checkpoint, or gone) fails here: run
    ``python -m gcc_sgcl.experiments shipped``."""
    assert listed_block(SHIPPED / "README.md") == listing(shipped_encoders(SHIPPED))


def test_the_listing_names_each_folder_with_its_seed_budget_and_the_settings_beyond_its_preset():
    rows = {e.folder: e.row() for e in shipped_encoders(SHIPPED)}
    assert rows, "no shipped encoder"
    sgcl = next((row for folder, row in rows.items() if folder.startswith("sgcl-c=0.4_")), None)
    assert sgcl is None or "| — |" in sgcl  # c = 0.4 is the sgcl preset's own value
    for folder, row in rows.items():  # <method>_<mode>_<tag>_<steps>x<batch>_s<seed>
        budget, seed = folder.rsplit("_", 2)[1:]
        assert f"| {seed.removeprefix('s')} | {budget.replace('x', ' × ')}" in row


@pytest.fixture
def shipped_copy(tmp_path):
    """Two shipped encoders and a README whose listing is up to date, in a temporary folder."""
    first = sorted(SHIPPED.glob("*/checkpoint.pt"))[0].parent
    shutil.copytree(first, tmp_path / first.name)
    (tmp_path / "README.md").write_text(f"# Shipped\n\nprose kept\n\n{LISTING_START}\n{LISTING_END}\n\nmore prose\n")
    experiments_main(["shipped", "--folder", str(tmp_path)])
    return tmp_path, first


def test_an_encoder_exported_after_the_listing_makes_it_stale_until_shipped_runs(shipped_copy):
    folder, first = shipped_copy
    shutil.copytree(first, folder / "gcc_e2e_snap5_6000x256_s9")
    assert listed_block(folder / "README.md") != listing(shipped_encoders(folder))
    experiments_main(["shipped", "--folder", str(folder)])
    text = (folder / "README.md").read_text()
    assert listed_block(folder / "README.md") == listing(shipped_encoders(folder))
    assert "`gcc_e2e_snap5_6000x256_s9`" in text and text.startswith("# Shipped\n\nprose kept\n\n")
    assert text.endswith(f"{LISTING_END}\n\nmore prose\n") and not list(folder.glob(".*.tmp"))


def test_a_readme_without_markers_or_a_checkpoint_without_its_config_is_one_line_naming_the_file(shipped_copy):
    folder, first = shipped_copy
    (folder / "other.md").write_text("# no markers\n")
    with pytest.raises(SystemExit, match=f"error: {folder / 'other.md'}: no markers"):
        experiments_main(["shipped", "--folder", str(folder), "--readme", str(folder / "other.md")])
    (folder / first.name / "config.json").unlink()
    with pytest.raises(SystemExit, match=f"error: {folder / first.name / 'config.json'}: not the config.json"):
        experiments_main(["shipped", "--folder", str(folder)])
