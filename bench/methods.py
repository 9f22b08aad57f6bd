"""The methods the benchmark times: their catalogue (name, description, slow?) and, in a child process, the function
that runs each one on a DataFrame. pyspark is imported only inside the functions: the parent process reads the
catalogue without it."""
import os
import sys
import tempfile

from common import ROOT

sys.path.insert(0, os.path.join(ROOT, "tests"))
from spark_conf import ROW_BYTES, sql_conf  # noqa: E402  (tests/spark_conf.py: runtime settings, restored after)

# The common user recipe: a SHA-256 of each row's JSON, summed.
SHA2_TO_JSON = "sum(conv(substr(sha2(to_json(struct(*)),256),1,15),16,10))"

# Methods: name -> (description, slow?). Order is the round-robin order.
LINEITEM_METHODS = [
    ("scan_noop", "df.write.format('noop') (materialise every column)", False),
    ("read_all_values", "agg(bit_xor(<every column read as a number, xor-ed>)): every value read, no hash", False),
    ("xxhash64_bit_xor", "agg(bit_xor(xxhash64(*)))  [anchor]", False),
    ("xxhash64_sum_dec", "agg(sum(cast(xxhash64(*) as decimal(38,0))))", False),
    ("dsha", "agg(dsha(*))", False),
    ("dsha_generated", "agg(dsha(*)) with spark.dsha.hashRowBytes=false: Spark's generated aggregate", False),
    ("dsha_keyed", "agg(dsha_keyed(key, *)): dsha-keyed-v1, HMAC-SHA-256 per row (SPEC.md §16.2)", False),
    ("dsha_keyed_v2", "agg(dsha_keyed(key, *)) with spark.dsha.keyed.algorithm=dsha-keyed-v2: NH, a polynomial and "
                      "AES-256 per row (SPEC.md §16.6)", False),
    ("dsha_secure", "agg(dsha_secure(*)): dsha-secure-v1, LtHash 512x64 over SHA-256 + AES-256-CTR (§16.3)", False),
    ("dsha_secure_v2", "agg(dsha_secure_v2(*)): dsha-secure-v2, LtHash 256x64 over SHA-256 + fixed-key AES-128 (§16.7)",
     False),
    ("logical_hash_noop", "select(logical_hash(*)).write.format('noop')", False),
    ("dsha_equality", "dsha.equal(A, B): both fingerprints in one query", False),
    ("except_all_both", "A.exceptAll(B).isEmpty() and B.exceptAll(A).isEmpty()", True),
    ("sha2_to_json", SHA2_TO_JSON, True),
    ("pandas_udf_sha256", "pandas UDF: SHA-256 of each row's repr, 56-bit prefix summed", True),
    ("parquet_scan_noop", "Parquet (uncached) -> write.format('noop')", False),
    ("parquet_xxhash64_bit_xor", "Parquet (uncached) -> bit_xor(xxhash64(*))", False),
    ("parquet_dsha", "Parquet (uncached) -> dsha(*)", False),
]
NESTED_METHODS = [
    ("scan_noop", "df.write.format('noop')", False),
    ("xxhash64_bit_xor", "bit_xor(xxhash64(*)) with spark.sql.legacy.allowHashOnMapType=true (not canonical)", False),
    ("dsha", "agg(dsha(*))", False),
    ("logical_hash_noop", "select(logical_hash(*)).write.format('noop')", False),
    ("sha2_to_json", SHA2_TO_JSON, True),
]
# The write phase: dsha.write against a plain Parquet write of the same DataFrame, each to a new directory (deleted
# after, untimed). Each dsha.write is checked against the digest of the source.
WRITE_METHODS = [
    ("write_parquet", "df.write.parquet(path), lineitem read from its Parquet files (uncached)  [anchor]", False),
    ("write_dsha", "dsha.write(df, path): the same write, digested while writing, + _dsha/manifest.json", False),
    ("write_parquet_cached", "df.write.parquet(path) of the cached lineitem  [anchor of the cached pair]", False),
    ("write_dsha_cached", "dsha.write(df, path) of the cached lineitem", False),
]
# The re-digest phase, on a table of many files written by dsha.write (so with a manifest). Every result is checked
# against a full hash of the same files, and the files read and reused are checked too.
REDIGEST_METHODS = [
    ("full_fingerprint", "dsha.fingerprint(spark.read.parquet(path)): every file read and hashed  [anchor]", False),
    ("path_no_cache", "dsha.fingerprint_path(spark, path, use_cache=False): every file read", False),
    ("redigest_manifest", "dsha.fingerprint_path(spark, path): manifest up to date, no file read", False),
    ("redigest_one_changed", "dsha.fingerprint_path(spark, path): one file replaced since the manifest, that file "
                             "read (the change and its undoing are untimed)", False),
    ("check_unchanged", "dsha.changed({t: dsha.Path(path)}, store=...): `dsha check` in-process, inputs recorded "
                        "(untimed) and unchanged: the store's record holds the files' states", False),
]
# Each method's anchor: its ratio in the tables and targets is its median over the anchor's median.
FILES_ANCHORS = {
    "write_parquet": "write_parquet", "write_dsha": "write_parquet",
    "write_parquet_cached": "write_parquet_cached", "write_dsha_cached": "write_parquet_cached",
    "full_fingerprint": "full_fingerprint", "path_no_cache": "full_fingerprint",
    "redigest_manifest": "full_fingerprint", "redigest_one_changed": "full_fingerprint",
    "check_unchanged": "full_fingerprint",
}
PARALLEL_METHODS = ["scan_noop", "xxhash64_bit_xor", "dsha"]
SCALING_METHODS = ["scan_noop", "xxhash64_bit_xor", "dsha"]


def descriptions(catalogue):
    return {name: description for name, description, _ in catalogue}


def choose(catalogue, skip, only, skip_slow):
    """The names of a catalogue's methods that the flags --skip, --only and --skip-slow leave, in catalogue order."""
    return [name for name, _, slow in catalogue
            if not (name in skip or (only and name not in only) or (slow and skip_slow))]


def runnable(catalogue, all_methods, selected):
    """(name, fn, slow) of the selected methods, as Runner.run takes them."""
    slow = {name: s for name, _, s in catalogue}
    return [(name, all_methods[name], slow.get(name, False)) for name in selected]


def noop(d):
    d.write.format("noop").mode("overwrite").save()


def agg1(d, e):
    from pyspark.sql import functions as F

    return d.agg(F.expr(e)).collect()[0][0]


def keyed_v2(d):
    spark = d.sparkSession
    spark.conf.set("spark.dsha.keyed.algorithm", "dsha-keyed-v2")
    try:
        return agg1(d, "dsha_keyed('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', *)")
    finally:
        spark.conf.unset("spark.dsha.keyed.algorithm")


def logical_hash_noop(d):
    from pyspark.sql import functions as F

    noop(d.select(F.expr("logical_hash(*)")))


def uncached(spark, path):
    """The Parquet files at path, read from the files even when a cached DataFrame reads the same files: an option the
    reader ignores makes this relation differ from the cached one, so Spark's CacheManager does not swap it in."""
    return spark.read.option("dsha.bench.uncached", "true").parquet(path)


def check(ok, message):
    """A wrong fast answer is not a result: stop the benchmark."""
    if not ok:
        raise AssertionError(f"bench: {message}")


def lineitem_methods(spark, df, df_b, parquet_path, selected):
    """df: cached lineitem; df_b: its second copy for the equality methods (None when they are not selected);
    parquet_path: the files, for the parquet_* methods."""
    from pyspark.sql import functions as F

    def pandas_udf_sha256(d):
        import hashlib

        import pandas as pd
        from pyspark.sql.functions import pandas_udf

        @pandas_udf("long")
        def row_sha256(pdf: pd.DataFrame) -> pd.Series:
            out = []
            for row in pdf.itertuples(index=False, name=None):
                digest = hashlib.sha256(repr(row).encode("utf-8")).digest()
                out.append(int.from_bytes(digest[:7], "big"))
            return pd.Series(out, dtype="int64")

        return d.agg(F.sum(row_sha256(F.struct(*d.columns)).cast("decimal(38,0)"))).collect()[0][0]

    def read_all_values(d):
        # Every value of every column read out of the row and folded into one number, hashing nothing: about the
        # least an expression that looks at every value costs inside a Spark aggregate.
        def as_number(field):
            c, t = f"`{field.name}`", field.dataType.typeName()
            if t == "string":
                return f"octet_length({c})"
            if t == "date":
                return f"unix_date({c})"
            return f"cast({c} as bigint)"  # integers and decimals

        return agg1(d, "bit_xor(" + " ^ ".join(as_number(f) for f in d.schema.fields) + ")")

    def dsha_generated(d):
        # The partial step in Spark's generated aggregate instead of dsha's row-bytes step (the digest is the same).
        with sql_conf(spark, {ROW_BYTES: "false"}):
            return agg1(d, "dsha(*)")

    def except_all():
        return df.exceptAll(df_b).isEmpty() and df_b.exceptAll(df).isEmpty()

    def dsha_eq():
        import dsha

        return dsha.equal(df, df_b).equal

    def parquet():
        return uncached(spark, parquet_path)

    all_methods = {
        "scan_noop": lambda: noop(df),
        "read_all_values": lambda: read_all_values(df),
        "xxhash64_bit_xor": lambda: agg1(df, "bit_xor(xxhash64(*))"),
        "xxhash64_sum_dec": lambda: agg1(df, "sum(cast(xxhash64(*) as decimal(38,0)))"),
        "dsha": lambda: agg1(df, "dsha(*)"),
        "dsha_generated": lambda: dsha_generated(df),
        "dsha_keyed": lambda: agg1(df, "dsha_keyed('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', *)"),
        "dsha_keyed_v2": lambda: keyed_v2(df),
        "dsha_secure": lambda: agg1(df, "dsha_secure(*)"),
        "dsha_secure_v2": lambda: agg1(df, "dsha_secure_v2(*)"),
        "logical_hash_noop": lambda: logical_hash_noop(df),
        "dsha_equality": dsha_eq,
        "except_all_both": except_all,
        "sha2_to_json": lambda: agg1(df, SHA2_TO_JSON),
        "pandas_udf_sha256": lambda: pandas_udf_sha256(df),
        "parquet_scan_noop": lambda: noop(parquet()),
        "parquet_xxhash64_bit_xor": lambda: agg1(parquet(), "bit_xor(xxhash64(*))"),
        "parquet_dsha": lambda: agg1(parquet(), "dsha(*)"),
    }
    return runnable(LINEITEM_METHODS, all_methods, selected)


def nested_methods(spark, df, selected):
    def xx():
        # xxhash64 rejects maps unless this legacy setting is on (and then hashes them in storage order).
        with sql_conf(spark, {"spark.sql.legacy.allowHashOnMapType": "true"}):
            return agg1(df, "bit_xor(xxhash64(*))")

    all_methods = {
        "scan_noop": lambda: noop(df),
        "xxhash64_bit_xor": xx,
        "dsha": lambda: agg1(df, "dsha(*)"),
        "logical_hash_noop": lambda: logical_hash_noop(df),
        "sha2_to_json": lambda: agg1(df, SHA2_TO_JSON),
    }
    return runnable(NESTED_METHODS, all_methods, selected)


def write_methods(spark, parquet_path, cached_df, out_dir, expected, selected):
    """parquet_path: lineitem's files (read uncached); cached_df: the same rows cached; out_dir: where each run writes
    a new directory, deleted after the run (untimed); expected: the digest of the rows, which every dsha.write must
    return."""
    import shutil
    import uuid

    import dsha

    def to_new_directory(name, write):
        written = []

        def run():
            path = os.path.join(out_dir, f"{name}-{uuid.uuid4().hex[:12]}")
            written.append(path)
            write(path)

        def after():
            while written:
                shutil.rmtree(written.pop(), ignore_errors=True)

        return run, after

    def dsha_write(df, path):
        fp = dsha.write(df, path)
        check(fp.digest == expected, f"dsha.write returned {fp.digest}, the source's digest is {expected}")
        check(os.path.exists(os.path.join(path, "_dsha", "manifest.json")), f"dsha.write wrote no manifest in {path}")

    all_methods = {
        "write_parquet": to_new_directory("write_parquet", lambda p: uncached(spark, parquet_path).write.parquet(p)),
        "write_dsha": to_new_directory("write_dsha", lambda p: dsha_write(uncached(spark, parquet_path), p)),
        "write_parquet_cached": to_new_directory("write_parquet_cached", lambda p: cached_df.write.parquet(p)),
        "write_dsha_cached": to_new_directory("write_dsha_cached", lambda p: dsha_write(cached_df, p)),
    }
    slow = {name: s for name, _, s in WRITE_METHODS}
    return [(name, all_methods[name][0], slow[name], None, all_methods[name][1]) for name in selected]


class FileChange:
    """Replaces one file of a table written by dsha.write with a different file (every l_comment of its rows gets a
    '*' appended: same rows, other content), deleting its .crc sidecar; undo() puts the original bytes, sidecar and
    modification time back, so the manifest is up to date again. The original and the replacement are kept in
    `keep` (under bench/data/), so a run stopped half-way is undone by the next one."""

    def __init__(self, spark, table, keep):
        self.keep = keep
        os.makedirs(keep, exist_ok=True)
        names = sorted(f for f in os.listdir(table) if f.endswith(".parquet"))
        self.name = names[len(names) // 2]
        self.target = os.path.join(table, self.name)
        self.crc = os.path.join(table, f".{self.name}.crc")
        self.original = os.path.join(keep, self.name)
        self.original_crc = os.path.join(keep, f".{self.name}.crc.orig")
        self.replacement = os.path.join(keep, "replacement.parquet")
        if os.path.exists(self.original):
            self.undo()  # a previous run stopped with the file changed
        else:
            import shutil

            shutil.copy2(self.target, self.original + ".tmp")  # copy2: with the modification time
            if os.path.exists(self.crc):
                shutil.copy2(self.crc, self.original_crc)
            os.replace(self.original + ".tmp", self.original)
        if not os.path.exists(self.replacement):
            self._make_replacement(spark)

    def _make_replacement(self, spark):
        import glob
        import shutil

        from pyspark.sql import functions as F

        tmp = os.path.join(self.keep, "replacement-tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        df = spark.read.parquet(self.original)
        df.withColumn("l_comment", F.concat("l_comment", F.lit("*"))).coalesce(1).write.parquet(tmp)
        (part,) = glob.glob(os.path.join(tmp, "part-*.parquet"))
        os.replace(part, self.replacement)
        shutil.rmtree(tmp)

    def apply(self):
        import shutil

        shutil.copyfile(self.replacement, self.target)  # content only: the modification time is now
        if os.path.exists(self.crc):
            os.remove(self.crc)

    def undo(self):
        import shutil

        shutil.copy2(self.original, self.target)
        if os.path.exists(self.original_crc):
            shutil.copy2(self.original_crc, self.crc)
        st = os.stat(self.original)
        os.utime(self.target, ns=(st.st_atime_ns, st.st_mtime_ns))


def redigest_methods(spark, table, files, change, expected, selected):
    """table: a directory of `files` Parquet files with an up-to-date manifest; change: its FileChange; expected: the
    digests of a full hash of the files as they are ("full") and with the change applied ("changed")."""
    import dsha

    def full():
        d = dsha.fingerprint(spark.read.parquet(table)).digest
        check(d == expected["full"], f"full hash {d}, expected {expected['full']}")

    def path(reads, digest, **kw):
        def run():
            r = dsha.fingerprint_path(spark, table, **kw)
            check(r.digest == digest, f"fingerprint_path({kw}) gave {r.digest}, a full hash of the files {digest}")
            check((r.files_total, r.files_read, r.files_reused) == (files, reads, files - reads),
                  f"fingerprint_path({kw}): {r.files_total} files, {r.files_read} read, {r.files_reused} reused; "
                  f"expected {files}, {reads}, {files - reads}")
            check(not r.warnings, f"warnings: {r.warnings}")
        return run

    store = tempfile.mkdtemp(prefix="dsha-bench-store-")
    if "check_unchanged" in selected:  # recorded once, untimed, as the previous run of a pipeline would have
        dsha.record({"t": dsha.Path(table)}, store=store, name="bench", spark=spark)

    def check_unchanged():
        changes = dsha.changed({"t": dsha.Path(table)}, store=store, name="bench", spark=spark)
        check(not changes, f"dsha.changed says {[c.what for c in changes]} for an unchanged table")
        check(changes.current.inputs["t"].fingerprint.digest == expected["full"], "dsha.changed: another digest")

    all_methods = {
        "check_unchanged": (check_unchanged, None, None),
        "full_fingerprint": (full, None, None),
        "path_no_cache": (path(files, expected["full"], use_cache=False), None, None),
        "redigest_manifest": (path(0, expected["full"]), None, None),
        "redigest_one_changed": (path(1, expected["changed"]), change.apply, change.undo),
    }
    slow = {name: s for name, _, s in REDIGEST_METHODS}
    return [(name, all_methods[name][0], slow[name]) + all_methods[name][1:] for name in selected]
