"""dsha.arrow.diff and `dsha diff` on the Arrow engine (no pyspark, no JVM): the rows only on each side, as multisets,
against a second computation (Python's Counter over the rows' values), through the first sketch, a second larger
one and the fallback of counted digests; the CLI chooses the Arrow engine by itself for local typed files."""
import json
import os
import random
from collections import Counter

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

from dsha.arrow.diff import diff
from test_cli_engine import NO_SPARK, run_cli


def _key(v):
    """A value as a hashable key: lists as tuples, structs as sorted items; floats by value (no NaN here)."""
    if isinstance(v, list):
        return tuple(_key(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _key(x)) for k, x in v.items()))
    return v


def _multiset(table):
    return Counter(tuple(_key(v) for v in row.values()) for row in table.to_pylist())


def _pair(seed):
    """Two tables: some rows removed, some repeated (several times), some new; nested values and nulls."""
    rnd = random.Random(seed)

    def row():
        return {"id": rnd.randint(0, 40), "name": rnd.choice(["a", "b", "é名", "", None]),
                "score": rnd.choice([0.5, -1.25, 1e300, None]),
                "tags": rnd.choice([None, [], ["x"], ["x", None]]),
                "point": rnd.choice([None, {"x": 1, "y": "p"}, {"x": None, "y": "q"}])}

    rows = [row() for _ in range(rnd.randint(200, 400))]
    other = [r for r in rows if rnd.random() > 0.05] + rnd.sample(rows, 8) * 2 + [row() for _ in range(5)]
    rnd.shuffle(other)
    schema = pa.schema([("id", pa.int32()), ("name", pa.string()), ("score", pa.float64()),
                        ("tags", pa.list_(pa.string())), ("point", pa.struct([("x", pa.int64()), ("y", pa.string())]))])
    return pa.Table.from_pylist(rows, schema), pa.Table.from_pylist(other, schema)


def _check(d, left, right):
    assert _multiset(d.only_left) == _multiset(left) - _multiset(right)
    assert _multiset(d.only_right) == _multiset(right) - _multiset(left)
    assert d.only_left.column_names == left.column_names == d.only_right.column_names


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_rows_only_on_each_side_are_the_multiset_differences(seed):
    left, right = _pair(seed)
    d = diff(left, right.select(["point", "tags", "score", "name", "id"]))  # another column order: the same rows
    assert not d and d.method == "sketch" and d.cells_used <= 2 * 1.25 * d.distinct_differences + 12
    _check(d, left, right)
    assert (d.left_rows, d.right_rows) == (left.num_rows, right.num_rows)
    assert d.distinct_differences == len(set(_multiset(left) - _multiset(right))) + len(
        set(_multiset(right) - _multiset(left)))


def test_a_second_pass_and_the_fallback_give_the_same_rows():
    left, right = _pair(4)
    second = diff(left, right, cells=4)
    assert second.method == "sketch (2 passes)"
    _check(second, left, right)
    with pytest.warns(Warning, match="join of per-digest counts"):
        counted = diff(left, right, cells=4, max_cells=4)
    assert counted.method.startswith("join of per-digest counts") and counted.cells_used is None
    _check(counted, left, right)


def test_equal_and_schema_differences():
    left, _ = _pair(5)
    same = diff(left, left.take(list(range(left.num_rows))[::-1]))
    assert same and same.only_left.num_rows == same.only_right.num_rows == 0 and same.left_digest == same.right_digest
    other = diff(left, left.drop_columns(["tags"]).append_column("tags", pa.array([[1]] * left.num_rows)))
    assert not other and other.schema_difference.retyped == (("tags", "array<string>", "array<bigint>"),)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("diff")
    left, right = _pair(6)
    (root / "a").mkdir()
    pq.write_table(left.slice(0, 100), root / "a" / "part-0.parquet")
    pq.write_table(left.slice(100), root / "a" / "part-1.parquet")
    feather.write_feather(right, root / "b.arrow")
    return root, left, right


@NO_SPARK
def test_cli_diff_takes_the_arrow_engine_without_spark(files, tmp_path):
    root, left, right = files
    out = run_cli("diff", str(root / "a"), str(root / "b.arrow"), "--json", "--limit", "3", "--output",
                  str(tmp_path / "out"), "--html", str(tmp_path / "r.html"))
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    only_left, only_right = _multiset(left) - _multiset(right), _multiset(right) - _multiset(left)
    assert report["engine"] == "arrow" and report["equal"] is False and report["method"] == "sketch"
    assert (report["only_left"], report["only_right"]) == (sum(only_left.values()), sum(only_right.values()))
    assert len(report["rows"]["only_left"]) == 3
    assert _multiset(pq.read_table(tmp_path / "out" / "only_left")) == only_left
    assert _multiset(pq.read_table(tmp_path / "out" / "only_right")) == only_right
    assert report["left_digest"] in (tmp_path / "r.html").read_text(encoding="utf-8")
    text = run_cli("diff", str(root / "a"), str(root / "b.arrow"), "--limit", "2", "--columns", "ID,name")
    assert text.returncode == 1 and "method: sketch" in text.stderr, text.stderr
    assert "- only left (2 of " in text.stdout and "+ only right (2 of " in text.stdout  # the aligned table
    same = run_cli("diff", str(root / "a"), str(root / "a"))
    assert same.returncode == 0 and "equal:" in same.stdout


@NO_SPARK
def test_cli_diff_what_needs_spark_is_one_line(files):
    root, _, _ = files
    out = run_cli("diff", str(root / "a"), str(root / "b.arrow"), "--key", "id")
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert lines[0].startswith("dsha: error: --key pairs rows with the Spark engine, and pyspark is not installed")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="a pseudo file system in which nothing can be made")
def test_an_output_that_cannot_be_made_fails_before_the_diff_runs(files, capsys):
    """--output's parent cannot be created although the permission bits allow it (as root, /proc is writable by
    them): one error line, exit 2, before anything of the diff is computed or printed (in-process: no JVM either way)."""
    from dsha.cli import main

    root, _, _ = files
    assert main(["diff", str(root / "a"), str(root / "b.arrow"), "--output", "/proc/dsha-no-such/out"]) == 2
    out, err = capsys.readouterr()
    why = ("nothing can be created in /proc (No such file or directory)" if os.access("/proc", os.W_OK | os.X_OK)
           else "/proc is not writable")  # root / anyone else
    assert (out, err) == ("", f"dsha: error: --output /proc/dsha-no-such/out cannot be made: {why}\n")
