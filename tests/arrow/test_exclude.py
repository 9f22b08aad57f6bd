"""``exclude=`` without Spark (issue 32): the one rule (``dsha.core.names.without_excluded``), the Arrow engine's
fingerprint, state and diff against the same calls on the tables with the columns dropped, and ``--exclude`` on the
CLI's Arrow engine, in-process (``dsha.cli.main``)."""
import contextlib
import io
import json
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dsha.arrow
from dsha.arrow.diff import diff
from dsha.cli import main
from dsha.core.names import without_excluded


def _tables():
    """Two tables of 50 rows: the same data but for 3 changed prices; their audit column differs in every row."""
    ids = list(range(50))
    left = pa.table({"id": ids, "name": [f"n{i % 7}" for i in ids], "price": [i * 1.5 for i in ids],
                     "_ingested_at": [f"2026-01-01 {i}" for i in ids]})
    right = pa.table({"id": ids[::-1], "name": [f"n{i % 7}" for i in ids[::-1]],
                      "price": [i * 1.5 + (i in (3, 17, 30)) for i in ids[::-1]],
                      "_ingested_at": [f"2026-02-02 {i}" for i in ids[::-1]]})
    return left, right


def _multiset(table):
    return Counter(tuple(r.values()) for r in table.to_pylist())


def test_the_rule():
    names = ["id", "Name", "_ingested_at"]
    assert without_excluded(None, [("t", names)]) is None and without_excluded([], [("t", names)]) is None
    assert without_excluded("_ingested_at", [("t", names)]) == [[c for c in names if c != "_ingested_at"]]
    assert without_excluded(["name"], [("t", names)]) == [["id", "_ingested_at"]]  # resolved case-insensitively
    assert without_excluded(["Name"], [("t", names)], columns=["id", "Name"]) == [["id"]]  # columns= without it
    # dropped from each side that has it: a column only one side has can be left out
    assert without_excluded(["x"], [("left", ["id", "x"]), ("right", ["id"])]) == [["id"], ["id"]]
    for args, text in [((["_ingest"], [("the input", names)]),
                        "excluded column _ingest is not a column of the input: did you mean _ingested_at? "
                        "(columns: id, Name, _ingested_at)"),
                       ((["x"], [("left", ["id"]), ("right", ["id"])]), "is not a column of left or right"),
                       ((names, [("the input", names)]), "leaves no column of the input"),
                       ((["id"], [("left", names)], None, ["ID"]), "key column ID is excluded")]:
        with pytest.raises(ValueError) as e:
            without_excluded(*args)
        assert text in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(TypeError, match="exclude takes column names"):
        without_excluded([1], [("t", names)])


def test_fingerprint_and_state_are_those_of_the_dropped_table(tmp_path):
    left, _ = _tables()
    for c in left.column_names[1:]:
        assert dsha.arrow.fingerprint(left, exclude=[c]) == dsha.arrow.fingerprint(left.drop_columns([c]))
    assert dsha.arrow.fingerprint(left, columns=["id", "name"], exclude="name") == \
        dsha.arrow.fingerprint(left.select(["id"]))
    pq.write_table(left, tmp_path / "t.parquet")  # a path: its column names from the file's metadata
    assert dsha.arrow.state(str(tmp_path / "t.parquet"), exclude=["_ingested_at"]) == \
        dsha.arrow.state(left.drop_columns(["_ingested_at"]))
    with pytest.raises(ValueError, match="excluded column prise is not a column of the input: did you mean price"):
        dsha.arrow.fingerprint(left, exclude=["prise"])


def test_diff_is_that_of_the_dropped_tables():
    left, right = _tables()
    d = diff(left, right, exclude=["_ingested_at"])
    l_dropped, r_dropped = (t.drop_columns(["_ingested_at"]) for t in (left, right))
    expected_left, expected_right = _multiset(l_dropped) - _multiset(r_dropped), _multiset(r_dropped) - \
        _multiset(l_dropped)
    assert (_multiset(d.only_left), _multiset(d.only_right)) == (expected_left, expected_right)
    assert (d.only_left_count, d.only_right_count) == (sum(expected_left.values()), sum(expected_right.values()))
    assert d.left_digest == dsha.arrow.fingerprint(l_dropped).digest
    assert diff(left, right.drop_columns(["price"]), exclude=["_ingested_at", "price"]).equal


def _cli(*args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def test_cli_exclude_on_the_arrow_engine(tmp_path):
    left, right = _tables()
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(left, a)
    pq.write_table(right, b)
    code, out, err = _cli("hash", a, "--engine", "arrow", "--exclude", "_ingested_at")
    assert code == 0 and out.strip() == dsha.arrow.fingerprint(left.drop_columns(["_ingested_at"])).digest, err
    assert _cli("compare", a, b, "--engine", "arrow", "--exclude", "_ingested_at,price")[0] == 0
    assert _cli("compare", a, b, "--engine", "arrow", "--exclude", "_ingested_at")[0] == 1
    code, out, err = _cli("diff", a, b, "--engine", "arrow", "--exclude", "_ingested_at", "--json")
    expected = diff(left, right, exclude=["_ingested_at"])
    assert code == 1 and (json.loads(out)["only_left"], json.loads(out)["only_right"]) == \
        (expected.only_left_count, expected.only_right_count), err
    for args, text in [(("hash", a, "--engine", "arrow", "--exclude", "_ingest"), "did you mean _ingested_at?"),
                       (("hash", a, "--exclude", "id", "--columns", "id,name"), "give one of them"),
                       (("diff", a, b, "--exclude", "name", "--columns", "name"), "give one of them"),
                       (("check", "step", a, "--store", tmp_path / "s", "--exclude", "id"),
                        "--exclude is not supported by dsha check")]:
        code, _, err = _cli(*args)
        assert code == 2 and text in err and err.count("\n") == 1, err
