"""dsha.write (the digest computed while writing, and its manifest), dsha.fingerprint_path (re-digests that read only
what changed) and `dsha hash`'s per-file states: every result is checked against dsha.fingerprint of the files read
back in full."""
import json
import os
import shutil
import time

import pytest

import dsha
from conftest import MODE
from cli_runner import run_cli

classic_only = pytest.mark.skipif(MODE == "connect", reason="dsha.write and fingerprint_path need a classic session")


def full(spark, path, schema=None, fmt="parquet"):
    reader = spark.read.format(fmt)
    return dsha.fingerprint((reader.schema(schema) if schema is not None else reader).load(str(path)))


def manifest(path):
    with open(os.path.join(str(path), "_dsha", "manifest.json"), encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture
def table(spark):
    return spark.range(0, 2000, 1, 4).selectExpr("id", "CAST(id % 5 AS INT) AS p", "uuid() IS NOT NULL AS b",
                                                 "named_struct('x', id * 2, 'y', CAST(id AS STRING)) AS s",
                                                 "map('k', id) AS m")


@classic_only
@pytest.mark.parametrize("fmt,partition_by", [("parquet", None), ("parquet", "p"), ("orc", ["p"])])
def test_write_returns_the_digest_of_what_it_wrote(spark, table, tmp_path, fmt, partition_by):
    out = tmp_path / "t"
    fp = dsha.write(table, str(out), format=fmt, partition_by=partition_by)
    assert isinstance(fp, dsha.Fingerprint)
    assert fp == dsha.fingerprint(table)
    assert fp == full(spark, out, table.schema, fmt)
    m = manifest(out)
    assert m["digest"] == fp.digest and m["rows"] == 2000 and m["format"] == fmt
    assert sum(f["rows"] for f in m["files"]) == 2000
    if partition_by:
        assert all(f["path"].startswith("p=") for f in m["files"])
    again = dsha.fingerprint_path(spark, str(out), fmt, table.schema)
    assert again.fingerprint == fp
    assert (again.files_read, again.files_reused) == (0, len(m["files"]))
    assert again.manifest.endswith("_dsha/manifest.json")


@classic_only
def test_write_modes_and_options(spark, table, tmp_path):
    out = str(tmp_path / "t")
    first = dsha.write(table.where("id < 1000"), out, compression="zstd")
    with pytest.raises(ValueError, match="already exists"):
        dsha.write(table, out)
    second = dsha.write(table.where("id >= 1000"), out, mode="append")
    assert second == dsha.fingerprint(table.where("id >= 1000"))
    assert manifest(out)["digest"] == dsha.fingerprint(table).digest == full(spark, out, table.schema).digest
    assert any(".zstd." in f["path"] for f in manifest(out)["files"])
    assert dsha.write(table, out, mode="overwrite") == dsha.fingerprint(table)
    assert full(spark, out, table.schema) == dsha.fingerprint(table)
    with pytest.warns(dsha.DshaWarning, match="nothing written"):
        assert dsha.write(table.limit(3), out, mode="ignore") is None
    with pytest.raises(ValueError, match="partition column `nope`"):
        dsha.write(table, str(tmp_path / "u"), partition_by="nope")
    assert not os.path.exists(tmp_path / "u")


@classic_only
def test_formats_without_exact_round_trip_get_no_manifest(spark, tmp_path):
    df = spark.range(10).selectExpr("id", "CAST(id AS STRING) AS s")
    with pytest.warns(dsha.DshaWarning, match="no manifest written for format 'json'"):
        fp = dsha.write(df, str(tmp_path / "j"), format="json")
    assert fp == dsha.fingerprint(df)
    assert not os.path.exists(tmp_path / "j" / "_dsha")


@classic_only
def test_fingerprint_path_reads_only_what_changed(spark, tmp_path):
    out = tmp_path / "t"
    df = spark.range(0, 3000, 1, 5).selectExpr("id", "id * id AS sq")
    dsha.write(df, str(out))
    parts = sorted(p for p in os.listdir(out) if p.startswith("part-"))

    spark.range(9000, 9100, 1, 1).selectExpr("id", "id * id AS sq").write.mode("append").parquet(str(out))
    r = dsha.fingerprint_path(spark, str(out))
    assert (r.files_total, r.files_read, r.files_reused) == (6, 1, 5)
    assert r.fingerprint == full(spark, out)
    assert dsha.fingerprint_path(spark, str(out)).files_read == 1, "a read wrote its result without being asked"

    os.remove(out / parts[0])
    crc = out / f".{parts[0]}.crc"
    if crc.exists():
        crc.unlink()
    r = dsha.fingerprint_path(spark, str(out), update_manifest=True)
    assert (r.files_read, r.files_reused) == (1, 4) and r.fingerprint == full(spark, out)
    r = dsha.fingerprint_path(spark, str(out))
    assert (r.files_read, r.files_reused) == (0, 5) and r.fingerprint == full(spark, out)
    nc = dsha.fingerprint_path(spark, str(out), use_cache=False)
    assert nc.files_read == 5 and nc.manifest is None and nc.fingerprint == r.fingerprint


@classic_only
def test_an_edited_manifest_is_ignored_with_a_warning(spark, tmp_path):
    out = tmp_path / "t"
    df = spark.range(0, 500, 1, 2).selectExpr("id")
    dsha.write(df, str(out))
    path = out / "_dsha" / "manifest.json"
    m = json.loads(path.read_text())
    m["files"][0]["rows"] += 1
    path.write_text(json.dumps(m))
    with pytest.warns(dsha.DshaWarning, match="checksum does not match"):
        r = dsha.fingerprint_path(spark, str(out))
    assert r.files_read == 2 and r.manifest is None and r.fingerprint == dsha.fingerprint(df)


@classic_only
def test_cli_hash_uses_and_keeps_per_file_states(spark, tmp_path):
    out = tmp_path / "t"
    df = spark.range(0, 1000, 1, 3).selectExpr("id", "CAST(id AS STRING) AS s")
    df.write.parquet(str(out))
    expected = dsha.fingerprint(df).digest
    cache = tmp_path / "cache" / "t.json"
    os.makedirs(cache.parent)
    first = run_cli("hash", str(out), "--json", "--state", str(cache))
    assert first.returncode == 0, first.stderr
    r = json.loads(first.stdout)
    assert (r["digest"], r["files"], r["files_read"], r["files_reused"]) == (expected, 3, 3, 0)
    assert cache.is_file() and not (out / "_dsha").exists()
    second = run_cli("hash", str(out), "--json", "--state", str(cache))
    r = json.loads(second.stdout)
    assert (r["digest"], r["files_read"], r["files_reused"]) == (expected, 0, 3)
    assert r["manifest"].endswith("t.json")
    third = run_cli("hash", str(out), "--update-manifest", "--no-cache")
    assert third.returncode == 0 and third.stdout.strip() == expected, third.stderr
    assert "files: 3, read 3, reused 0" in third.stderr
    assert manifest(out)["digest"] == expected
    approx = run_cli("hash", str(out), "--approximate", "--json")
    r = json.loads(approx.stdout)
    assert (r["algorithm"], r["rows"]) == ("dsha-meta-v1", -1), approx.stderr
    assert r["digest"] == dsha.fingerprint(spark.read.parquet(str(out)), exact=False).digest
    bad = run_cli("hash", "--table", "t", "--state", str(cache))
    assert bad.returncode == 2 and "--state and --update-manifest need a PATH" in bad.stderr


@pytest.mark.skipif(MODE != "connect", reason="the Spark Connect error")
def test_connect_sessions_get_a_clear_error(spark, tmp_path):
    with pytest.raises(NotImplementedError, match="needs a classic SparkSession"):
        dsha.write(spark.range(3), str(tmp_path / "t"))
    with pytest.raises(NotImplementedError, match="needs a classic SparkSession"):
        dsha.fingerprint_path(spark, str(tmp_path))


def _spec_checksum(m):
    """SPEC.md §12.2, implemented from the text: SHA-256 over u32-LE-length-prefixed UTF-8 fields."""
    import hashlib
    import struct

    fields = ["manifest", m["version"], m["algorithm"], m["format"], m["root"], m["schema"], m["schema_digest"],
              len(m["files"])]
    for f in m["files"]:
        fields += [f["path"], f["size"], f["modified"], f["rows"], f["sum"]]
    h = hashlib.sha256()
    for v in fields:
        b = str(v).encode("utf-8")
        h.update(struct.pack("<I", len(b)) + b)
    return h.hexdigest()


@classic_only
def test_manifest_matches_spec(spark, tmp_path):
    """The manifest as SPEC.md §12 defines it: checksum, schema digest, per-file states that merge into the digest."""
    import hashlib

    from dsha.core.states import DigestState

    out = tmp_path / "t"
    df = spark.range(0, 300, 1, 3).selectExpr("id", "CAST(id AS STRING) AS s")
    fp = dsha.write(df, str(out), partition_by=None)
    m = manifest(out)
    assert m["checksum"] == _spec_checksum(m)
    assert m["schema_digest"] == hashlib.sha256(m["schema"].encode()).hexdigest() == fp.schema_digest
    assert [f["path"] for f in m["files"]] == sorted(f["path"] for f in m["files"])
    states = [DigestState(algorithm=m["algorithm"], schema=m["schema"], schema_digest=bytes.fromhex(m["schema_digest"]),
                          rows=f["rows"], content_sum=int.from_bytes(bytes.fromhex(f["sum"]), "little")).to_bytes()
              for f in m["files"]]
    assert dsha.Fingerprint.from_state(dsha.merge(states)) == fp
    for f in m["files"]:
        st = os.stat(out / f["path"])
        assert (f["size"], f["modified"]) == (st.st_size, st.st_mtime_ns // 1_000_000)


@classic_only
def test_the_store_keeps_per_file_states_of_paths(spark, tmp_path):
    """A path input's record carries its per-file states (a manifest, SPEC.md §12), so the next check reads only
    new and changed files; the answer still follows the content."""
    from dsha.store import open_store

    data, store = str(tmp_path / "t"), str(tmp_path / "store")
    df = spark.range(0, 900, 1, 3).selectExpr("id", "id % 7 AS k")
    df.write.parquet(data)
    dsha.record([data], store=store, name="step", spark=spark)
    files = open_store(store).latest("step").inputs[data].files
    assert files["dsha"] == "manifest" and files["checksum"] == _spec_checksum(files)
    assert len(files["files"]) == 3 and files["digest"] == dsha.fingerprint(df).digest
    assert not dsha.changed([data], store=store, name="step", spark=spark)
    spark.range(5000, 5010, 1, 1).selectExpr("id", "id % 7 AS k").write.mode("append").parquet(data)
    changes = dsha.changed([data], store=store, name="step", spark=spark)
    assert [c.input for c in changes] == [data] and "row count" in changes.explain()
    assert len(changes.current.inputs[data].files["files"]) == 4


@classic_only
def test_approximate_fingerprints_never_miss_a_change_they_can_see(spark, tmp_path):
    """dsha-meta-v1 (SPEC.md §13) against the exact digest over a random sequence of file operations: whenever the
    content changed, the approximate fingerprint changed too; a touch changes only the approximate one."""
    import random

    rng = random.Random(7)
    out = tmp_path / "t"
    spark.range(0, 300, 1, 3).selectExpr("id", "id % 11 AS k").write.parquet(str(out))
    scratch = tmp_path / "scratch"

    def parts():
        return sorted(p for p in os.listdir(out) if p.startswith("part-"))

    def drop_crc(name):
        crc = out / f".{name}.crc"
        if crc.exists():
            crc.unlink()

    def op(kind, step):
        name = rng.choice(parts())
        if kind == "append":
            spark.range(step * 1000, step * 1000 + 50, 1, 1).selectExpr("id", "id % 11 AS k") \
                .write.mode("append").parquet(str(out))
        elif kind == "delete" and len(parts()) > 1:
            drop_crc(name)
            os.remove(out / name)
        elif kind == "rewrite":
            shutil.rmtree(scratch, ignore_errors=True)
            spark.range(step * 1000, step * 1000 + 20, 1, 1).selectExpr("id", "id % 11 AS k").write.parquet(str(scratch))
            new = next(p for p in os.listdir(scratch) if p.endswith(".parquet"))
            drop_crc(name)
            shutil.copyfile(scratch / new, out / name)
        elif kind == "touch":
            st = os.stat(out / name)
            os.utime(out / name, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))

    def both():
        df = spark.read.parquet(str(out))
        return dsha.fingerprint(df), dsha.fingerprint(df, exact=False)

    exact, approx = both()
    assert approx.algorithm == "dsha-meta-v1" and approx.rows == -1 and approx.digest[:8] != exact.digest[:8]
    assert approx.schema_digest == exact.schema_digest
    kinds = ["append", "delete", "rewrite", "touch", "nothing"]
    rng.shuffle(kinds)  # every kind once, in a random order
    for step, kind in enumerate(kinds, start=1):
        op(kind, step)
        e, a = both()
        if e != exact:
            assert a != approx, f"step {step} ({kind}): the content changed, the approximate fingerprint did not"
        if kind == "touch":
            assert e == exact and a != approx
        if kind == "nothing":
            assert (e, a) == (exact, approx)
        exact, approx = e, a
    with pytest.raises(ValueError, match="not one read from files"):
        dsha.fingerprint(spark.range(3), exact=False)
