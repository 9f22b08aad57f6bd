"""Helpers for the reliability suite (no pytest fixtures here: see conftest.py): the jar, Spark launcher
environment, spark-submit, a Spark standalone cluster of separate JVMs on loopback, digests through SQL.

Everything drives Spark directly (SQL and PySpark), not the dsha Python package (only test_cli.py uses that)."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pyspark

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
def _default_jar() -> str:
    """The dsha package's jar for this pyspark (its Spark line and Scala version)."""
    import dsha

    return dsha.jar_path()


JAR = Path(os.environ.get("DSHA_JAR") or _default_jar()).resolve()
EXTENSION = "io.dsha.registration.DshaExtensions"
SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_VERSION = tuple(int(x) for x in re.findall(r"\d+", pyspark.__version__)[:2])
DIGEST_RE = re.compile(r"^f81b4f5012[0-9a-f]{64,}$")  # multibase base16 of a dsha-v1 multihash
JOB = HERE / "jobs" / "digest_job.py"

sys.path.insert(0, str(HERE / "jobs"))
from dataset import MIXED_COLUMNS, mixed  # noqa: E402,F401  (shared with the spark-submit jobs)

sys.path.insert(0, str(ROOT / "tests"))
from spark_conf import CODEGEN_MODES, SESSION_DEFAULTS, codegen, sql_conf  # noqa: E402,F401  (tests/spark_conf.py)


def local_session(master="local[2,4]", **conf):
    """A classic local session with the dsha jar and extension (local[N,F]: N threads, a task may fail F times)."""
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName("dsha-reliability")
               .config("spark.jars", str(JAR))
               .config("spark.sql.extensions", EXTENSION)
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC"))
    for k, v in {**SESSION_DEFAULTS, **conf}.items():
        builder = builder.config(k, v)
    return builder.getOrCreate()


def _view(df):
    name = f"_dsha_rel_{os.getpid()}_{id(df)}_{time.monotonic_ns()}"
    df.createOrReplaceTempView(name)
    return name


def digest_of(spark, df_or_sql) -> str:
    """``SELECT dsha(*)`` over a DataFrame (or over the query text)."""
    df = spark.sql(df_or_sql) if isinstance(df_or_sql, str) else df_or_sql
    view = _view(df)
    try:
        value = spark.sql(f"SELECT dsha(*) FROM `{view}`").collect()[0][0]
    finally:
        spark.catalog.dropTempView(view)
    assert DIGEST_RE.match(value), value
    return value


def fingerprint_of(spark, df_or_sql):
    df = spark.sql(df_or_sql) if isinstance(df_or_sql, str) else df_or_sql
    view = _view(df)
    try:
        return spark.sql(f"SELECT dsha_fingerprint(*) AS f FROM `{view}`").collect()[0].f
    finally:
        spark.catalog.dropTempView(view)


def analysis_error(spark, query) -> str:
    """The message of the AnalysisException that ``query`` must raise."""
    from pyspark.errors import AnalysisException

    try:
        spark.sql(query).collect()
    except AnalysisException as e:
        return str(e)
    raise AssertionError(f"no AnalysisException for: {query}")


# ------------------------------------------------------------------------------------------ processes and ports

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_env(tmp: Path, **extra) -> dict:
    """Environment for Spark launcher scripts: this pyspark as SPARK_HOME, loopback only, logs under tmp, and no
    settings inherited from an enclosing Spark (Connect) process but the plan's JVM options (launcher_env)."""
    env = launcher_env()
    env.update({
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(tmp / "logs"),
        "SPARK_PID_DIR": str(tmp / "pids"),
        "SPARK_CONF_DIR": str(tmp / "conf"),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    })
    env.pop("PYTHONPATH", None)
    env.update(extra)
    (tmp / "logs").mkdir(parents=True, exist_ok=True)
    conf = tmp / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    # Plain console logging, WARN and above, on stderr: a job's stdout carries only what the job prints.
    (conf / "log4j2.properties").write_text(
        "rootLogger.level = warn\nrootLogger.appenderRef.stderr.ref = console\n"
        "appender.console.type = Console\nappender.console.name = console\nappender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n%ex\n")
    return env


# The test plan's JVM settings (dev/run: C1-compiled code only, the serial collector; `DSHA_SUITE_JAVA_OPTS`), for
# every JVM this suite starts, not only the pytest process's own driver: spark-submit drivers (with the class archive
# of the plan's SPARK_SUBMIT_OPTS), standalone masters and workers, their executors. Each lives seconds to a minute on
# cold code, where C2's compilations on the two cores slowed the cluster tests by ~a third. Semantics do not depend
# on them; without dev/run (nothing set) every JVM runs Java's defaults.
SUITE_JAVA_OPTS = os.environ.get("DSHA_SUITE_JAVA_OPTS", "").strip()
_SUBMIT_OPTS = os.environ.get("SPARK_SUBMIT_OPTS", "").strip()


def launcher_env() -> dict:
    """This process's environment for a process that starts Spark itself: without its Spark and PySpark settings,
    with the plan's JVM settings for Spark's launchers (spark-submit, spark-class)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    if _SUBMIT_OPTS:
        env["SPARK_SUBMIT_OPTS"] = _SUBMIT_OPTS
    if SUITE_JAVA_OPTS:
        env["SPARK_DAEMON_JAVA_OPTS"] = SUITE_JAVA_OPTS
    return env


def kill_group(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """Stops a process started with start_new_session=True and everything in its process group (a worker's
    executors and their Python workers inherit the group): SIGTERM, then SIGKILL after ``grace`` seconds."""
    pgid = proc.pid  # start_new_session: the group id is the leader's pid, even after the leader exited
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.time() + wait
        while time.time() < deadline:
            proc.poll()
            try:
                os.killpg(pgid, 0)  # anyone left in the group?
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            continue
        break
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def spark_submit_async(tmp: Path, master: str, script: Path, args=(), conf=None, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE):
    """Starts spark-submit with the dsha jar and extension, the driver in its own process group (stop it with
    kill_group, or os.killpg(proc.pid, SIGKILL)); returns the Popen."""
    tmp.mkdir(parents=True, exist_ok=True)
    conf = {"spark.sql.extensions": EXTENSION, "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
            "spark.sql.session.timeZone": "UTC", **SESSION_DEFAULTS, **(conf or {})}
    cmd = [str(SPARK_HOME / "bin" / "spark-submit"), "--master", master, "--jars", str(JAR)]
    for k, v in conf.items():
        cmd += ["--conf", f"{k}={v}"]
    cmd += [str(script), *map(str, args)]
    return subprocess.Popen(cmd, stdout=stdout, stderr=stderr, text=True, env=spark_env(tmp),
                            start_new_session=True, cwd=str(tmp))


def spark_submit(tmp: Path, master: str, script: Path, args=(), conf=None, timeout=600):
    """Runs spark-submit with the dsha jar and extension (driver in its own process group, killed on timeout and
    afterwards); returns a CompletedProcess."""
    proc = spark_submit_async(tmp, master, script, args, conf)
    cmd = proc.args
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc, grace=1)
        out, err = proc.communicate()
        raise AssertionError(f"spark-submit timed out after {timeout}s\nstdout:\n{out}\nstderr (tail):\n{err[-4000:]}")
    finally:
        kill_group(proc, grace=1)  # stray children of a finished driver
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def job_result(completed) -> dict:
    """The DSHA_KEY=VALUE lines a job under jobs/ printed; fails with its logs if it did not succeed."""
    values = dict(line.split("=", 1) for line in completed.stdout.splitlines() if line.startswith("DSHA_"))
    assert completed.returncode == 0 and "DSHA_DIGEST" in values, (
        f"job failed (exit {completed.returncode})\nstdout:\n{completed.stdout}\n"
        f"stderr (tail):\n{completed.stderr[-6000:]}")
    assert DIGEST_RE.match(values["DSHA_DIGEST"]), values
    return values


def event_log_conf(directory: Path) -> dict:
    """Plain (unrolled, uncompressed) JSON event logs in ``directory``, readable by speculative_task_starts."""
    directory.mkdir(parents=True, exist_ok=True)
    return {"spark.eventLog.enabled": "true", "spark.eventLog.dir": directory.as_uri(),
            "spark.eventLog.rolling.enabled": "false", "spark.eventLog.compress": "false"}


def _events(event_log_dir: Path, kind: str):
    for f in sorted(p for p in event_log_dir.rglob("*") if p.is_file()):
        for line in f.read_text(errors="replace").splitlines():
            if f'"{kind}"' in line:
                yield json.loads(line)


def task_ends(event_log_dir: Path) -> list:
    """(stage, partition, attempt, speculative, end reason) of every task attempt that ended, from Spark event logs:
    the reason is "Success", "TaskKilled", "ExceptionFailure", ..."""
    return [(e["Stage ID"], e["Task Info"]["Index"], e["Task Info"]["Attempt"], e["Task Info"].get("Speculative"),
             e["Task End Reason"]["Reason"]) for e in _events(event_log_dir, "SparkListenerTaskEnd")]


def speculative_task_starts(event_log_dir: Path) -> list:
    """(stage, partition, host) of every speculative task attempt launched, from Spark event logs."""
    return [(e["Stage ID"], e["Task Info"]["Index"], e["Task Info"]["Host"])
            for e in _events(event_log_dir, "SparkListenerTaskStart") if e["Task Info"].get("Speculative")]


# ------------------------------------------------------------------------------------------ standalone cluster

class StandaloneCluster:
    """A Spark standalone master and workers, each a JVM in its own process group, bound to loopback."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.master_port = free_port()
        self.master_ui = free_port()
        self.url = f"spark://127.0.0.1:{self.master_port}"
        self.master = None
        self.workers = []  # (Popen, host)
        self._logs = []

    def _spawn(self, name, args):
        log = open(self.tmp / "logs" / f"{name}.out", "w") if (self.tmp / "logs").is_dir() else None
        if log is None:
            (self.tmp / "logs").mkdir(parents=True)
            log = open(self.tmp / "logs" / f"{name}.out", "w")
        self._logs.append(log)
        # Workers heartbeat every spark.worker.timeout / 4: master and workers need the same (short) timeout, so
        # that a killed worker is noticed quickly.
        env = spark_env(self.tmp, SPARK_DAEMON_MEMORY="384m", SPARK_MASTER_OPTS="-Dspark.worker.timeout=15",
                        SPARK_WORKER_OPTS="-Dspark.worker.timeout=15")
        return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], stdout=log,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=str(self.tmp))

    def state(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.master_ui}/json/", timeout=5) as r:
            body = r.read()
        try:
            return json.loads(body)
        except ValueError:
            # Not the master's JSON yet (seen once: its HTML page while starting), or another process took the free
            # port before the master bound it, and Spark moved the UI up (its log says so at WARN): ask again.
            moved = re.findall(r"Service 'MasterUI' could not bind on port \d+\. Attempting port (\d+)",
                               (self.tmp / "logs" / "master.out").read_text(errors="replace"))
            self.master_ui = int(moved[-1]) if moved else self.master_ui
            raise ConnectionError(f"the master UI's /json/ did not answer with JSON yet (port {self.master_ui})")

    def alive_workers(self) -> int:
        try:
            return sum(1 for w in self.state().get("workers", []) if w.get("state") == "ALIVE")
        except OSError:
            return -1

    def wait(self, what, predicate, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.master.poll() is not None:
                break
            if predicate():
                return
            time.sleep(0.5)
        raise AssertionError(f"standalone cluster: {what} not reached in {timeout}s; logs:\n{self.log_tail()}")

    def start(self, workers=2, hosts=None):
        self.master = self._spawn("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                             "--port", str(self.master_port), "--webui-port", str(self.master_ui)])
        self.wait("master up", lambda: self.alive_workers() >= 0)
        for i in range(workers):
            self.add_worker(host=(hosts or ["127.0.0.1"] * workers)[i], wait=False)
        self.wait(f"{workers} workers registered", lambda: self.alive_workers() >= workers)
        return self

    def add_worker(self, host="127.0.0.1", wait=True):
        i = len(self.workers)
        work = self.tmp / f"work{i}"
        work.mkdir(exist_ok=True)
        proc = self._spawn(f"worker{i}", ["org.apache.spark.deploy.worker.Worker", self.url, "--host", host,
                                          "--port", str(free_port()), "--webui-port", str(free_port()),
                                          "--cores", "1", "--memory", "1g", "--work-dir", str(work)])
        self.workers.append((proc, host))
        if wait:
            n = sum(1 for p, _ in self.workers if p.poll() is None)
            self.wait(f"{n} workers registered", lambda: self.alive_workers() >= n)
        return i

    def kill_worker(self, i):
        """SIGKILL a worker and its executor (one process group): a lost node, not a clean shutdown."""
        proc, _ = self.workers[i]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def submit_async(self, script, args=(), conf=None):
        """Starts a driver (spark-submit, client mode); returns the Popen (stdout/stderr to files under tmp)."""
        out = open(self.tmp / "driver.out", "w")
        err = open(self.tmp / "driver.err", "w")
        self._logs += [out, err]
        return spark_submit_async(self.tmp, self.url, script, args, self._conf(conf), stdout=out, stderr=err)

    def submit_killing_a_worker(self, script, args, markers: Path, conf=None, after=5, worker=0):
        """Runs a driver whose task attempts each create a file in ``markers`` when they start; once ``after`` have
        started, SIGKILLs a worker with its executor (kill_worker). Returns the driver's CompletedProcess."""
        driver = self.submit_async(script, args, conf)
        try:
            deadline = time.time() + 240
            while len(list(markers.iterdir())) < after:
                assert driver.poll() is None, (self.tmp / "driver.err").read_text()[-5000:]
                assert time.time() < deadline, "the job never got going:\n" + self.log_tail()
                time.sleep(0.2)
            self.kill_worker(worker)
            driver.wait(timeout=400)
        finally:
            kill_group(driver, grace=1)
        return subprocess.CompletedProcess(driver.args, driver.returncode, (self.tmp / "driver.out").read_text(),
                                           (self.tmp / "driver.err").read_text())

    def _conf(self, conf):
        return {"spark.sql.extensions": EXTENSION, "spark.ui.enabled": "false",
                "spark.ui.showConsoleProgress": "false", "spark.sql.session.timeZone": "UTC",
                "spark.executor.memory": "512m", "spark.executor.cores": "1", **SESSION_DEFAULTS,
                **({"spark.executor.extraJavaOptions": SUITE_JAVA_OPTS} if SUITE_JAVA_OPTS else {}), **(conf or {})}

    def submit(self, script, args=(), conf=None, timeout=600):
        return spark_submit(self.tmp, self.url, script, args, self._conf(conf), timeout)

    def log_tail(self, n=3000):
        out = []
        for f in sorted((self.tmp / "logs").glob("*")):
            if f.is_file():
                out.append(f"--- {f.name}\n{f.read_text(errors='replace')[-n:]}")
        return "\n".join(out)

    def stop(self):
        for proc, _ in reversed(self.workers):
            kill_group(proc)
        if self.master is not None:
            kill_group(self.master)
        for log in self._logs:
            log.close()
