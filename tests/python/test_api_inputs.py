"""The Python API given what users hand it: a pandas, pyarrow or polars frame or a path is a TypeError naming the
call that takes it (not an AttributeError about ``sparkSession``), and the call it names gives Spark's digest of
the same rows; reprs of results are a few readable lines."""
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dsha
import dsha.arrow


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    t = pa.table({"id": pa.array(range(40), pa.int64()), "name": pa.array([f"n{i}" for i in range(40)])})
    path = str(tmp_path_factory.mktemp("api_inputs") / "t.parquet")
    pq.write_table(t, path)
    return t, path


def _frames(t):
    frames = {"pyarrow": t, "pandas": t.to_pandas()}
    try:
        import polars

        frames["polars"] = polars.from_arrow(t)
    except ImportError:
        pass
    return frames


@pytest.mark.parametrize("call", ["fingerprint", "state"])
def test_a_frame_names_the_arrow_engine_which_gives_sparks_digest(spark, table, call):
    t, path = table
    expected = getattr(dsha, call)(spark.read.parquet(path))
    for kind, frame in _frames(t).items():
        with pytest.raises(TypeError) as e:
            getattr(dsha, call)(frame)
        message = str(e.value)
        assert message.startswith(f"dsha.{call} takes a Spark DataFrame, not a {kind} "), message
        assert f"dsha.arrow.{call}(df)" in message and "spark.createDataFrame" in message, message
        # the call it names computes what Spark computes for the same rows
        assert getattr(dsha.arrow, call)(frame) == expected, kind


def test_a_path_names_the_calls_that_read_it(spark, table):
    _, path = table
    for given in (path, __import__("pathlib").Path(path)):
        with pytest.raises(TypeError) as e:
            dsha.fingerprint(given)
        message = str(e.value)
        assert f"not a path ({path!r})" in message
        assert f"dsha.fingerprint_path(spark, {path!r}" in message and f"dsha.arrow.fingerprint({path!r})" in message
    assert dsha.fingerprint_path(spark, path).digest == dsha.arrow.fingerprint(path).digest == \
        dsha.fingerprint(spark.read.parquet(path)).digest


def test_equal_and_diff_name_their_right_calls(spark, table):
    t, path = table
    df = spark.read.parquet(path)
    with pytest.raises(TypeError, match=r"^dsha\.equal takes a Spark DataFrame, not a pandas DataFrame: .*"
                                        r"dsha\.Comparison\(dsha\.arrow\.fingerprint\(left\), "):
        dsha.equal(df, t.to_pandas())
    assert dsha.Comparison(dsha.arrow.fingerprint(t), dsha.arrow.fingerprint(t.slice(1))).reason == \
        dsha.equal(df, df.where("id != 0")).reason == "row count"
    with pytest.raises(TypeError, match=r"^dsha\.diff takes a Spark DataFrame, not a pyarrow Table: "
                                        r"dsha\.diff\(spark\.createDataFrame\(\.\.\.\)\).*no diff"):
        dsha.diff(t, df)
    with pytest.raises(TypeError, match=r"^dsha\.diff takes a Spark DataFrame, not a path"):
        dsha.diff(df, path)
    with pytest.raises(TypeError, match=r"^dsha\.fingerprint takes a Spark DataFrame, not builtins\.list$"):
        dsha.fingerprint([1, 2])


def test_fingerprint_repr_is_one_field_a_line_and_evaluates_back(spark):
    fp = dsha.fingerprint(spark.createDataFrame([(1, "a"), (2, "b")], "id INT, name STRING"))
    text = repr(fp)
    lines = text.splitlines()
    assert lines[0] == "Fingerprint(" and lines[-1] == ")"
    assert f"    digest={fp.digest!r}," in lines and f"    schema={fp.schema!r}," in lines
    assert f"    rows={fp.rows}," in lines and text.count(fp.schema) == 1
    assert eval(text, {"Fingerprint": dsha.Fingerprint}) == fp


def test_comparison_repr_shows_the_schema_once_when_shared(spark):
    df = spark.createDataFrame([(1, "a"), (2, "b")], "id INT, name STRING")
    cmp = dsha.equal(df, df.where("id = 1"))
    text = repr(cmp)
    assert len(text.splitlines()) >= 5 and all(len(line) < 120 for line in text.splitlines())
    assert text.count(cmp.left.schema) == 1
    assert "reason='row count'" in text and f"rows={cmp.left.rows})" in text and f"rows={cmp.right.rows})" in text
    other = dsha.equal(df, df.selectExpr("id"))
    text = repr(other)
    assert f"left_schema={other.left.schema!r}" in text and f"right_schema={other.right.schema!r}" in text
    assert "reason='schema'" in text
