"""Runtime SQL settings for tests, shared by tests/python, tests/reliability and bench/run.py (they put this directory
on sys.path)."""
import contextlib

# The execution paths every expression test runs in: generated code and the interpreted eval, both with Spark's
# aggregate; then dsha's partial step that hashes rows from their bytes where it applies (spark.dsha.hashRowBytes).
ROW_BYTES = "spark.dsha.hashRowBytes"

# Settings every test session starts with, so that every Spark line behaves as Spark 4 does by default: Spark 3.5
# refuses to write dates before 1582 and timestamps before 1900 to Parquet (WRITE_ANCIENT_DATETIME) otherwise.
SESSION_DEFAULTS = {
    "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
}
CODEGEN_MODES = {
    "CODEGEN_ONLY": {"spark.sql.codegen.factoryMode": "CODEGEN_ONLY", "spark.sql.codegen.wholeStage": "true",
                     ROW_BYTES: "false"},
    "NO_CODEGEN": {"spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.sql.codegen.wholeStage": "false",
                   ROW_BYTES: "false"},
    "HASH_ROW_BYTES": {"spark.sql.codegen.factoryMode": "CODEGEN_ONLY",
                       "spark.sql.codegen.wholeStage": "true",
                       ROW_BYTES: "true"},
}


@contextlib.contextmanager
def sql_conf(spark, settings: dict):
    """Runs the block with runtime SQL settings (classic or Spark Connect session), then restores the previous values."""
    previous = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, str(v))
    try:
        yield
    finally:
        for k, v in previous.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def codegen(spark, mode: str):
    """sql_conf for one of CODEGEN_MODES."""
    return sql_conf(spark, CODEGEN_MODES[mode])
