"""Files, directories, pandas and polars give the fingerprint of the same in-memory Arrow table."""

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.dataset as ds
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import dsha.arrow as da

N = 50


def _table(offset=0):
    return pa.table({
        "id": pa.array(range(offset, offset + N), pa.int64()),
        "name": pa.array([None if i % 7 == 0 else f"n{i}é" for i in range(offset, offset + N)]),
        "x": pa.array([i / 4 for i in range(offset, offset + N)], pa.float64()),
    })


def _write(fmt, table, path):
    if fmt == "parquet":
        pq.write_table(table, path, row_group_size=13)
    elif fmt == "orc":
        import pyarrow.orc as orc
        orc.write_table(table, path)
    elif fmt == "csv":
        pcsv.write_csv(table, path)
    elif fmt == "json":
        import json
        with open(path, "w", encoding="utf-8") as f:
            for r in table.to_pylist():
                f.write(json.dumps(r) + "\n")
    elif fmt == "ipc":
        feather.write_feather(table, path, chunksize=11)


EXT = {"parquet": "parquet", "orc": "orc", "csv": "csv", "json": "json", "ipc": "arrow"}


@pytest.mark.parametrize("fmt", sorted(EXT))
def test_file_and_directory(fmt, tmp_path):
    if fmt == "orc":
        pytest.importorskip("pyarrow.orc")
    if fmt == "json" and not hasattr(ds, "JsonFileFormat"):
        pytest.skip("no JSON dataset reader in this pyarrow")
    t = _table()
    if fmt == "csv":  # every CSV column a string, as Spark reads it (SPEC.md Appendix A), an empty field null
        t = pa.table({n: pa.array([None if v is None else str(v) for v in t.column(n).to_pylist()])
                      for n in t.schema.names})
    want = da.fingerprint(t)
    f = tmp_path / f"one.{EXT[fmt]}"
    _write(fmt, t, str(f))
    assert da.fingerprint(str(f)) == want
    assert da.fingerprint(f, batch_size=7) == want
    assert da.fingerprint(f, columns=["name"]) == da.fingerprint(t, columns=["name"])
    # a file without a known extension needs format=
    g = tmp_path / "noext"
    _write(fmt, t, str(g))
    with pytest.raises(ValueError, match="format="):
        da.fingerprint(str(g))
    assert da.fingerprint(str(g), format=fmt) == want
    # a directory of two files, with files that Spark ignores
    d = tmp_path / "dir"
    (d / "sub").mkdir(parents=True)
    _write(fmt, t.slice(0, 20), str(d / f"part-0.{EXT[fmt]}"))
    _write(fmt, t.slice(20), str(d / "sub" / f"part-1.{EXT[fmt]}"))
    _write(fmt, _table(1000), str(d / f".hidden.{EXT[fmt]}"))
    _write(fmt, _table(2000), str(d / f"_temporary.{EXT[fmt]}"))
    (d / "_SUCCESS").write_bytes(b"")
    (d / "_logs").mkdir()
    (d / "_logs" / "00.json").write_text("{}")
    assert da.fingerprint(str(d)) == want
    assert da.fingerprint(d, batch_size=7) == want
    assert da.state(d) == da.state(t)
    (d / "_logs").rename(d / "_delta_log")  # a Delta table: its log decides which files are live
    with pytest.raises(ValueError, match="is a Delta table"):
        da.fingerprint(str(d))
    assert da.fingerprint(str(d), format=fmt) == want  # every file, when the format is given


def test_hive_partitions_are_not_columns_unless_asked(tmp_path):
    t = _table()
    for k in (1, 2):
        (tmp_path / f"k={k}").mkdir()
        pq.write_table(t.slice((k - 1) * 25, 25), str(tmp_path / f"k={k}" / "p.parquet"))
    assert da.fingerprint(tmp_path) == da.fingerprint(t)
    with_k = t.append_column("k", pa.array([1] * 25 + [2] * 25, pa.int32()))
    assert da.fingerprint(tmp_path, partitioning="hive") == da.fingerprint(with_k)


def test_dataset_reader_batch(tmp_path):
    t = _table()
    want = da.fingerprint(t)
    pq.write_table(t, str(tmp_path / "a.parquet"))
    assert da.fingerprint(ds.dataset(str(tmp_path / "a.parquet"))) == want
    assert da.fingerprint(t.to_batches()[0]) == want
    assert da.fingerprint(t.to_reader(max_chunksize=9)) == want
    assert da.fingerprint(t.to_reader(max_chunksize=9), columns=["x", "id"]) == \
        da.fingerprint(t, columns=["id", "x"])
    assert da.fingerprint(t, batch_size=7) == want


def test_pandas():
    pd = pytest.importorskip("pandas")
    t = _table()
    df = t.to_pandas()
    assert da.fingerprint(df) == da.fingerprint(t)
    df2 = df.set_index("id")  # the index is not a column
    assert da.fingerprint(df2).schema == 'struct<"name":string,"x":double>'


def test_polars():
    pl = pytest.importorskip("polars")
    t = _table()
    df = pl.from_arrow(t)
    want = da.fingerprint(t)
    assert da.fingerprint(df) == want
    assert da.fingerprint(df.lazy()) == want
    assert da.fingerprint(df.lazy(), columns=["id"]) == da.fingerprint(t, columns=["id"])
    assert da.fingerprint(df.lazy(), batch_size=7) == want
    assert da.fingerprint(df.lazy().filter(pl.col("id") < 0)) == da.fingerprint(t.slice(0, 0))


def test_unknown_input():
    with pytest.raises(TypeError, match="cannot read"):
        da.fingerprint(object())
    with pytest.raises(FileNotFoundError):
        da.fingerprint("/nonexistent/path.parquet")


def test_logical_hash_order_and_state_merge():
    from dsha.core.states import merge
    from dsha.core.fingerprint import Fingerprint
    t = _table()
    h = da.logical_hash(t)
    assert h.type == pa.binary(16) and len(h) == N
    assert h.slice(10).equals(da.logical_hash(t.slice(10)))
    merged = merge([da.state(t.slice(0, 20)), da.state(t.slice(20))])
    assert Fingerprint.from_state(merged) == da.fingerprint(t)
    empty = da.fingerprint(t.slice(0, 0))
    assert empty.rows == 0 and empty.content_sum == "0" * 32


def test_parquet_int96_timestamps_are_instants(tmp_path):
    """INT96 (Spark's default TIMESTAMP encoding) reads as `timestamp` (an instant), as Spark reads it, with years
    outside the nanosecond range (1677-2262) intact — nested ones too."""
    import datetime

    utc = datetime.timezone.utc
    values = [datetime.datetime(1, 1, 1, tzinfo=utc), datetime.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=utc),
              None, datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=utc)]
    ts = pa.array(values, pa.timestamp("us", tz="UTC"))
    table = pa.table({"t": ts, "s": pa.StructArray.from_arrays([ts, pa.array([1, 2, 3, 4])], ["x", "y"]),
                      "n": pa.array([v.replace(tzinfo=None) if v else None for v in values], pa.timestamp("us"))})
    path = tmp_path / "int96.parquet"
    # pyarrow cannot write years beyond its nanosecond range as INT96: write the instants as INT96 within it, and
    # check the far values through the INT64 file below
    pq.write_table(table.slice(1, 2), path, use_deprecated_int96_timestamps=True)
    physical = [pq.ParquetFile(path).schema.column(i).physical_type for i in range(4)]
    assert physical == ["INT96", "INT96", "INT64", "INT96"]
    assert da.canonical_schema(da._sources.open_dataset(path)) == \
        'struct<"n":timestamp,"s":struct<"x":timestamp,"y":bigint>,"t":timestamp>'
    # (n was written as INT96 too: pyarrow writes every timestamp so; Spark would read it as an instant as well)
    expected = table.slice(1, 2).set_column(2, "n", pa.array([values[1], None], pa.timestamp("us", tz="UTC")))
    assert da.fingerprint(path).digest == da.fingerprint(expected).digest
    pq.write_table(table, tmp_path / "int64.parquet")
    assert da.fingerprint(tmp_path / "int64.parquet").digest == da.fingerprint(table).digest


def test_progress_reports_rows_hashed(tmp_path):
    table = pa.table({"x": pa.array(range(1000), pa.int64())})
    seen = []
    fp = da.fingerprint(table, batch_size=300, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1000 == fp.rows and len(seen) == 4


def test_pandas_decimals_of_inferred_precision_warn(tmp_path):
    """Issue 34, case 7: to_pandas() turns decimal(15,2) into Decimal objects, which Arrow types decimal(4,2): the
    digest is not the file's, and a DshaWarning says so and points to the Arrow table (whose digest is the file's)."""
    import decimal
    import warnings

    from dsha.errors import DshaWarning

    f = str(tmp_path / "d.parquet")
    pq.write_table(pa.table({"d": pa.array([decimal.Decimal("12.34"), None], pa.decimal128(15, 2)), "i": [1, 2]}), f)
    df = pq.read_table(f).to_pandas()
    with pytest.warns(DshaWarning, match=r"d \(decimal128\(4, 2\)\).*pyarrow.parquet.read_table"):
        from_pandas = da.fingerprint(df)
    assert from_pandas != da.fingerprint(f)
    assert from_pandas == da.fingerprint(pa.Table.from_pandas(df, preserve_index=False))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DshaWarning)
        assert da.fingerprint(pq.read_table(f)) == da.fingerprint(f)
        da.fingerprint(df[["i"]])  # no decimal column, no warning
