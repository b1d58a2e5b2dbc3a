"""The decode step's kernel-time table: aggregation per kernel and its formatting."""

from __future__ import annotations

from tests.benchmarks.decode.breakdown import KernelTime, aggregate, format_table, short_name


def test_aggregate_counts_launches_per_step_and_sorts_by_time_per_step() -> None:
    events = [("gemv", 10.0), ("norm", 2.0), ("gemv", 14.0), ("norm", 2.0), ("attn", 30.0)]
    rows = aggregate(events, steps=2)
    assert [r.name for r in rows] == ["attn", "gemv", "norm"]
    gemv = rows[1]
    assert gemv.launches_per_step == 1.0 and gemv.us_per_launch == 12.0
    assert rows[0].us_per_step == 15.0 and rows[2].us_per_step == 2.0


def test_long_names_are_shortened() -> None:
    assert short_name("k") == "k"
    long = "x" * 80
    assert len(short_name(long)) == 60 and short_name(long).endswith("...")


def test_table_reports_the_gap_between_kernels() -> None:
    rows = [KernelTime("gemv", 2.0, 10.0), KernelTime("norm", 1.0, 5.0)]
    table = format_table(rows, step_us=40.0)
    assert "kernels 25.0 µs of a 40.0 µs step (gaps between kernels: 15.0 µs)" in table
    assert "80.0%" in table and "20.0%" in table
