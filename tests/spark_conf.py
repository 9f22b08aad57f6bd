"""Runtime SQL settings for tests, shared by tests/python, tests/reliability and bench/methods.py (they put this directory
on sys.path)."""
import json
import os
import socket
import time

ROW_BYTES = "spark.dsha.hashRowBytes"
# Settings every test session starts with, so that every Spark line behaves as Spark 4 does by default: Spark 3.5
# refuses to write dates before 1582 and timestamps before 1900 to Parquet (WRITE_ANCIENT_DATETIME) otherwise.
SESSION_DEFAULTS = {
    "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
}
# Settings of the Python suites' own sessions (tests/python and its Delta, Iceberg and Hive child suites), not of the
# reliability suite's clusters, the CLI's own processes, the smoke tests, README's blocks or the benchmarks, which keep
# Spark's defaults: adaptive query execution off, as in the Scala suite. On these suites' small jobs it re-plans each
# shuffle stage as a job of its own: 30-40% of the driver's CPU on diff and assert_equal alone, ~6% of those test
# files' time with both cores busy (same-run measures). What dsha does differently under it (the tree's plan reading,
# diff's jobs) is tested with it on: tests/python/test_adaptive.py.
SUITE_SESSION = {"spark.sql.adaptive.enabled": "false"}
ADAPTIVE_ON = {"spark.sql.adaptive.enabled": "true"}
# The execution paths every digest test runs in (tests/execution_modes.json, shared with the Scala suites): generated
# code and the interpreted eval with Spark's aggregate, and dsha's partial step that hashes rows from their bytes.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "execution_modes.json"), encoding="utf-8") as _f:
    _MODES = json.load(_f)["modes"]
ALL_MODES = {name: mode["conf"] for name, mode in _MODES.items()}
CODEGEN_MODES = {name: mode["conf"] for name, mode in _MODES.items() if mode["python"]}


def sql_conf(spark, settings: dict):
    """Runs the block with runtime SQL settings (classic or Spark Connect session), then restores the previous values:
    dsha's own ``session_settings``, with values given as any type."""
    from dsha.spark.session import session_settings

    return session_settings(spark, {k: str(v) for k, v in settings.items()})


def codegen(spark, mode: str):
    """sql_conf for one of CODEGEN_MODES."""
    return sql_conf(spark, CODEGEN_MODES[mode])


def connect_server_listens(url: str, seconds: float) -> bool:
    """Whether the Spark Connect server at ``url`` (sc://HOST:PORT[/...]) accepts connections within ``seconds``:
    dev/connect-server returns before its server listens."""
    host, port = url[len("sc://"):].split("/")[0].split(":")
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection((host, int(port)), 1).close()
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)
