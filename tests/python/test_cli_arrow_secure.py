"""`dsha hash --secure` / `--key-file` on the Arrow engine (issue 30 item 2) against Spark: a file Spark wrote (maps
nested in structs and arrays, nulls, decimals, timestamps) gives the jar's dsha-secure-v1, dsha-keyed-v1 and
dsha-keyed-v2 digests of the same file, without a JVM on the Arrow side."""
import os

import pytest
from cli_runner import run_cli

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="the CLI's Arrow engine runs no Spark: once, in the classic pass")
pytest.importorskip("cryptography")

import dsha  # noqa: E402

TABLE = """
SELECT id, IF(id % 3 = 0, NULL, concat('v', CAST(id AS STRING))) AS s, CAST(id / 8 AS DECIMAL(12, 3)) AS d,
       timestamp_micros(id * 86400000123) AS ts,
       named_struct('m', map(CAST(id AS INT), 'a', CAST(id + 100 AS INT), IF(id % 2 = 0, NULL, 'b'))) AS sm,
       array(map('x', id), map()) AS am
FROM range(0, 9)
"""


def test_secure_and_keyed_digests_of_a_spark_file_on_the_arrow_engine(spark, tmp_path):
    path = tmp_path / "t"
    spark.sql(TABLE).repartition(2).write.parquet(str(path))
    df = spark.read.parquet(str(path))
    key = bytes(range(64, 96))
    key_file = tmp_path / "key"
    key_file.write_text(key.hex() + "\n")
    for extra, algorithm, kwargs in ((["--secure"], "dsha-secure-v1", {"algorithm": "secure"}),
                                     (["--key-file", key_file], "dsha-keyed-v1", {"key": key}),
                                     (["--key-file", key_file, "--key-algorithm", "dsha-keyed-v2"], "dsha-keyed-v2",
                                      {"key": key, "algorithm": "keyed-v2"})):
        out = run_cli("hash", path, "--engine", "arrow", *extra)
        assert out.returncode == 0 and "engine: arrow" in out.stderr, out.stderr
        expected = dsha.fingerprint(df, engine="jvm", **kwargs)
        assert expected.algorithm == algorithm and out.stdout.strip() == expected.digest, algorithm
