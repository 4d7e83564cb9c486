"""The row-stability study: distances shrink with more views, the CSV round-trips, and the time is recorded."""
from gcc_sgcl.experiments.stability import measure, read


def test_rows_move_less_with_more_views_and_the_csv_reads_back(tiny_encoder, tmp_path):
    out = tmp_path / "stability.csv"
    rows = measure([str(tiny_encoder)], ["synthetic-roles"], [1, 16], None, out)
    assert [r["copies"] for r in rows] == [1, 16]
    one, many = rows
    assert 0 < many["seed_distance"] < one["seed_distance"] / 2  # averaging 16 views: ~1/4 of one view's spread
    assert 0 < many["numbering_distance"] < one["numbering_distance"] / 2
    assert all(r["seconds"] > 0 and r["threads"] >= 1 for r in rows)
    assert read(out) == rows


def test_a_second_run_keeps_the_stored_measurements_and_adds_only_the_new_ones(tiny_encoder, tmp_path):
    out = tmp_path / "stability.csv"
    first = measure([str(tiny_encoder)], ["synthetic-roles"], [16, 1], None, out)
    again = measure([str(tiny_encoder)], ["synthetic-roles"], [1, 4, 16], None, out)
    assert [r["copies"] for r in again] == [1, 4, 16]  # ordered by view count, whatever the order asked
    assert [again[0], again[2]] == sorted(first, key=lambda r: r["copies"])  # kept as stored, timing included
    assert read(out) == again


def test_a_csv_written_before_the_timing_reads_with_none(tmp_path):
    path = tmp_path / "old.csv"
    path.write_text("encoder,dataset,copies,nodes,seed_distance,numbering_distance\ne,usa_airport,2,5,0.25,0.26\n")
    (row,) = read(path)
    assert row["seconds"] is None and row["threads"] is None and row["copies"] == 2
