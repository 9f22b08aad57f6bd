"""Runs the `dsha` command line for the tests: in-process by default, through ``dsha.cli.main`` with the suite's own
(borrowed) classic session, so that a CLI test costs a query and not a JVM start; in a fresh process
(``fresh_process=True``) where the test is about what only a process shows: exit codes as the shell sees them, stderr
with the JVM's own start-up output, start-up itself.

Both return a ``subprocess.CompletedProcess`` (``returncode``, ``stdout``, ``stderr`` as text)."""
import contextlib
import io
import subprocess
import sys

# What an owned session would be started with in a fresh process; a borrowed session ignores them.
FRESH_PROCESS_SPARK = ("--master", "local[2]", "--conf", "spark.ui.enabled=false")


def run_cli(*args, fresh_process=False, timeout=300) -> subprocess.CompletedProcess:
    args = [str(a) for a in args]
    if fresh_process:
        from conftest import child_env

        env = child_env()
        env.pop("PYSPARK_SUBMIT_ARGS", None)
        return subprocess.run([sys.executable, "-m", "dsha", *args, *FRESH_PROCESS_SPARK], capture_output=True,
                              text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    from dsha.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as e:  # argparse's own usage errors
            code = e.code if isinstance(e.code, int) else 2
    return subprocess.CompletedProcess(["dsha", *args], code, out.getvalue(), err.getvalue())
