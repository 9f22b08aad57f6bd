"""The CLI on corrupt or truncated Parquet: exit code 2, one clear line on stderr, and no digest (not even a
partial one) on stdout. Uses the dsha package's CLI, the only test here that does: once as a process (python -m dsha:
the exit code as the shell sees it, and stderr with whatever the JVM prints, which the CLI's log4j configuration
silences at the root, whatever the failure), and for the other corruptions through ``dsha.cli.main`` with this
suite's session (borrowed; the error each corruption gives, without a JVM start each)."""
import contextlib
import io
import re
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import harness

HEX_DIGEST = re.compile(r"f81b4f5012[0-9a-f]{20,}")
JVM_BANNER = ("WARNING: Using incubator modules",)  # printed by the JVM itself when Spark starts


def run_cli(*args, timeout=300):
    env = dict(harness.launcher_env(), SPARK_TESTING="1")
    return subprocess.run([sys.executable, "-m", "dsha", *map(str, args), "--quiet", "--master", "local[1]"],
                          capture_output=True, text=True, timeout=timeout, env=env)


def run_cli_in_process(spark, *args, conf=None):
    """``dsha.cli.main`` on the suite's session, with ``conf`` set for the call (a borrowed session ignores --conf)."""
    from dsha.cli import main

    args = [str(a) for a in args] + ["--engine", "spark"]
    out, err = io.StringIO(), io.StringIO()
    for k, v in (conf or {}).items():
        spark.conf.set(k, v)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(args)
    finally:
        for k in conf or {}:
            spark.conf.unset(k)
    return subprocess.CompletedProcess(["dsha", *args], code, out.getvalue(), err.getvalue())


def assert_clean_error(done, *mentions):
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr[-3000:])
    assert not HEX_DIGEST.search(done.stdout), f"a digest was printed: {done.stdout!r}"
    assert done.stdout.strip() == "", done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith(JVM_BANNER)]
    assert len(lines) == 1, "expected one line on stderr:\n" + done.stderr[-3000:]
    (line,) = lines
    assert line.startswith("dsha: error: ") and len(line) <= 700, line
    assert "\tat " not in line and "Traceback" not in line, line
    assert any(m.lower() in line.lower() for m in mentions), line
    return line


def write_table(path, rows=20_000, **options):
    rng = np.random.default_rng(1)
    table = pa.table({"id": pa.array(np.arange(rows, dtype=np.int64)),
                      "x": pa.array(rng.normal(size=rows)),
                      "s": pa.array([f"value-{i % 997}" for i in range(rows)])})
    pq.write_table(table, path, **options)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("corrupt")
    good = root / "good.parquet"
    write_table(good)
    data = good.read_bytes()

    truncated_dir = root / "truncated_dir"  # one good file and one cut in half: no digest of the good half
    truncated_dir.mkdir()
    write_table(truncated_dir / "part-0.parquet")
    (truncated_dir / "part-1.parquet").write_bytes(data[: len(data) // 2])

    bad_footer = root / "bad_footer.parquet"  # the footer length points outside the file
    bad_footer.write_bytes(data[:-8] + (2**31 - 1).to_bytes(4, "little") + b"PAR1")

    mangled = root / "mangled.parquet"  # page checksums on; a data page's bytes overwritten
    write_table(mangled, compression="snappy", write_page_checksum=True)
    raw = bytearray(mangled.read_bytes())
    column = pq.ParquetFile(mangled).metadata.row_group(0).column(1)
    start = column.data_page_offset + 64
    raw[start:start + 32] = bytes(32)
    mangled.write_bytes(bytes(raw))
    return {"good": good, "truncated_dir": truncated_dir, "bad_footer": bad_footer, "mangled": mangled}


def test_truncated_file_in_a_directory(files):
    assert_clean_error(run_cli("hash", files["truncated_dir"]), "parquet", "part-1", "corrupt", "magic")


def test_bad_footer(spark, files):
    assert_clean_error(run_cli_in_process(spark, "hash", files["bad_footer"]), "parquet", "bad_footer", "corrupt",
                       "footer")


def test_mangled_page_with_checksum_verification(spark, files):
    done = run_cli_in_process(spark, "hash", files["mangled"],
                              conf={"spark.hadoop.parquet.page.verify-checksum.enabled": "true"})
    assert_clean_error(done, "checksum", "crc", "corrupt", "mangled", "parquet")


def test_compare_with_a_corrupt_side(spark, files):
    done = run_cli_in_process(spark, "compare", files["good"], files["truncated_dir"])
    assert_clean_error(done, "parquet", "part-1", "corrupt", "magic")
