"""Paths are never patterns (issue 34, item 3): every file dsha reads by name is read as exactly that file, whatever
its name holds (Hadoop glob characters, spaces, %, #, Unicode), in file names and in partition directory values.

Each digest is checked against a second route: the same bytes copied under plain names and read in full, and each
manifest entry against the file it names, read on its own under a plain name."""
import os
import shutil
import time
import warnings

import pytest

import dsha
from cli_runner import run_cli
from conftest import MODE

classic_only = pytest.mark.skipif(MODE == "connect", reason="dsha.fingerprint_path needs a classic session")

# Names Hadoop reads as globs, each beside the plain file its pattern would match; then names that are no glob.
GLOB_NAMES = ["x[1].parquet", "q?.parquet", "s*.parquet", "c{a,b}.parquet", "b\\s.parquet", "k}.parquet",
              "k].parquet"]
OTHER_NAMES = ["a b.parquet", "p%41.parquet", "e%.parquet", "h#1.parquet", "u\u00e9\u4e2d.parquet"]
DECOYS = ["x1.parquet", "qa.parquet", "sz.parquet", "ca.parquet", "bs.parquet"]


def _one_file(spark, start, n, at):
    """A Parquet file of ids start..start+n-1 written at ``at`` (its own name), with a distinct mtime. Written by
    pyarrow (no Spark job per file: the tests write ~40 each); Spark reads it as ``id bigint, s string``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = list(range(start, start + n))
    os.makedirs(os.path.dirname(at), exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "s": pa.array([str(i) for i in ids])}), at)
    later = time.time() + start  # a changed file must not keep its size and mtime (the documented §12.3 limit)
    os.utime(at, (later, later))


def _plain_copy(src, dst):
    """The data files of ``src`` copied under plain names (f0.parquet, ...; partition folders p=v0, ...), with the
    partition values kept by reading them back: the second route of every test."""
    names = {}
    for root, _, files in os.walk(src):
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(root, f), src)
            if rel.startswith(("_", ".")) or f.startswith(("_", ".")):
                continue
            names[rel] = os.path.join(dst, f"f{len(names)}.parquet")
            os.makedirs(dst, exist_ok=True)
            shutil.copyfile(os.path.join(src, rel), names[rel])
    return names


def _fingerprint_of(spark, file):
    return dsha.fingerprint(spark.read.parquet(file))


def _manifest_entries(path):
    import json

    with open(os.path.join(path, "_dsha", "manifest.json"), encoding="utf-8") as f:
        return {e["path"]: e for e in json.load(f)["files"]}


def _assert_manifest_names_its_files(spark, path, tmp_path):
    """Every manifest entry's rows and sum are those of the file it names, read under a plain name: one aggregate
    per copied file (grouped by the file each row came from) in one query."""
    from pyspark.sql import functions as F

    from dsha.functions import dsha_fingerprint

    copies = _plain_copy(path, str(tmp_path / "copies"))
    entries = _manifest_entries(path)
    assert sorted(entries) == sorted(copies)
    per_file = {os.path.basename(r["file"]): (r["f"]["rows"], r["f"]["content_sum"]) for r in
                spark.read.parquet(*copies.values()).groupBy(F.col("_metadata.file_name").alias("file"))
                .agg(dsha_fingerprint("id", "s").alias("f")).collect()}
    for rel, copy in copies.items():
        # SPEC.md §12.1: an entry's sum is low byte first; content_sum most significant first.
        assert (entries[rel]["rows"], bytes.fromhex(entries[rel]["sum"])[::-1].hex()) == \
            per_file[os.path.basename(copy)], rel
    shutil.rmtree(str(tmp_path / "copies"))


@classic_only
@pytest.mark.parametrize("changed", [["x[1].parquet"], ["x[1].parquet", "q?.parquet"], GLOB_NAMES + OTHER_NAMES])
def test_fingerprint_path_rereads_exactly_the_changed_files(spark, tmp_path, changed):
    d = str(tmp_path / "d")
    plain = [f"p{i}.parquet" for i in range(12)]  # most files unchanged: the re-read names the changed ones
    for i, n in enumerate(GLOB_NAMES + OTHER_NAMES + DECOYS + plain):
        _one_file(spark, 10 * i, 10 + i, os.path.join(d, n))
    first = dsha.fingerprint_path(spark, d, update_manifest=True)
    for i, n in enumerate(changed):
        _one_file(spark, 1000 + 100 * i, 50 + i, os.path.join(d, n))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = dsha.fingerprint_path(spark, d, update_manifest=True)
    whole = dsha.fingerprint(spark.read.parquet(*_plain_copy(d, str(tmp_path / "plain")).values()))
    assert again.fingerprint == whole != first.fingerprint
    assert any("read every file" in str(w.message) and "Hadoop glob character" in str(w.message) for w in caught)
    assert again.fingerprint == dsha.fingerprint_path(spark, d, use_cache=False).fingerprint
    assert again.files_total == len(GLOB_NAMES + OTHER_NAMES + DECOYS + plain)
    _assert_manifest_names_its_files(spark, d, tmp_path)
    with pytest.warns(dsha.DshaWarning, match="Hadoop glob character"):
        assert dsha.fingerprint_path(spark, d).fingerprint == whole


@classic_only
def test_without_glob_named_files_the_reread_is_incremental_again(spark, tmp_path):
    d = str(tmp_path / "d")
    plain = [f"p{i}.parquet" for i in range(12)]
    for i, n in enumerate(GLOB_NAMES + OTHER_NAMES + DECOYS + plain):
        _one_file(spark, 10 * i, 10 + i, os.path.join(d, n))
    dsha.fingerprint_path(spark, d, update_manifest=True)
    _one_file(spark, 5000, 203, os.path.join(d, "x[1].parquet"))
    with pytest.warns(dsha.DshaWarning, match="Hadoop glob character"):
        assert dsha.fingerprint_path(spark, d, update_manifest=True).fingerprint == dsha.fingerprint(
            spark.read.parquet(*_plain_copy(d, str(tmp_path / "c1")).values()))
    for n in GLOB_NAMES:
        os.remove(os.path.join(d, n))
    for i, n in enumerate(OTHER_NAMES):  # spaces, %, # and Unicode: named one by one, read as named
        _one_file(spark, 1000 + 100 * i, 50 + i, os.path.join(d, n))
    again = dsha.fingerprint_path(spark, d, update_manifest=True)
    assert (again.files_read, again.files_reused) == (len(OTHER_NAMES), len(DECOYS + plain))
    assert again.fingerprint == dsha.fingerprint(spark.read.parquet(*_plain_copy(d, str(tmp_path / "c2")).values()))
    _assert_manifest_names_its_files(spark, d, tmp_path)


@classic_only
def test_partition_values_that_are_glob_patterns(spark, tmp_path):
    d = str(tmp_path / "d")
    values = ["x[1]", "x1", "a b", "h#1", "q?", "qa", "u\u00e9", "b\\s", "s*", "k}"] + [f"v{i}" for i in range(10)]
    for i, v in enumerate(values):
        _one_file(spark, 10 * i, 10 + i, os.path.join(d, f"p={v}", "part.parquet"))
    dsha.fingerprint_path(spark, d, update_manifest=True)
    for i, v in enumerate(["x[1]", "q?"]):
        _one_file(spark, 1000 + 100 * i, 50 + i, os.path.join(d, f"p={v}", "part.parquet"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dsha.DshaWarning)
        again = dsha.fingerprint_path(spark, d, update_manifest=True)
    # Second route: each partition's file read alone under a plain name, with its value added as Spark reads it.
    read = spark.read.parquet(d)
    parts = None
    for v in values:
        copy = str(tmp_path / "plain" / f"{values.index(v)}.parquet")
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        shutil.copyfile(os.path.join(d, f"p={v}", "part.parquet"), copy)
        one = spark.read.parquet(copy).selectExpr("*", f"CAST({values.index(v)} AS INT) AS i")
        parts = one if parts is None else parts.unionByName(one)
    names = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "i INT, p STRING")
    expected = parts.join(names, "i").drop("i").select(*read.columns)
    assert sorted(r.p for r in read.select("p").distinct().collect()) == sorted(values)
    assert again.fingerprint == dsha.fingerprint(expected)
    assert again.fingerprint.rows == sum(10 + i for i in range(len(values))) - 10 - 14 + 50 + 51


@pytest.mark.parametrize("engine", ["spark", "arrow"])
def test_a_path_that_exists_is_read_as_that_path(spark, tmp_path, engine):
    """`dsha hash x[1].parquet` beside x1.parquet, and a directory named with glob characters: the named file or
    directory, never what its name matches as a pattern (Spark: escaped; the Arrow engine: read as named)."""
    if engine == "arrow":
        pytest.importorskip("pyarrow")
    d = tmp_path / "d[1] é#"
    _one_file(spark, 0, 203, str(d / "x[1].parquet"))
    _one_file(spark, 500, 90, str(d / "x1.parquet"))
    _one_file(spark, 700, 7, str(tmp_path / "d1 é#" / "x1.parquet"))  # what d[1] matches as a pattern
    for target, expected in [(d / "x[1].parquet", _fingerprint_of(spark, _copy(d / "x[1].parquet", tmp_path))),
                             (d, dsha.fingerprint(spark.read.parquet(*_plain_copy(str(d), str(tmp_path / "c"))
                                                                     .values())))]:
        r = run_cli("hash", str(target), "--engine", engine)
        assert r.returncode == 0, r.stderr
        assert r.stdout.split()[0] == expected.digest, target
    assert expected.rows == 293


def _copy(src, tmp_path):
    dst = str(tmp_path / "copied" / "plain.parquet")
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(str(src), dst)
    return dst


def test_inputs_and_the_store_read_the_named_file(spark, tmp_path):
    """dsha.Path (the store's and skip's path inputs): the literal file, and a pattern still a pattern."""
    from dsha.inputs import Path, load

    d = tmp_path / "d"
    _one_file(spark, 0, 203, str(d / "x[1].parquet"))
    _one_file(spark, 500, 90, str(d / "x1.parquet"))
    literal = dsha.fingerprint(load(spark, Path(str(d / "x[1].parquet"))))
    assert literal == _fingerprint_of(spark, _copy(d / "x[1].parquet", tmp_path)) and literal.rows == 203
    assert dsha.fingerprint(load(spark, Path(str(d / "x[0-1].parquet")))).rows == 90  # no such file: a pattern
    # The store's path inputs: a directory holding a file named like a glob, and that file.
    inputs = {"dir": str(d), "file": str(d / "x[1].parquet")}
    recorded = dsha.record(inputs, store=str(tmp_path / "store"), name="step", spark=spark, create_store=True)
    assert recorded.inputs["file"].fingerprint == literal
    assert recorded.inputs["dir"].fingerprint == dsha.fingerprint(
        spark.read.parquet(*_plain_copy(str(d), str(tmp_path / "c")).values()))
    _one_file(spark, 900, 5, str(d / "x1.parquet"))  # the decoy changes: the named file did not
    changes = dsha.changed(inputs, store=str(tmp_path / "store"), name="step", spark=spark)
    assert changes.inputs == ["dir"]
