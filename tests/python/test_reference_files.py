"""dsha's file manifests (SPEC §12) and metadata fingerprints (SPEC §13) agree with the independent reference.

tests/reference/dsha_reference.py checks each manifest ``dsha.write`` writes by every rule of SPEC §12.3 and
merges its files' states itself; the dsha-meta-v1 fingerprint of a directory is recomputed from ``os.walk`` and
``os.stat`` of the files.  dsha.write and the file listing run in the driver JVM: not over Spark Connect.
"""
import json
import os
import sys

import pytest
from pyspark.sql import functions as F

import dsha

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import dsha_reference as ref  # noqa: E402

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="dsha.write and file listings need a classic session")


def _df(spark, lo, hi, parts=3):
    return (spark.range(lo, hi, 1, parts)
            .select(F.col("id"), (F.col("id") % 7).cast("int").alias("n"),
                    F.when(F.col("id") % 5 == 0, F.lit(None)).otherwise(F.concat(F.lit("s"), F.col("id"))).alias("s"),
                    F.element_at(F.array(F.lit("x"), F.lit("a:b"), F.lit("c d"), F.lit("é%")),
                                 (F.col("id") % 4 + 1).cast("int")).alias("k")))


def _manifest(path):
    with open(os.path.join(path, "_dsha", "manifest.json"), "rb") as fh:
        return ref.load_manifest(fh.read())


def _qualified(path):
    return "file:" + os.path.abspath(path)


def _check_against_files(spark, path, fp_digest=None, fmt="parquet"):
    """The manifest at path is accepted by the reference, lists exactly the data files with their os.stat size
    and time, and its merged digest is the digest of the directory read back."""
    doc = _manifest(path)
    res = ref.check_manifest(doc, expect_algorithm="dsha-v1", expect_format=fmt, expect_root=_qualified(path))
    read_back = dsha.fingerprint(spark.read.format(fmt).load(path))
    assert res["digest"] == read_back.digest
    assert res["rows"] == read_back.rows == doc["rows"]
    assert res["digest"] == doc["digest"]
    assert res["schema_digest"] == read_back.schema_digest
    if fp_digest is not None:
        assert res["digest"] == fp_digest
    prefix = _qualified(path) + "/"
    listed = {p[len(prefix):]: (size, modified) for p, size, modified, _ in ref.list_local_data_files(path)}
    assert {p: e[:2] for p, e in res["files"].items()} == listed
    for p in res["files"]:
        st = os.stat(os.path.join(path, *p.split("/")))
        assert res["files"][p][:2] == (st.st_size, st.st_mtime_ns // 10 ** 6)
    return doc, res


def test_write_manifest_agrees(spark, tmp_path):
    path = str(tmp_path / "plain")
    df = _df(spark, 0, 300)
    fp = dsha.write(df, path)
    assert fp.digest == dsha.fingerprint(df).digest
    doc, res = _check_against_files(spark, path, fp.digest)
    assert len(res["files"]) >= 2 and res["rows"] == 300
    assert doc["schema"] == ref.canonical_schema(doc["schema"])
    assert doc["schema"] == 'struct<"id":bigint,"k":string,"n":int,"s":string>'

    # a hand-edited manifest: one file's rows changed (the checksum no longer matches)
    edited = json.loads(json.dumps(doc))
    edited["files"][0]["rows"] += 1
    with pytest.raises(ref.ManifestError, match="checksum that does not match"):
        ref.check_manifest(edited)
    # the total rows are not covered (§12.2), but the reader's recomputed merge no longer agrees with them
    edited = dict(doc, rows=doc["rows"] + 1)
    assert ref.check_manifest(edited)["rows"] != edited["rows"]

    # an overwrite replaces the directory and its manifest (§12.4); ORC files get a manifest too
    df2 = _df(spark, 1000, 1050, 2)
    fp2 = dsha.write(df2, path, mode="overwrite", format="orc")
    doc2, res2 = _check_against_files(spark, path, fp2.digest, fmt="orc")
    assert res2["rows"] == 50 and not set(res2["files"]) & set(res["files"])
    assert fp2.digest == dsha.fingerprint(df2).digest


def test_partitioned_write_and_append_agree(spark, tmp_path):
    # partition values with characters Spark escapes in directory names ('%', ':') and a space
    path = str(tmp_path / "dir with space")
    fp = dsha.write(_df(spark, 0, 200), path, partition_by=["k"])
    doc, res = _check_against_files(spark, path, fp.digest)
    dirs = {p.split("/")[0] for p in res["files"]}
    assert dirs == {"k=x", "k=a%3Ab", "k=c d", "k=é%25"}, dirs  # decoded, as the file system names them
    assert all(p.count("/") == 1 for p in res["files"])

    first = res["files"]
    fp2 = dsha.write(_df(spark, 200, 260, 2), path, partition_by=["k"], mode="append")
    doc2, res2 = _check_against_files(spark, path)
    # the entries of the files already there are kept unchanged (§12.4), and the new files are added
    assert all(res2["files"][p] == e for p, e in first.items())
    assert len(res2["files"]) > len(first)
    assert res2["rows"] == 260
    new = ref.check_manifest(dict(doc2, files=[f for f in doc2["files"] if f["path"] not in first],
                                  checksum=ref.manifest_checksum(
                                      dict(doc2, files=[f for f in doc2["files"] if f["path"] not in first]))))
    assert new["rows"] == 60
    # what dsha.write returns for an append (the SPEC does not say): the digest of the rows this write wrote
    assert fp2.digest == new["digest"] == dsha.fingerprint(_df(spark, 200, 260, 2)).digest


def test_meta_fingerprint_agrees(spark, tmp_path):
    for name, partition_by in (("flat", None), ("by k", ["k"])):
        path = str(tmp_path / name)
        dsha.write(_df(spark, 0, 100), path, partition_by=partition_by)
        fp = dsha.fingerprint(spark.read.parquet(path), exact=False)
        files = ref.list_local_data_files(path)
        assert files and all(p.startswith("file:/") for p, *_ in files)
        assert fp.digest.startswith("f80b5f50120")
        assert fp.schema_digest == ref.schema_digest(fp.schema).hex()
        assert fp.digest == ref.meta_digest_files(fp.schema, files)
        assert fp.digest == ref.meta_digest_files(fp.schema, files[::-1])
        # a touched file changes it, and so does another schema over the same files
        p0 = files[0][0][len("file:"):]
        st = os.stat(p0)
        os.utime(p0, ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10 ** 6))
        fp_touched = dsha.fingerprint(spark.read.parquet(path), exact=False)
        assert fp_touched.digest != fp.digest
        assert fp_touched.digest == ref.meta_digest_files(fp.schema, ref.list_local_data_files(path))
        fp_cols = dsha.fingerprint(spark.read.parquet(path).select("id", "n"), exact=False)
        assert fp_cols.digest == ref.meta_digest_files('struct<"id":bigint,"n":int>', ref.list_local_data_files(path))


# Paths with a character outside the Basic Multilingual Plane: by UTF-8 bytes (SPEC §13 for dsha-meta-v1, and the
# order of strings everywhere else in the SPEC, §2.2) 'k=Ａ' (U+FF21, ef bc a1) comes before 'k=😀' (U+1F600,
# f0 9f 98 80); by UTF-16 code units (Java's String.compareTo) after it (ff21 > d83d).
NON_BMP = ["\uff21", "\U0001f600", "z", "\u00e9"]


@pytest.fixture(scope="module")
def non_bmp_dir(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("nonbmp") / "t")
    dsha.write(spark.createDataFrame(list(enumerate(NON_BMP)), "id bigint, k string"), path, partition_by=["k"])
    return path


def _meta_sorted_by_utf16(schema, files):
    # SPEC §13's formula, but with the files in Java's String order: what dsha computes today
    import hashlib
    import struct
    body = b"dsha-meta-v1" + ref.schema_digest(schema) + struct.pack("<Q", len(files))
    for p, size, modified, etag in sorted(files, key=lambda f: f[0].encode("utf-16-be")):
        body += (struct.pack("<I", len(p.encode())) + p.encode() + struct.pack("<QQ", size, modified)
                 + struct.pack("<I", len(etag.encode())) + etag.encode())
    return ref.meta_digest_string(hashlib.sha256(body).digest())


def test_meta_fingerprint_of_non_bmp_paths(spark, non_bmp_dir):
    """Paths are ordered by their UTF-8 bytes (SPEC §13), not by Java's UTF-16 code units, which differ for
    characters beyond U+FFFF."""
    fp = dsha.fingerprint(spark.read.parquet(non_bmp_dir), exact=False)
    files = ref.list_local_data_files(non_bmp_dir)
    assert fp.digest != _meta_sorted_by_utf16(fp.schema, files)
    assert fp.digest == ref.meta_digest_files(fp.schema, files)


def test_manifest_order_of_non_bmp_paths(spark, non_bmp_dir):
    """A manifest lists its files in the UTF-8 byte order of their paths (SPEC §12.1)."""
    doc = _manifest(non_bmp_dir)
    dirs = [f["path"].split("/")[0] for f in doc["files"]]
    assert dirs == sorted(dirs, key=lambda p: p.encode("utf-8")) != sorted(dirs, key=lambda p: p.encode("utf-16-be"))
    ref.check_manifest(doc)
