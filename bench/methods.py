"""The methods the benchmark times: their catalogue (name, description, slow?) and, in a child process, the function
that runs each one on a DataFrame. pyspark is imported only inside the functions: the parent process reads the
catalogue without it."""
import os
import sys

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


def logical_hash_noop(d):
    from pyspark.sql import functions as F

    noop(d.select(F.expr("logical_hash(*)")))


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
        # An option the reader ignores makes this relation differ from the cached one, so Spark's CacheManager does
        # not swap in the cached copy of the same files: these methods really read Parquet.
        return spark.read.option("dsha.bench.uncached", "true").parquet(parquet_path)

    all_methods = {
        "scan_noop": lambda: noop(df),
        "read_all_values": lambda: read_all_values(df),
        "xxhash64_bit_xor": lambda: agg1(df, "bit_xor(xxhash64(*))"),
        "xxhash64_sum_dec": lambda: agg1(df, "sum(cast(xxhash64(*) as decimal(38,0)))"),
        "dsha": lambda: agg1(df, "dsha(*)"),
        "dsha_generated": lambda: dsha_generated(df),
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
