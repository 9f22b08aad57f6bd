"""dsha.fingerprint, equal, state and diff given a pandas, pyarrow or polars frame: the Arrow engine computes them in
this process (the same result types as on Spark), each held here to dsha.arrow's own functions and to a second
computation (a Parquet file of the same rows, a multiset difference by collections.Counter); a path, a key= to diff,
a Column or exact=False are one-line errors naming the right call. `import dsha` imports neither pyarrow nor
pyspark until a frame is handed over."""
import os
import subprocess
import sys
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dsha
import dsha.arrow
from dsha.arrow.diff import ArrowDiff

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = pa.table({"id": pa.array(range(50), pa.int64()), "name": pa.array([f"n{i % 7}" for i in range(50)]),
                  "_ingested_at": pa.array(range(1000, 1050), pa.int64())})


def _frames(t):
    frames = {"pyarrow": t, "pandas": t.to_pandas()}
    try:
        import polars
    except ImportError:  # not in every environment; nothing is installed for it
        return frames
    frames["polars"] = polars.from_arrow(t)
    return frames


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("frames") / "t.parquet")
    pq.write_table(TABLE, path)
    return path


def test_fingerprint_and_state_of_a_frame_are_the_arrow_engines(written):
    from_file = dsha.arrow.fingerprint(written)  # a second computation: the same rows read back from Parquet
    assert from_file.rows == 50
    for kind, frame in _frames(TABLE).items():
        fp = dsha.fingerprint(frame)
        assert isinstance(fp, dsha.Fingerprint) and fp == dsha.arrow.fingerprint(frame) == from_file, kind
        assert dsha.state(frame) == dsha.arrow.state(frame) == dsha.arrow.state(written), kind
        # columns positionally, as columns=, exclude=: as dsha.arrow takes them, and as the file's columns
        two = dsha.arrow.fingerprint(written, ["id", "name"])
        assert dsha.fingerprint(frame, "id", "name") == dsha.fingerprint(frame, columns=["id", "name"]) == two, kind
        assert dsha.fingerprint(frame, exclude="_ingested_at") == two, kind
        assert dsha.state(frame, columns="id") == dsha.arrow.state(written, ["id"]), kind
        assert dsha.fingerprint(frame, algorithm="secure") == dsha.arrow.fingerprint(written, algorithm="secure"), kind
        assert fp.digest != two.digest  # the columns chosen matter


def test_equal_of_two_frames_compares_the_arrow_engines_fingerprints():
    for kind, frame in _frames(TABLE).items():
        same = dsha.equal(frame, frame)
        assert isinstance(same, dsha.Comparison) and same and same.reason is None, kind
        fewer = dsha.equal(TABLE, TABLE.slice(1))
        expected = dsha.Comparison(dsha.arrow.fingerprint(TABLE), dsha.arrow.fingerprint(TABLE.slice(1)))
        assert (bool(fewer), fewer.reason, fewer.left, fewer.right) == (False, "row count", expected.left,
                                                                         expected.right)
    # exclude=: a column only the right has is dropped from it, as on Spark; a name neither has is a ValueError
    right = TABLE.drop_columns(["_ingested_at"]).append_column("_loaded_at", pa.array(range(50), pa.int64()))
    assert not dsha.equal(TABLE, right)
    assert dsha.equal(TABLE.to_pandas(), right.to_pandas(), exclude=["_ingested_at", "_loaded_at"])
    with pytest.raises(ValueError, match="_ingestd_at"):
        dsha.equal(TABLE, right, exclude="_ingestd_at")


def _rows(t):
    return Counter(tuple(r.values()) for r in t.to_pylist())


def test_diff_of_two_frames_is_the_arrow_engines_and_the_multiset_difference(tmp_path):
    import pandas as pd

    left = pd.DataFrame({"id": [1, 2, 2, 3, 4, 5, 5], "v": ["a", "b", "b", "c", "d", "e", "e"]})
    right = pd.DataFrame({"id": [1, 2, 3, 3, 4, 6, 5], "v": ["a", "b", "c", "c", "x", "f", "e"]})
    rows = lambda df: Counter(map(tuple, df.itertuples(index=False)))  # noqa: E731
    with dsha.diff(left, right) as d:
        assert isinstance(d, ArrowDiff) and not d
        assert _rows(d.only_left) == rows(left) - rows(right) == Counter({(2, "b"): 1, (4, "d"): 1, (5, "e"): 1})
        assert _rows(d.only_right) == rows(right) - rows(left) == Counter({(3, "c"): 1, (4, "x"): 1, (6, "f"): 1})
        assert (d.left_digest, d.right_digest) == (dsha.arrow.fingerprint(left).digest,
                                                   dsha.arrow.fingerprint(right).digest)
        # per column, the excess rows' values one side has and the other lacks (the larger side's count)
        only_l, only_r = rows(left) - rows(right), rows(right) - rows(left)
        per_column = {c: max(sum((a - b).values()), sum((b - a).values())) for i, c in enumerate(["id", "v"])
                      for a, b in [(sum((Counter({r[i]: n}) for r, n in only_l.items()), Counter()),
                                    sum((Counter({r[i]: n}) for r, n in only_r.items()), Counter()))]}
        assert d.columns == per_column == {"id": 2, "v": 3} and d.differing_columns == ["id", "v"]
        lines = repr(d).splitlines()
        assert lines[0] == "ArrowDiff(equal=False, method='sketch'," and lines[-1] == ")"
        assert "    only_left=3, only_right=3, changed=0," in lines
        assert str(d).startswith(d.explain() + "\n") and "^" in str(d)
        # its report as a page, written where asked: the core renderer's page of the same report
        from dsha.core.diff_html import render

        page = d.to_html(str(tmp_path / "d.html"), names=("yesterday", "today"))
        assert page == render(d.report(20, ("yesterday", "today"))) == (tmp_path / "d.html").read_text("utf-8")
        assert "dsha diff: yesterday vs today" in page
    # columns= and exclude= as dsha.diff takes them: the same rows as the multiset difference of those columns
    ids = dsha.diff(pa.Table.from_pandas(left), right, columns=["id"])
    assert _rows(ids.only_left) == rows(left[["id"]]) - rows(right[["id"]]) == Counter({(2,): 1, (5,): 1})
    assert _rows(ids.only_right) == rows(right[["id"]]) - rows(left[["id"]]) == Counter({(3,): 1, (6,): 1})
    assert _rows(dsha.diff(left, right, exclude="v").only_left) == _rows(ids.only_left)
    assert dsha.diff(left, left.iloc[::-1]).equal  # order does not matter


def test_what_the_frames_cannot_take_is_one_line_naming_the_right_call(written):
    frame = TABLE.to_pandas()
    cases = [
        (lambda: dsha.diff(frame, frame, key="id"), TypeError,
         "dsha.diff of a pandas DataFrame takes no key= (pairing rows by key is Spark's): "
         "dsha.diff(spark.createDataFrame(left), spark.createDataFrame(right), key=...); without key= the Arrow "
         "engine diffs the frames"),
        (lambda: dsha.fingerprint(frame, exact=False), ValueError,
         "dsha.fingerprint(..., exact=False) reads the metadata of a Spark DataFrame's files; a pandas DataFrame has "
         "none: leave exact= out"),
        (lambda: dsha.fingerprint(TABLE, 1), TypeError,
         "dsha.fingerprint of a pyarrow Table takes column names, not builtins.int"),
        (lambda: dsha.fingerprint(written), TypeError,
         f"dsha.fingerprint takes a Spark DataFrame, not a path ({written!r}): dsha.fingerprint_path(spark, "
         f"{written!r}, format=...), or dsha.fingerprint(spark.read.load(...)); without Spark, the Arrow engine: "
         f"dsha.arrow.fingerprint({written!r})"),
        (lambda: dsha.equal(frame, written), TypeError,
         "dsha.equal takes a Spark DataFrame, not a pandas DataFrame: dsha.equal(spark.createDataFrame(...)) for "
         "Spark's digest of the same rows; without Spark, the Arrow engine: "
         "dsha.Comparison(dsha.arrow.fingerprint(left), dsha.arrow.fingerprint(right))"),
        # a Spark engine asked for: a frame is not one of its inputs
        (lambda: dsha.state(frame, engine="jvm"), TypeError,
         "dsha.state takes a Spark DataFrame, not a pandas DataFrame: dsha.state(spark.createDataFrame(...)) for "
         "Spark's digest of the same rows; without Spark, the Arrow engine: dsha.arrow.state(df)"),
    ]
    for call, error, message in cases:
        with pytest.raises(error) as e:
            call()
        assert str(e.value) == message


def test_import_dsha_imports_pyarrow_only_when_a_frame_is_handed_over():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    code = ("import sys, dsha; before = 'pyarrow' in sys.modules; import pandas as pd; "
            "fp = dsha.fingerprint(pd.DataFrame({'a': [1, 2]})); "
            "print(before, 'pyarrow' in sys.modules, 'pyspark' in sys.modules, fp.rows)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["False", "True", "False", "2"], out
