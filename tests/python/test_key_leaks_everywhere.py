"""Keys never leave the call (issue 34, items 8 and 9): every way of giving dsha a key, each with a fresh random key,
then every place Spark shows things searched for that key in hex, upper-case hex, base64, base64url and Java's
signed-byte form (``-12, 33, ...``). Zero hits is the pass.

One dedicated classic session in a process of its own (this file, run as a script), since the suite's shared session
has no event log, no UI and no DEBUG log: Spark UI on a free port, an event log, the driver (and its local executors)
logging at DEBUG to a file, and a Spark Connect server in the same driver for the Connect ways. Beside it, the CLI
with ``--key-file`` in a process of its own, while ``ps -eo args`` is read over and over. The places searched:
EXPLAIN in every mode (DataFrame and SQL), error messages and Python tracebacks, ``SET``, ``SET -v`` and every
settings listing, the event logs, the UI's REST API and pages, the DEBUG logs, both processes' output, and the process
listings. A key planted on purpose in each kind of place proves the search finds what is there.
"""
import base64
import json
import os
import re
import subprocess
import sys
import threading
import time

import pytest

MODE = os.environ.get("DSHA_SPARK_MODE", "classic")
# Transport-independent: the module starts its own classic driver with a Spark Connect server in it, so it runs once,
# in the classic pass (the Connect ways go through that server).
pytestmark = pytest.mark.skipif(MODE == "connect", reason="runs its own Spark Connect server; classic pass only")

# Every way of giving a key, by name: (what is expected: "ok" a digest, "refused" an error that names no key).
WAYS = {
    "sql_hex": "ok",                    # SELECT dsha_keyed('<hex>', ...), every EXPLAIN of it
    "sql_upper_hex_fingerprint": "ok",  # upper-case hex, dsha_keyed_fingerprint
    "sql_base64_state": "ok",           # base64, dsha_keyed_state
    "sql_binary": "ok",                 # X'<hex>'
    "sql_cte": "ok",                    # WITH c AS (SELECT dsha_keyed('<key>', ...))
    "sql_scalar_subquery": "ok",        # (SELECT dsha_keyed('<key>', ...)) in a projection
    "sql_from_subquery": "ok",          # FROM (SELECT dsha_keyed_state('<key>', ...))
    "sql_in_subquery": "ok",            # WHERE x IN (SELECT dsha_keyed(...))
    "select_expr_subquery": "ok",       # df.selectExpr("(SELECT dsha_keyed('<key>', ...))")
    "f_expr": "ok",                     # F.expr("dsha_keyed('<key>', id)")
    "sql_script": "ok",                 # BEGIN ... END (Spark 4)
    "sql_unhex": "refused",             # dsha_keyed(unhex('<hex>'), ...)
    "sql_concat": "refused",            # dsha_keyed(concat('<half>', '<half>'), ...)
    "sql_short_key": "refused",         # a 12-byte key: no key, refused without echoing it
    "sql_parameter": "refused",         # spark.sql("SELECT dsha_keyed(:k, id) ...", args={"k": key})
    "sql_parse_error": "refused",       # a syntax error in a statement holding a key
    "sql_ansi_runtime_error": "refused",  # ANSI division by zero in an argument: Spark's SQL context
    "sql_temp_view": "ok",              # CREATE TEMP VIEW v AS SELECT dsha_keyed('<key>', ...), DESCRIBE, EXPLAIN
    "sql_variable": "refused",          # DECLARE VARIABLE k = '<hex>'; dsha_keyed(k, ...) (Spark 4)
    "set_quoted": "ok",                 # SET spark.dsha.secret.NAME = '<key>'; conf:NAME
    "set_bare": "ok",                   # SET spark.dsha.secret.NAME = <key>; conf:NAME#dsha-keyed-v2
    "conf_set_python": "ok",            # spark.conf.set("spark.dsha.secret.NAME", key); conf:NAME
    "py_key_bytes": "ok",               # dsha.fingerprint / equal / state (key=bytes)
    "py_key_text_v2": "ok",             # dsha.fingerprint(key=base64url text, algorithm="keyed-v2")
    "py_key_failed": "refused",         # dsha.fingerprint(..., "no_such_column", key=...): the traceback
    "py_column": "ok",                  # dsha.functions.dsha_keyed(key, "*") and _state, explained in every mode
    "py_column_unused": "ok",           # a Column made and never used, then other jobs
    "py_column_failed": "refused",      # a Column whose query fails analysis
    "py_lit_column": "ok",              # dsha_keyed(F.lit('<hex>'), ...): a Column holding the key as a literal
    "scala_lit_column": "ok",           # the Scala/Java API: call_function("dsha_keyed", lit("<hex>"), col("id"))
    "scala_key_bytes": "ok",            # dsha's Scala/Java API: io.dsha.functions.dsha_keyed(keyBytes, algorithm, cols)
    "py_files": "ok",                   # dsha.write(key=) and dsha.fingerprint_path(key=)
    "py_jarfree_key": "ok",             # the jar-free path: dsha.fingerprint / equal / state(key=, engine="python")
    "py_jarfree_conf": "ok",            # the jar-free path: spark.conf.set(NAME, key); key="conf:NAME#dsha-keyed-v2"
    "py_jarfree_failed": "refused",     # the jar-free path: a key of 12 bytes, refused before any job
    "py_jarfree_no_aes": "refused",     # the jar-free path, dsha-keyed-v2 on executors without cryptography: the
                                        # workers' error, and the one line it becomes
    "connect_py_key": "ok",             # Spark Connect: dsha.fingerprint(key=bytes)
    "connect_sql_literal": "ok",        # Spark Connect: spark.sql("SELECT dsha_keyed('<hex>', ...)")
    "connect_column": "ok",             # Spark Connect: dsha.functions.dsha_keyed(key, ...)
    "connect_lit_column": "ok",         # Spark Connect: dsha_keyed(F.lit('<hex>'), ...)
    "connect_jarfree_key": "ok",        # Spark Connect, the jar-free path: dsha.fingerprint(key=, engine="python")
    "cli_key_file": "ok",               # dsha hash DIR --key-file FILE, in a process of its own
}
# What each refusal says.
LITERAL_ONLY = "must be a constant written as a literal"
REFUSALS = {"sql_unhex": LITERAL_ONLY, "sql_concat": LITERAL_ONLY, "sql_parameter": LITERAL_ONLY,
            "sql_variable": LITERAL_ONLY,
            "sql_short_key": "a key needs at least 16", "sql_parse_error": "PARSE_SYNTAX_ERROR",
            "sql_ansi_runtime_error": "DIVIDE_BY_ZERO", "py_key_failed": "no_such_column",
            "py_column_failed": "no_such_column", "py_jarfree_failed": "has 12 bytes: a key needs at least 16",
            "py_jarfree_no_aes": "the executors' Python has no cryptography"}
# A way the Spark line does not have: the driver records it as not applicable.
SPARK4_ONLY = {"sql_script", "sql_variable"}
# Known limits, each stated in docs/tamper-evident.md (the test fails if one stops leaking: strict).
LIMITS = {
    "connect_sql_literal": "Spark Connect sends SQL text in its request, and its server shows the request (operation "
                           "events in the event log, job descriptions, the UI's Connect tab) before dsha's parser "
                           "sees it: over Connect, give keys with key= (docs/tamper-evident.md)",
    "sql_variable": "dsha refuses the variable as a key, but the DECLARE VARIABLE statement that put the key in it is "
                    "Spark's, not a dsha call: its text in the parser's DEBUG log, its CreateVariable plan in the "
                    "event log and the UI's SQL pages (docs/tamper-evident.md)",
    "scala_lit_column": "a Scala or Java Column built with lit(key) holds the key in the plan the program made: "
                        "explain(extended)'s parsed plan shows it (docs/tamper-evident.md)",
}

ENCODINGS = ("hex", "HEX", "base64", "base64url", "signed bytes")
EXPLAIN_MODES = ("simple", "extended", "codegen", "cost", "formatted")


def _forms(key: bytes):
    """The key as text, in each encoding searched."""
    return {"hex": key.hex(), "HEX": key.hex().upper(), "base64": base64.b64encode(key).decode(),
            "base64url": base64.urlsafe_b64encode(key).decode().rstrip("="),
            "signed bytes": ", ".join(str(b - 256 if b > 127 else b) for b in key)}


# ---------------------------------------------------------------------------------------------------------------------
# The search: every window of 8 bytes of a key (16 hex digits; 12 base64 characters, 9 bytes; 8 signed bytes) in any
# text, whatever surrounds it. Hex is compared case-insensitively; signed-byte lists (Java's Arrays.toString, Python's
# list of bytes) are read back into bytes.

HEX_W, B64_W, BYTES_W = 16, 12, 8
_HEX_RUN = re.compile(rf"[0-9a-fA-F]{{{HEX_W},}}")
_B64_RUN = re.compile(rf"[A-Za-z0-9+/_-]{{{B64_W},}}")
_NUMBERS = re.compile(rf"-?\d{{1,3}}(?:\s*,\s*-?\d{{1,3}}){{{BYTES_W - 1},}}")


class Scanner:
    def __init__(self, keys):
        self.windows = {}  # window text -> (way, encoding)
        for way, key in keys.items():
            forms = _forms(key)
            for enc in ("hex",):
                self._add(forms[enc], HEX_W, way, "hex")
            for enc in ("base64", "base64url"):
                self._add(forms[enc], B64_W, way, enc)
            self._add(bytes(key).hex(), 2 * BYTES_W, way, "bytes")

    def _add(self, text, width, way, enc):
        for i in range(len(text) - width + 1):
            self.windows[(enc if enc == "bytes" else "t", text[i:i + width])] = (way, enc)

    def hits(self, text):
        """(way, encoding, excerpt) for every key window found in text."""
        found = {}
        for m in _HEX_RUN.finditer(text):
            run = m.group(0)
            for i in range(len(run) - HEX_W + 1):
                w = run[i:i + HEX_W]
                hit = self.windows.get(("t", w.lower()))
                if hit:
                    enc = "HEX" if w.isupper() or (w.isdigit() and run.isupper()) else "hex"
                    found.setdefault((hit[0], enc), _excerpt(text, m.start() + i))
                    break
        for m in _B64_RUN.finditer(text):
            run = m.group(0)
            for i in range(len(run) - B64_W + 1):
                hit = self.windows.get(("t", run[i:i + B64_W]))
                if hit and hit[1] != "hex":
                    found.setdefault(hit, _excerpt(text, m.start() + i))
                    break
        for m in _NUMBERS.finditer(text):
            numbers = [int(n) for n in re.findall(r"-?\d+", m.group(0))]
            if not all(-128 <= n <= 255 for n in numbers):
                continue
            hexed = bytes(n & 0xFF for n in numbers).hex()
            for i in range(0, len(hexed) - 2 * BYTES_W + 1, 2):
                hit = self.windows.get(("bytes", hexed[i:i + 2 * BYTES_W]))
                if hit:
                    found.setdefault((hit[0], "signed bytes"), _excerpt(text, m.start()))
                    break
        return found


def _excerpt(text, at):
    return text[max(0, at - 80):at + 80].replace("\n", " ")


# Where each scanned file comes from (by its path under the output directory).
def _source_of(rel):
    for prefix, source in (("explain", "EXPLAIN"), ("errors", "errors and tracebacks"), ("settings", "settings"),
                           ("events", "event log"), ("rest", "UI REST API and pages"), ("logs", "DEBUG log"),
                           ("ps", "process listing"), ("output", "process output"), ("outcomes", "outcomes")):
        if rel.startswith(prefix):
            return source
    return rel


# ---------------------------------------------------------------------------------------------------------------------
# The run: the driver process and the CLI process side by side, the process listing read until both end.

CANARY = "canary"  # the key planted on purpose, once in each kind of place


def _log4j2(path):
    return "\n".join([
        "rootLogger.level = debug", "rootLogger.appenderRef.file.ref = file",
        "appender.file.type = File", "appender.file.name = file", f"appender.file.fileName = {path}",
        "appender.file.layout.type = PatternLayout", "appender.file.layout.pattern = %d %p %c: %m%n%ex",
        # Transport and server internals: bytes on the wire, nothing dsha or Spark SQL writes.
        *(f"logger.q{i}.name = {name}\nlogger.q{i}.level = info" for i, name in enumerate(
            ("io.netty", "org.sparkproject.jetty", "org.eclipse.jetty", "org.apache.hadoop", "io.grpc",
             "org.sparkproject.connect.grpc", "org.apache.spark.network", "org.apache.spark.rpc",
             "org.sparkproject.connect.io.grpc", "org.apache.spark.util.ShutdownHookManager"))),
        ""])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("key-leaks")
    keys = {way: os.urandom(12 if way in ("sql_short_key", "py_jarfree_failed") else 32) for way in WAYS}
    keys[CANARY] = os.urandom(32)
    for d in ("logs", "events", "cli-events", "work"):
        (out / d).mkdir()
    # The keys go to the driver in a file outside the scanned tree.
    secrets = tmp_path_factory.mktemp("key-leaks-keys")
    (secrets / "keys.json").write_text(json.dumps({w: k.hex() for w, k in keys.items()}))
    (out / "log4j2-driver.properties").write_text(_log4j2(out / "logs" / "driver.log"))
    (out / "log4j2-cli.properties").write_text(_log4j2(out / "logs" / "cli.log"))
    # The CLI's input: a small Parquet file, and its key in a file.
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = out / "work" / "cli-data"
    data.mkdir()
    pq.write_table(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}), str(data / "part-0.parquet"))
    (secrets / "cli.key").write_text(base64.b64encode(keys["cli_key_file"]).decode() + "\n")

    sys.path.insert(0, os.path.dirname(__file__))
    from conftest import child_env

    env = child_env()
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    # The CLI keeps a caller's driver options (its own log settings otherwise).
    cli_env = dict(env, PYSPARK_SUBMIT_ARGS=f'--driver-java-options "-Dlog4j2.configurationFile=file:'
                                            f'{out / "log4j2-cli.properties"}" pyspark-shell')
    started = time.monotonic()
    driver_out, cli_out = open(out / "output-driver.txt", "w"), open(out / "output-cli.txt", "w")  # noqa: SIM115
    driver = subprocess.Popen([sys.executable, __file__, str(out), str(secrets / "keys.json")], env=env,
                              stdout=driver_out, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL)
    cli = subprocess.Popen(
        [sys.executable, "-m", "dsha", "hash", str(data), "--key-file", str(secrets / "cli.key"), "--json",
         "--verbose", "--master", "local[1]", "--conf", "spark.ui.enabled=false",
         "--conf", "spark.eventLog.enabled=true", "--conf", "spark.eventLog.compress=false",
         "--conf", f"spark.eventLog.dir={out / 'cli-events'}"],
        env=cli_env, stdout=cli_out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    # The canary in a process's arguments, for the listing's own self-check.
    planted = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)", keys[CANARY].hex()])
    listings = set()

    def read_ps():
        while driver.poll() is None or cli.poll() is None:
            ps = subprocess.run(["ps", "-eww", "-o", "args"], capture_output=True, text=True)
            listings.update(ps.stdout.splitlines())
            time.sleep(0.2)

    reader = threading.Thread(target=read_ps)
    reader.start()
    try:
        driver.wait(timeout=600)
        cli.wait(timeout=300)
    finally:
        for p in (driver, cli, planted):
            if p.poll() is None:
                p.kill()
        reader.join()
        driver_out.close()
        cli_out.close()
    planted.wait()
    (out / "ps.txt").write_text("\n".join(sorted(listings)))
    elapsed = time.monotonic() - started
    assert driver.returncode == 0, (out / "output-driver.txt").read_text()[-5000:]
    assert cli.returncode == 0, (out / "output-cli.txt").read_text()[-5000:]

    scanner = Scanner(keys)
    hits = {}  # way -> [(source, encoding, file, excerpt)]
    scanned = {}  # source -> bytes scanned
    for root, _, files in os.walk(out):
        for f in files:
            path = os.path.join(root, f)
            rel = os.path.relpath(path, out)
            if rel.startswith("work") or rel.startswith("log4j2"):
                continue
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            source = _source_of(rel.replace("cli-events", "events"))
            scanned[source] = scanned.get(source, 0) + len(text)
            for (way, enc), excerpt in scanner.hits(text).items():
                hits.setdefault(way, []).append((source, enc, rel, excerpt))
    outcomes = json.loads((out / "outcomes.json").read_text())
    cli_result = json.loads((out / "output-cli.txt").read_text().strip().splitlines()[-1])
    outcomes["cli_key_file"] = {"status": "ok", "digest": cli_result["digest"]}
    print(f"key leak run: {elapsed:.1f} s; scanned {scanned}")
    return {"hits": hits, "outcomes": outcomes, "scanned": scanned, "out": out}


def test_the_search_finds_a_planted_key_in_every_kind_of_place(run):
    """The canary key was put, on purpose, into one place of each kind, each in another encoding: finding it there is
    what makes zero hits for the real keys mean something."""
    found = {(source, enc) for source, enc, _, _ in run["hits"].get(CANARY, [])}
    # Where it was put: explain (hex), an error text (signed bytes), a setting (base64url: SET, job properties in the
    # event log, the UI), a job description (HEX: REST jobs, event log), a DEBUG log line (base64), a process's
    # arguments (hex). base64 and base64url share most windows, so either names a base64 find.
    b64 = {"base64", "base64url"}
    for source, encodings in (("EXPLAIN", {"hex"}), ("errors and tracebacks", {"signed bytes"}), ("settings", b64),
                              ("event log", b64), ("event log", {"HEX"}), ("UI REST API and pages", {"HEX"}),
                              ("UI REST API and pages", b64), ("DEBUG log", b64), ("process listing", {"hex"})):
        assert any((source, enc) in found for enc in encodings), (source, encodings, sorted(found))
    assert {enc for _, enc in found} >= set(ENCODINGS) - {"base64"}, sorted(found)
    # Every kind of place was read, and holds text.
    for source in ("EXPLAIN", "errors and tracebacks", "settings", "event log", "UI REST API and pages", "DEBUG log",
                   "process listing", "process output"):
        assert run["scanned"].get(source, 0) > 500, (source, run["scanned"])


def test_the_search_reads_partial_keys_in_every_encoding():
    key = os.urandom(16)
    scanner = Scanner({"k": key})
    for enc, text in _forms(key).items():
        # 29 of 32 hex digits (what Spark's ANSI context once showed), a base64 tail, 9 of 16 signed bytes.
        part = {"hex": text[3:], "HEX": text[:29], "base64": text[4:18], "base64url": text[4:18],
                "signed bytes": ", ".join(text.split(", ")[5:14])}[enc]
        got = scanner.hits(f"before [{part}] after")
        assert any(way == "k" for way, _ in got), (enc, part)
    assert scanner.hits(_forms(os.urandom(16))["hex"] + " " + key.hex()[:12]) == {}


@pytest.mark.parametrize("way", sorted(WAYS))
def test_no_key_anywhere(run, way):
    outcome = run["outcomes"][way]
    if outcome.get("status") == "n/a":
        pytest.skip(outcome["reason"])
    # The way did what it should: a digest, or a refusal with a reason.
    if WAYS[way] == "ok":
        assert outcome.get("status") == "ok" and str(outcome.get("digest", "")).startswith(("f90b4f50120",
                                                                                             "f91b4f50120")), outcome
    else:
        assert outcome.get("status") == "refused" and REFUSALS[way] in outcome["error"], outcome
        if REFUSALS[way] == LITERAL_ONLY:
            assert "conf:NAME" in outcome["error"] and "key=" in outcome["error"], outcome
    hits = run["hits"].get(way, [])
    if way in LIMITS:
        # A documented limit (docs/tamper-evident.md): it must still be one, else the limit goes.
        assert hits, f"{way} no longer shows its key: remove it from LIMITS and from docs/tamper-evident.md"
        pytest.xfail(LIMITS[way])
    assert not hits, "\n".join(f"{way}: the key in {enc} in {source} ({rel}): ...{excerpt}..."
                               for source, enc, rel, excerpt in hits[:20])


# ---------------------------------------------------------------------------------------------------------------------
# The driver: run as a script by the fixture, in a process of its own.

def _drive(out, keys_file):
    import contextlib
    import io
    import socket
    import traceback
    import urllib.request

    with open(keys_file) as f:
        keys = {w: bytes.fromhex(k) for w, k in json.load(f).items()}
    hexes = {w: k.hex() for w, k in keys.items()}
    import pyspark
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import dsha
    from dsha.functions import dsha_keyed, dsha_keyed_state

    spark4 = int(pyspark.__version__.split(".")[0]) >= 4
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        connect_port = s.getsockname()[1]
    builder = (dsha.configure(SparkSession.builder.master("local[2]"))
               .config("spark.ui.enabled", "true").config("spark.ui.port", "0")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.eventLog.enabled", "true").config("spark.eventLog.compress", "false")
               .config("spark.eventLog.dir", os.path.join(out, "events"))
               .config("spark.driver.extraJavaOptions",
                       f"-Dlog4j2.configurationFile=file:{os.path.join(out, 'log4j2-driver.properties')}")
               .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
               .config("spark.connect.grpc.binding.port", str(connect_port))
               .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC"))
    started = time.monotonic()
    spark = builder.getOrCreate()
    phases = {"start": time.monotonic() - started}
    if spark4:
        spark.conf.set("spark.sql.scripting.enabled", "true")

    outcomes = {}
    files = {name: open(os.path.join(out, name + ".txt"), "w")  # noqa: SIM115 (closed at the end)
             for name in ("explain", "errors", "settings")}

    def write(kind, way, text):
        files[kind].write(f"\n## {way}\n{text}\n")

    every_mode = {"sql_hex", "sql_binary", "sql_cte", "sql_in_subquery", "sql_unhex", "sql_temp_view", "py_column",
                  "py_lit_column", "scala_lit_column", "connect_sql_literal", "connect_column", "connect_lit_column",
                  CANARY}

    def explain(way, df):
        # Every mode for a sample of the ways; the others in the two that print every plan (parsed to physical) and
        # every node's arguments.
        for mode in EXPLAIN_MODES if way in every_mode else ("extended", "formatted"):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                df.explain(mode=mode)
            write("explain", f"{way} ({mode})", buf.getvalue())

    def explain_sql(way, session, query):
        for mode in ("", "EXTENDED", "CODEGEN", "COST", "FORMATTED"):
            write("explain", f"{way} (EXPLAIN {mode})", session.sql(f"EXPLAIN {mode} {query}").collect()[0][0])

    def attempt(way, fn):
        t = time.monotonic()
        try:
            outcomes[way] = {"status": "ok", "digest": str(fn())}
        except Exception as e:
            write("errors", way, traceback.format_exc())
            write("errors", way + " (str)", str(e))
            outcomes[way] = {"status": "refused", "error": str(e).strip()[:2000]}
        outcomes[way]["seconds"] = round(time.monotonic() - t, 2)

    def sql_way(way, query, first=lambda r: r[0], session=None, sql_explain=False):
        session = session or spark

        def go():
            df = session.sql(query)
            explain(way, df)
            value = first(df.collect()[0])
            if sql_explain:  # EXPLAIN statements of every mode (the same parser; a sample of the ways)
                explain_sql(way, session, query)
            return value
        attempt(way, go)

    base = spark.range(5)
    h = hexes
    b64 = {w: base64.b64encode(k).decode() for w, k in keys.items()}
    url = {w: base64.urlsafe_b64encode(k).decode().rstrip("=") for w, k in keys.items()}

    # The canary, once in each kind of place (each in its own encoding).
    explain(CANARY, spark.range(1).select(F.lit(h[CANARY]).alias("planted")))
    write("errors", CANARY, str([b - 256 if b > 127 else b for b in keys[CANARY]]))
    spark.conf.set("spark.dsha.test.planted", url[CANARY])  # SET, getAll; job properties in the event log
    spark.sparkContext.setJobDescription("planted " + h[CANARY].upper())  # REST jobs, event log
    spark.range(3).count()
    spark.sparkContext.setJobDescription(None)
    spark._jvm.org.slf4j.LoggerFactory.getLogger("io.dsha.planted").debug("planted " + b64[CANARY])

    # SQL literals, in every place a query can hold one.
    sql_way("sql_hex", f"SELECT dsha_keyed('{h['sql_hex']}', id) AS d FROM range(5)", sql_explain=True)
    sql_way("sql_upper_hex_fingerprint",
            f"SELECT dsha_keyed_fingerprint('{h['sql_upper_hex_fingerprint'].upper()}', id, id * 2).digest "
            "FROM range(5)")
    sql_way("sql_base64_state",
            f"SELECT dsha_final(dsha_keyed_state('{b64['sql_base64_state']}', id)) FROM range(5)")
    sql_way("sql_binary", f"SELECT dsha_keyed(X'{h['sql_binary']}', id) FROM range(5)", sql_explain=True)
    sql_way("sql_cte", f"WITH c AS (SELECT dsha_keyed('{h['sql_cte']}', id) AS d FROM range(5)) SELECT d FROM c",
            sql_explain=True)
    sql_way("sql_scalar_subquery",
            f"SELECT id, (SELECT dsha_keyed('{h['sql_scalar_subquery']}', id) FROM range(4)) AS d FROM range(2)",
            first=lambda r: r.d)
    sql_way("sql_from_subquery", f"SELECT dsha_final(s) FROM (SELECT dsha_keyed_state('{b64['sql_from_subquery']}', "
                                 "id) AS s FROM range(5)) AS t")
    sql_way("sql_in_subquery", f"SELECT d FROM (SELECT dsha_keyed('{h['sql_in_subquery']}', id) AS d FROM range(5)) "
                               f"WHERE d IN (SELECT dsha_keyed('{h['sql_in_subquery']}', id) FROM range(5))",
            sql_explain=True)

    def select_expr():
        df = spark.range(2).selectExpr(f"(SELECT dsha_keyed('{h['select_expr_subquery']}', id) FROM range(4)) AS d")
        explain("select_expr_subquery", df)
        return df.first().d
    attempt("select_expr_subquery", select_expr)

    def f_expr():
        df = base.agg(F.expr(f"dsha_keyed('{url['f_expr']}', id)").alias("d"))
        explain("f_expr", df)
        return df.first().d
    attempt("f_expr", f_expr)

    if spark4:
        sql_way("sql_script", f"BEGIN SELECT dsha_keyed('{h['sql_script']}', id) AS d FROM range(5); END")
    else:
        outcomes["sql_script"] = {"status": "n/a", "reason": f"Spark {pyspark.__version__} has no SQL scripts"}

    # Keys as expressions, and keys that are no keys: refused, with no key in the error.
    sql_way("sql_unhex", f"SELECT dsha_keyed(unhex('{h['sql_unhex']}'), id) FROM range(5)", sql_explain=True)
    half = len(h["sql_concat"]) // 2
    sql_way("sql_concat", f"SELECT dsha_keyed(concat('{h['sql_concat'][:half]}', '{h['sql_concat'][half:]}'), id) "
                          "FROM range(5)")
    sql_way("sql_short_key", f"SELECT dsha_keyed('{h['sql_short_key']}', id) FROM range(5)")
    attempt("sql_parameter", lambda: spark.sql("SELECT dsha_keyed(:k, id) FROM range(5)",
                                               args={"k": h["sql_parameter"]}).first()[0])
    attempt("sql_parse_error", lambda: spark.sql(f"SELECT dsha_keyed('{h['sql_parse_error']}', id FROM range(5)"))

    def ansi():
        spark.conf.set("spark.sql.ansi.enabled", "true")
        try:
            return spark.sql(f"SELECT dsha_keyed('{h['sql_ansi_runtime_error']}', 1 / (id - id)) FROM range(3)"
                             ).first()[0]
        finally:
            spark.conf.unset("spark.sql.ansi.enabled")
    attempt("sql_ansi_runtime_error", ansi)

    def temp_view():
        spark.sql(f"CREATE OR REPLACE TEMP VIEW keyed_view AS SELECT dsha_keyed('{h['sql_temp_view']}', id) AS d "
                  "FROM range(5)")
        write("explain", "sql_temp_view (DESCRIBE)",
              "\n".join(str(r) for r in spark.sql("DESCRIBE TABLE EXTENDED keyed_view").collect()))
        write("explain", "sql_temp_view (catalog)", str(spark.catalog.listTables()))
        df = spark.table("keyed_view")
        explain("sql_temp_view", df)
        explain_sql("sql_temp_view", spark, "SELECT * FROM keyed_view")
        return df.first().d
    attempt("sql_temp_view", temp_view)

    # A key held in a SQL session variable (Spark 4): refused as a key, like any expression.
    if spark4:
        def sql_variable():
            spark.sql(f"DECLARE OR REPLACE VARIABLE keyed_var = '{h['sql_variable']}'")
            try:
                return spark.sql("SELECT dsha_keyed(keyed_var, id) FROM range(5)").first()[0]
            finally:
                spark.sql("DROP TEMPORARY VARIABLE IF EXISTS keyed_var")
        attempt("sql_variable", sql_variable)
    else:
        outcomes["sql_variable"] = {"status": "n/a", "reason": f"Spark {pyspark.__version__} has no SQL variables"}

    # Keys in the session: SET (quotes or not), conf:NAME.
    def set_way(way, statement, reference):
        def go():
            write("settings", way + " (SET's result)", str(spark.sql(statement).collect()))
            df = spark.sql(f"SELECT dsha_keyed('conf:{reference}', id) AS d FROM range(5)")
            explain(way, df)
            return df.first().d
        attempt(way, go)
    set_way("set_quoted", f"SET spark.dsha.secret.quoted = '{h['set_quoted']}'", "spark.dsha.secret.quoted")
    set_way("set_bare", f"SET spark.dsha.secret.bare = {b64['set_bare']}", "spark.dsha.secret.bare#dsha-keyed-v2")

    def conf_set_python():
        spark.conf.set("spark.dsha.secret.python", url["conf_set_python"])
        return spark.sql("SELECT dsha_keyed('conf:spark.dsha.secret.python', id) FROM range(5)").first()[0]
    attempt("conf_set_python", conf_set_python)

    # Python's key=.
    def py_key_bytes():
        k = keys["py_key_bytes"]
        fp = dsha.fingerprint(base, key=k)
        assert dsha.equal(base, spark.range(5).orderBy(F.desc("id")), key=k)
        dsha.state(base, key=k)
        return fp.digest
    attempt("py_key_bytes", py_key_bytes)
    attempt("py_key_text_v2", lambda: dsha.fingerprint(base, key=url["py_key_text_v2"], algorithm="keyed-v2").digest)
    attempt("py_key_failed", lambda: dsha.fingerprint(base, "id", "no_such_column", key=keys["py_key_failed"]))

    def py_column():
        df = base.agg(dsha_keyed(keys["py_column"], "*").alias("d"), dsha_keyed_state(b64["py_column"], "id"))
        explain("py_column", df)
        return df.first().d
    attempt("py_column", py_column)

    def py_column_unused():
        unused = dsha_keyed(keys["py_column_unused"], "id")
        spark.range(10).groupBy((F.col("id") % 2).alias("k")).count().collect()  # other jobs after it
        assert unused is not None
        return base.agg(dsha_keyed(h["py_column_unused"], "id")).first()[0]
    attempt("py_column_unused", py_column_unused)
    attempt("py_column_failed", lambda: base.agg(dsha_keyed(keys["py_column_failed"], "no_such_column")).first())

    def py_lit_column():
        df = base.agg(dsha_keyed(F.lit(h["py_lit_column"]), "id").alias("d"))
        explain("py_lit_column", df)
        return df.first().d
    attempt("py_lit_column", py_lit_column)

    def scala_lit_column():
        # What a Scala or Java program writes with Spark's own API: call_function("dsha_keyed", lit("<hex>"),
        # col("id")), through Py4J (dsha's io.dsha.functions.dsha_keyed(keyBytes, ...) is the way that hides it).
        from pyspark.sql import DataFrame
        jf, gateway = spark._jvm.org.apache.spark.sql.functions, spark.sparkContext._gateway
        arguments = gateway.new_array(spark._jvm.org.apache.spark.sql.Column, 2)
        arguments[0], arguments[1] = jf.lit(h["scala_lit_column"]), jf.col("id")
        column = jf.call_function("dsha_keyed", arguments).alias("d")
        df = DataFrame(spark._jsparkSession.range(5).agg(
            column, gateway.new_array(spark._jvm.org.apache.spark.sql.Column, 0)), spark)
        explain("scala_lit_column", df)
        return df.first().d
    attempt("scala_lit_column", scala_lit_column)

    def scala_key_bytes():
        # dsha's own Scala/Java keyed Column (the key as bytes, kept out of the plan), through Py4J.
        from pyspark.sql import DataFrame
        gateway = spark.sparkContext._gateway
        arguments = gateway.new_array(spark._jvm.org.apache.spark.sql.Column, 1)
        arguments[0] = spark._jvm.org.apache.spark.sql.functions.col("id")
        column = spark._jvm.io.dsha.functions.dsha_keyed(
            bytearray(keys["scala_key_bytes"]), "dsha-keyed-v2", arguments).alias("d")
        df = DataFrame(spark._jsparkSession.range(5).agg(
            column, gateway.new_array(spark._jvm.org.apache.spark.sql.Column, 0)), spark)
        explain("scala_key_bytes", df)
        expected = dsha.fingerprint(spark.range(5), key=keys["scala_key_bytes"], algorithm="keyed-v2").digest
        assert df.first().d == expected
        return expected
    attempt("scala_key_bytes", scala_key_bytes)

    def py_files():
        path = os.path.join(out, "work", "written")
        dsha.write(spark.range(20).repartition(2), path, key=keys["py_files"])
        return dsha.fingerprint_path(spark, path, key=b64["py_files"]).digest
    attempt("py_files", py_files)

    # The jar-free path (Python on the executors, the key pickled in the function mapInArrow sends them): its plan
    # explained in every mode, its jobs in the event log, the UI and the DEBUG log like every other.
    from dsha.jarfree.digests import partition_states
    from dsha.jarfree.keys import Secret

    def py_jarfree_key():
        k = keys["py_jarfree_key"]
        for algorithm in ("dsha-keyed-v1", "dsha-keyed-v2"):
            explain("py_jarfree_key", partition_states(base, bytes(32), algorithm, Secret(k)))
        fp = dsha.fingerprint(base, key=k, engine="python")
        assert dsha.equal(base, spark.range(5).orderBy(F.desc("id")), key=h["py_jarfree_key"], engine="python")
        assert dsha.state(base, key=b64["py_jarfree_key"], algorithm="keyed-v2", engine="python")
        return fp.digest
    attempt("py_jarfree_key", py_jarfree_key)

    def py_jarfree_conf():
        spark.conf.set("spark.dsha.secret.jarfree", url["py_jarfree_conf"])
        return dsha.fingerprint(base, key="conf:spark.dsha.secret.jarfree#dsha-keyed-v2", engine="python").digest
    attempt("py_jarfree_conf", py_jarfree_conf)
    attempt("py_jarfree_failed", lambda: dsha.fingerprint(base, key=keys["py_jarfree_failed"], engine="python"))

    def py_jarfree_no_aes():
        # Python workers started by a wrapper that puts a stand-in refusing `import cryptography` first on their path
        stand_in = os.path.join(out, "work", "no-cryptography")
        os.makedirs(os.path.join(stand_in, "cryptography"))
        with open(os.path.join(stand_in, "cryptography", "__init__.py"), "w") as f:
            f.write("raise ImportError(\"No module named 'cryptography'\")\n")
        with open(os.path.join(stand_in, "python"), "w") as f:
            f.write(f'#!/bin/sh\nPYTHONPATH="{stand_in}:$PYTHONPATH" exec "{sys.executable}" "$@"\n')
        os.chmod(os.path.join(stand_in, "python"), 0o755)
        sc = spark.sparkContext
        python, sc.pythonExec = sc.pythonExec, os.path.join(stand_in, "python")
        try:
            return dsha.fingerprint(base, key=keys["py_jarfree_no_aes"], algorithm="keyed-v2", engine="python")
        finally:
            sc.pythonExec = python
    attempt("py_jarfree_no_aes", py_jarfree_no_aes)

    phases["classic ways"] = time.monotonic() - started
    # Settings as the classic session shows them.
    conf_all = spark.conf.getAll if spark4 else spark._jsparkSession.conf().getAll()
    write("settings", "SET", str(spark.sql("SET").collect()))
    write("settings", "SET -v", str(spark.sql("SET -v").collect()))
    write("settings", "spark.conf.getAll", str(conf_all))
    write("settings", "SparkConf", str(spark.sparkContext.getConf().getAll()))

    # Spark Connect, served by this driver.
    from pyspark.sql.connect.session import SparkSession as ConnectSession
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"  # pyspark.sql.functions build Connect columns from here on
    cs = ConnectSession.builder.remote(f"sc://127.0.0.1:{connect_port}").getOrCreate()
    cbase = cs.range(5)
    attempt("connect_py_key", lambda: dsha.fingerprint(cbase, key=keys["connect_py_key"]).digest)
    sql_way("connect_sql_literal", f"SELECT dsha_keyed('{h['connect_sql_literal']}', id) AS d FROM range(5)",
            session=cs, sql_explain=True)

    def connect_column():
        df = cbase.agg(dsha_keyed(keys["connect_column"], "id").alias("d"))
        explain("connect_column", df)
        return df.first().d
    attempt("connect_column", connect_column)

    def connect_lit_column():
        df = cbase.agg(dsha_keyed(F.lit(h["connect_lit_column"]), "id").alias("d"))
        explain("connect_lit_column", df)
        return df.first().d
    attempt("connect_lit_column", connect_lit_column)
    attempt("connect_jarfree_key", lambda: dsha.fingerprint(cbase, key=keys["connect_jarfree_key"],
                                                            engine="python").digest)
    write("settings", "Connect SET", str(cs.sql("SET").collect()))
    write("settings", "Connect SET -v", str(cs.sql("SET -v").collect()))
    write("settings", "Connect getAll", str(cs.conf.getAll) if spark4 else "")
    cs.stop()

    phases["connect"] = time.monotonic() - started
    # The UI: REST API and pages.
    ui = spark.sparkContext.uiWebUrl
    rest = os.path.join(out, "rest")
    os.makedirs(rest)

    def fetch(name, path):
        try:
            with urllib.request.urlopen(ui + path, timeout=30) as r:
                body = r.read().decode("utf-8", "replace")
        except Exception as e:
            body = f"{path}: {e}"
        with open(os.path.join(rest, name), "w") as f:
            f.write(body)
        return body

    app = json.loads(fetch("applications.json", "/api/v1/applications"))[0]["id"]
    api = f"/api/v1/applications/{app}"
    for name, path in (("jobs", "/jobs"), ("stages", "/stages?details=true"), ("environment", "/environment"),
                       ("executors", "/allexecutors"), ("sql", "/sql?details=true&planDescription=true&length=1000")):
        fetch(name + ".json", api + path)
    for page in ("jobs", "stages", "environment", "SQL", "connect", "executors", "storage"):
        fetch(f"page-{page}.html", f"/{page}/")
    with open(os.path.join(rest, "sql.json")) as f:
        executions = json.load(f)
    for execution in executions:
        if "dsha" in json.dumps(execution) or "planted" in json.dumps(execution):
            fetch(f"page-sql-{execution['id']}.html", f"/SQL/execution/?id={execution['id']}")

    phases["ui"] = time.monotonic() - started
    outcomes["_phases"] = phases
    for f in files.values():
        f.close()
    with open(os.path.join(out, "outcomes.json"), "w") as f:
        json.dump(outcomes, f)
    spark.stop()


if __name__ == "__main__":
    _drive(sys.argv[1], sys.argv[2])
