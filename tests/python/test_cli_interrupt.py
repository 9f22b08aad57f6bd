"""Ctrl-C stops the `dsha` command line cleanly at any moment: one `dsha: interrupted` line on stderr, exit 130, and
nothing of the Spark it started left behind (no driver JVM, no temporary directory), within about two seconds.

A real CLI process in a session of its own, signalled as a terminal's Ctrl-C signals: SIGINT to the whole process
group (PySpark's launcher and driver JVM ignore it). Its processes are told apart from everyone else's by a marker
in their command lines; its temporary files go to a directory of the test's own (TMPDIR, and Spark's local dirs)."""
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="the CLI starts its own embedded (classic) Spark; run once")


@pytest.fixture(scope="module")
def busy_input(spark, tmp_path_factory):
    """An input whose Spark digest takes several seconds on two cores: the job is still running when signalled."""
    path = str(tmp_path_factory.mktemp("interrupt") / "big")
    (spark.range(0, 3_000_000, 1, 4)
     .selectExpr("id", "id * 2.5 AS x", "cast(id AS STRING) AS s", "sha2(cast(id AS STRING), 256) AS h")
     .write.parquet(path))
    return path


def _processes_holding(marker):
    """pid -> command line, of the processes whose command line holds ``marker`` (read from /proc)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline:
            found[int(name)] = cmdline
    return found


def _wait_for(condition, process, seconds=180):
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, "the command ended before the moment to interrupt it"
        assert time.monotonic() < deadline, "the moment to interrupt never came"
        time.sleep(0.05)


def _started_job(scratch_root):
    """True once the owned session's SparkContext is up: its block manager's directory exists in the session's
    scratch directory (the command's next step is the digest job)."""
    def up():
        for scratch in os.listdir(scratch_root):
            if scratch.startswith("dsha-spark-"):
                try:
                    if any(d.startswith("blockmgr-") for d in os.listdir(os.path.join(scratch_root, scratch))):
                        return True
                except OSError:
                    pass
        return False
    return up


@pytest.mark.parametrize("moment", ["launcher", "jvm start", "job"])
def test_ctrl_c_ends_everything_the_command_started(busy_input, tmp_path, moment):
    from conftest import child_env

    marker = f"dsha-interrupt-{uuid.uuid4().hex}"
    scratch_root = str(tmp_path / "tmp")
    os.makedirs(scratch_root)
    env = child_env(TMPDIR=scratch_root)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    cli = subprocess.Popen(
        [sys.executable, "-m", "dsha", "hash", busy_input, "--engine", "spark", "--master", "local[2]",
         "--conf", "spark.ui.enabled=false", "--conf", f"spark.dsha.test.marker={marker}"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        if moment == "launcher":  # spark-submit's launcher builds the JVM's command line
            _wait_for(lambda: any("org.apache.spark.launcher.Main" in c for c in _processes_holding(marker).values()),
                      cli)
        elif moment == "jvm start":  # the driver JVM runs (ignoring SIGINT), the session is not up yet
            _wait_for(lambda: any("org.apache.spark.deploy.SparkSubmit" in c
                                  for c in _processes_holding(marker).values()), cli)
            time.sleep(0.5)
            assert not _started_job(scratch_root)(), "the session was up before it could be interrupted"
        else:
            _wait_for(_started_job(scratch_root), cli)
            time.sleep(1.5)
        signalled = time.monotonic()
        os.killpg(cli.pid, signal.SIGINT)
        out, err = cli.communicate(timeout=30)
        took = time.monotonic() - signalled
    finally:
        if cli.poll() is None:
            os.killpg(cli.pid, signal.SIGKILL)
            cli.wait()
    assert cli.returncode == 130, (cli.returncode, err)
    assert out == "", "the job finished before the signal: the input is too small to interrupt"
    assert err.splitlines() == ["dsha: interrupted"], err
    assert took <= 2.0, f"{took:.2f} s from Ctrl-C to exit"
    survivors = _processes_holding(marker)
    assert not survivors, f"left running after Ctrl-C at {moment}: {survivors}"
    assert os.listdir(scratch_root) == [], f"left in the temporary directory: {os.listdir(scratch_root)}"
