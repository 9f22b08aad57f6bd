"""Tamper-evident digests (SPEC.md §16): dsha-keyed-v1 and dsha-secure-v1 through the Python API, SQL and the CLI, in
classic and Spark Connect sessions: every codegen mode gives one digest, states merge in pure Python, keys in every
form give one digest, and the key never appears in plans, logs, event logs or errors."""
import base64
import glob
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from cli_runner import run_cli
from pyspark.sql import functions as F

from conftest import PASS_MODES
from spark_conf import sql_conf

import dsha
from dsha import Fingerprint
from dsha.functions import (dsha_keyed, dsha_keyed_fingerprint, dsha_keyed_state, dsha_secure, dsha_secure_fingerprint,
                            dsha_secure_state)

KEY = bytes(range(32))
KEY_HEX = KEY.hex()
KEY_B64 = base64.b64encode(KEY).decode()
# What must never be printed: the key in hex (either case) and base64, minus a few leading characters.
KEY_TEXTS = (KEY_HEX[6:], KEY_HEX[6:].upper(), KEY_B64[4:30])
SQL = ("SELECT * FROM VALUES (1, 'a', map(1, 'x', 2, 'y'), array(1.5D, NULL)), (2, 'b', map(2, 'y', 1, 'x'), NULL), "
       "(2, 'b', NULL, array(CAST('NaN' AS DOUBLE))) AS t(id, name, m, xs)")


def _no_key(text):
    for k in KEY_TEXTS:
        assert k not in text, f"the key ({k[:6]}...) is in: {text[:2000]}"


@pytest.fixture(scope="module")
def table(spark):
    return spark.sql(SQL)


def test_every_codegen_mode_gives_one_digest_and_the_forms_agree(spark, table, in_codegen_mode):
    results = {}
    for mode in PASS_MODES:
        with in_codegen_mode(mode):
            cached = table.coalesce(1).cache()
            row = cached.agg(dsha_secure("*").alias("s"), dsha_keyed(KEY, "*").alias("k"),
                             dsha_secure_fingerprint("*").alias("sf"), dsha_keyed_fingerprint(KEY, "*").alias("kf"),
                             F.call_function("dsha_final", dsha_secure_state("*")).alias("ss"),
                             F.call_function("dsha_final", dsha_keyed_state(KEY, "*")).alias("ks")).first()
            cached.unpersist()
            results[mode] = (row.s, row.k, row.sf.digest, row.kf.digest, row.ss, row.ks)
    assert len(set(results.values())) == 1, results
    s, k, sf, kf, ss, ks = results[PASS_MODES[0]]
    assert s == sf == ss and s.startswith("fa0b4f50120") and len(s) == 75
    assert k == kf == ks and k.startswith("f90b4f50120")
    assert len({s, k, dsha.fingerprint(table).digest}) == 3


def _key_settings(spark):
    return sorted(r[0] for r in spark.sql("SET").collect() if str(r[0]).startswith("spark.dsha.secret."))


def test_python_api_key_forms_states_and_comparisons(spark, table):
    before = _key_settings(spark)
    keyed = dsha.fingerprint(table, key=KEY)
    assert keyed.algorithm == "dsha-keyed-v1" and keyed.rows == 3 and len(keyed.content_sum) == 64
    for form in (KEY_HEX, KEY_HEX.upper(), KEY_B64, KEY_B64.rstrip("="), bytearray(KEY)):
        assert dsha.fingerprint(table, key=form) == keyed
    assert dsha.fingerprint(table, algorithm="keyed", key=KEY) == keyed
    assert dsha.fingerprint(table, key=bytes(reversed(KEY))).digest != keyed.digest
    secure = dsha.fingerprint(table, algorithm="secure")
    assert secure.algorithm == "dsha-secure-v1" and len(secure.content_sum) == 8192
    # States of parts merge in pure Python into the whole's fingerprint; the keyed one without the key.
    for kwargs, whole in (({"key": KEY}, keyed), ({"algorithm": "secure"}, secure)):
        parts = [dsha.state(table.where(f"id = {i}"), **kwargs) for i in (1, 2)]
        assert Fingerprint.from_state(dsha.merge(parts)) == whole
        assert Fingerprint.from_state(dsha.merge(reversed(parts))) == whole
    # Comparisons say equal and why not.
    assert dsha.equal(table, table.orderBy(F.desc("id")), key=KEY)
    assert dsha.equal(table, table.union(table.limit(1)), algorithm="secure").reason == "row count"
    # No setting made for a key outlives the call.
    assert _key_settings(spark) == before
    with pytest.raises(ValueError, match="key= and algorithm='keyed' go together"):
        dsha.fingerprint(table, algorithm="secure", key=KEY)
    with pytest.raises(ValueError, match="unknown dsha algorithm"):
        dsha.fingerprint(table, algorithm="sha256")


def test_the_key_is_in_no_explain_output_and_no_error(spark, table, capsys):
    column = dsha_keyed(KEY, "*")
    # The key went to the driver for this session: no setting holds it, before or after the query runs.
    assert _key_settings(spark) == []
    df = table.agg(column, dsha_keyed_state(KEY_B64, "id"))
    df.first()
    assert _key_settings(spark) == []
    for mode in ("simple", "extended", "codegen", "cost", "formatted"):
        df.explain(mode=mode)
        out = capsys.readouterr().out
        assert mode == "codegen" or "dsha_keyed" in out
        _no_key(out)
    assert df.first()[0].startswith("f90b4f50120")
    with pytest.raises(Exception) as short:
        table.agg(dsha_keyed(KEY[:8], "*")).first()
    assert "a key needs at least 16" in str(short.value)
    _no_key(str(short.value))
    with pytest.raises(Exception) as missing:
        table.agg(dsha_keyed(KEY, "id", "no_such_column")).first()
    assert "no_such_column" in str(missing.value)
    _no_key(str(missing.value))


def _settings_text(spark):
    """Every session setting and what SET shows, as one text."""
    return str(sorted(spark.conf.getAll.items()) if hasattr(spark.conf, "getAll") else []) + str(
        spark.sql("SET").collect())


def test_a_key_is_in_no_setting_when_its_query_fails_or_never_runs(spark, table):
    key = os.urandom(32)
    texts = (key.hex()[4:], key.hex()[4:].upper(), base64.b64encode(key).decode()[4:30],
             base64.urlsafe_b64encode(key).decode()[4:30])
    unused = dsha_keyed(key, "*")  # a Column made and never used
    with pytest.raises(Exception, match="no_such_column"):
        dsha.fingerprint(table, "id", "no_such_column", key=key)
    with pytest.raises(Exception, match="no_such_column"):
        table.agg(dsha_keyed(key.hex(), "no_such_column")).first()
    assert table.agg(dsha_keyed(key, "id").alias("d")).first().d.startswith("f90b4f50120")
    shown = _settings_text(spark)
    assert _key_settings(spark) == [] and not any(t in shown for t in texts), shown
    assert unused is not None


@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="newSession is classic's")
def test_a_key_given_in_one_session_cannot_be_named_from_another(spark, table):
    from dsha.spark.keys import key_reference
    reference = key_reference(spark, KEY)
    assert reference.startswith("conf:spark.dsha.secret.handle.") and len(reference) > 60
    mine = spark.sql(f"SELECT dsha_keyed('{reference}', id) AS d FROM range(5)").first().d
    assert mine == spark.sql(f"SELECT dsha_keyed('{KEY_HEX}', id) AS d FROM range(5)").first().d
    other = spark.newSession()
    with pytest.raises(Exception, match="not set in this session") as refused:
        other.sql(f"SELECT dsha_keyed('{reference}', id) AS d FROM range(5)").collect()
    _no_key(str(refused.value))


def _cli(*args):
    """The dsha CLI in a process of its own (local[2], no UI), as a user runs it: its exit code and output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_REMOTE", "SPARK_CONNECT", "SPARK_LOCAL_"))}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    return subprocess.run([sys.executable, "-m", "dsha", *args, "--master", "local[2]", "--conf",
                           "spark.ui.enabled=false"], capture_output=True, text=True, timeout=300, env=env,
                          stdin=subprocess.DEVNULL)


@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="the CLI starts its own Spark; run once")
def test_cli_key_file_and_secure_with_event_log_and_logs(spark, table, tmp_path):
    data = tmp_path / "t"
    table.write.parquet(str(data))
    (tmp_path / "key").write_text(KEY_B64 + "\n")
    events = tmp_path / "events"
    events.mkdir()
    keyed = _cli("hash", str(data), "--key-file", str(tmp_path / "key"), "--json", "--verbose",
                 "--conf", "spark.eventLog.enabled=true", "--conf", "spark.eventLog.compress=false",
                 "--conf", f"spark.eventLog.dir={events}")
    assert keyed.returncode == 0, keyed.stderr[-3000:]
    import json

    out = json.loads(keyed.stdout.strip().splitlines()[-1])
    assert out["algorithm"] == "dsha-keyed-v1"
    assert out["digest"] == spark.read.parquet(str(data)).agg(dsha_keyed(KEY, "*")).first()[0]
    logs = [open(p, encoding="utf-8", errors="replace").read()
            for p in glob.glob(str(events / "**"), recursive=True) if os.path.isfile(p)]
    assert logs and any("dsha_keyed" in text for text in logs)  # the plans are there, the key is not
    for text in logs + [keyed.stdout, keyed.stderr]:
        _no_key(text)
    # --secure on compare: equal to a copy, exit 1 against a different table.
    same = _cli("compare", str(data), str(data), "--secure", "--json")
    assert same.returncode == 0, same.stderr[-2000:]
    bad = _cli("hash", str(data), "--secure", "--key-file", str(tmp_path / "key"))
    assert bad.returncode == 2 and "give one" in bad.stderr
    (tmp_path / "short").write_bytes(b"\x01\x02")
    short = _cli("hash", str(data), "--key-file", str(tmp_path / "short"))
    assert short.returncode == 2 and "holds 2 bytes; a key needs at least 16" in short.stderr


@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="dsha.write needs a classic session")
def test_write_time_and_incremental_secure_digests(spark, tmp_path):
    import warnings

    path = str(tmp_path / "w")
    first = spark.range(0, 300).selectExpr("id", "cast(id % 7 AS string) AS s", "map(id % 3, id) AS m")
    written = dsha.write(first.repartition(3), path, algorithm="secure")
    read = spark.read.schema(first.schema).parquet(path)
    assert written == dsha.fingerprint(read, algorithm="secure") and written.algorithm == "dsha-secure-v1"
    more = spark.range(300, 400).selectExpr("id", "cast(id % 7 AS string) AS s", "map(id % 3, id) AS m")
    dsha.write(more.repartition(2), path, mode="append", algorithm="secure")
    again = dsha.fingerprint_path(spark, path, algorithm="secure")
    # Public states prove nothing about the files (anyone can write them): secure re-digests read every file.
    assert again.files_read == again.files_total >= 5 and again.files_reused == 0
    assert again.fingerprint == dsha.fingerprint(spark.read.parquet(path), algorithm="secure")
    # The manifest's states are dsha-secure-v1: a dsha-v1 re-digest cannot use them, says so, and reads the files.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v1 = dsha.fingerprint_path(spark, path)
    assert v1.files_read == v1.files_total and v1.fingerprint == dsha.fingerprint(spark.read.parquet(path))
    assert any("dsha-secure-v1" in str(w.message) for w in caught), [str(w.message) for w in caught]
    # Keyed: the manifest names its key (key_id); re-digests under that key reuse it, under another key they do not.
    keyed_path = str(tmp_path / "k")
    written = dsha.write(first.repartition(3), keyed_path, key=KEY)
    assert written == dsha.fingerprint(spark.read.schema(first.schema).parquet(keyed_path), key=KEY)
    with open(os.path.join(keyed_path, "_dsha", "manifest.json"), encoding="utf-8") as f:
        manifest = f.read()
    assert '"key_id"' in manifest and '"dsha-keyed-v1"' in manifest
    _no_key(manifest)
    same = dsha.fingerprint_path(spark, keyed_path, key=KEY_B64)
    assert same.files_reused == same.files_total == 3 and same.fingerprint == written
    other_key = bytes(reversed(KEY))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        other = dsha.fingerprint_path(spark, keyed_path, key=other_key)
    assert other.files_read == other.files_total
    assert other.fingerprint == dsha.fingerprint(spark.read.parquet(keyed_path), key=other_key) != written
    assert any("another key" in str(w.message) for w in caught), [str(w.message) for w in caught]
    with pytest.raises(ValueError, match="go together"):
        dsha.write(first, str(tmp_path / "x"), algorithm="keyed")


def test_the_keyed_algorithm_goes_with_the_key_not_through_the_session(spark, table):
    """A call's keyed algorithm is named with its key (``conf:NAME#ALGORITHM``), never set in the session, whose
    settings every thread shares: threads asking for dsha-keyed-v1 and -v2 at once each get their own; the Column
    functions take ``algorithm=`` too, and without it the session's ``spark.dsha.keyed.algorithm``."""
    v1 = dsha.fingerprint(table, key=KEY)
    v2 = dsha.fingerprint(table, key=KEY, algorithm="keyed-v2")
    assert (v1.algorithm, v2.algorithm) == ("dsha-keyed-v1", "dsha-keyed-v2") and v1.digest != v2.digest
    asks = ["keyed", "keyed-v2", None] * 4
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda a: dsha.fingerprint(table, key=KEY, algorithm=a), asks))
    assert got == [v2 if a == "keyed-v2" else v1 for a in asks]
    with sql_conf(spark, {"spark.dsha.keyed.algorithm": "dsha-keyed-v2"}):
        assert dsha.fingerprint(table, key=KEY) == v1  # key= alone means dsha-keyed-v1
        assert table.agg(dsha_keyed(KEY, "*")).first()[0] == v2.digest  # the session's setting
        assert table.agg(dsha_keyed(KEY, "*", algorithm="keyed")).first()[0] == v1.digest
    assert table.agg(dsha_keyed(KEY_B64, "*", algorithm="dsha-keyed-v2")).first()[0] == v2.digest
    row = table.agg(dsha_keyed_fingerprint(KEY, "*", algorithm="keyed-v2").alias("f")).first()["f"]
    assert (row["digest"], row["algorithm"]) == (v2.digest, "dsha-keyed-v2")
    state = table.agg(dsha_keyed_state(KEY, "id", "name", algorithm="keyed-v2")).first()[0]
    assert Fingerprint.from_state(bytes(state)).digest == dsha.fingerprint(table, "id", "name", key=KEY,
                                                                          algorithm="keyed-v2").digest
    assert spark.conf.get("spark.dsha.keyed.algorithm", None) is None
    spark.conf.set("spark.dsha.secret.thread_test", KEY_HEX)
    try:
        assert dsha.fingerprint(table, key="conf:spark.dsha.secret.thread_test#dsha-keyed-v2") == v2
        with pytest.raises(ValueError, match="names the algorithm 'dsha-keyed-v2', and algorithm= asks for"):
            dsha.fingerprint(table, key="conf:spark.dsha.secret.thread_test#dsha-keyed-v2", algorithm="keyed")
    finally:
        spark.conf.unset("spark.dsha.secret.thread_test")
    with pytest.raises(ValueError, match="unknown keyed algorithm 'v2'"):
        dsha_keyed(KEY, "*", algorithm="v2")
    with pytest.raises(ValueError, match="a Column key names its algorithm itself"):
        dsha_keyed(F.lit(KEY_HEX), "*", algorithm="keyed-v2")


def test_keyed_v2_python_api_states_comparisons_and_cli(spark, table, tmp_path):
    """dsha-keyed-v2 (SPEC.md §16.6) through the Python API and the CLI: its own digest and algorithm, the SQL
    functions' digest under the setting, states that merge in Python, comparisons, no setting left behind."""
    before = _key_settings(spark), spark.conf.get("spark.dsha.keyed.algorithm", None)
    v2 = dsha.fingerprint(table, key=KEY, algorithm="keyed-v2")
    assert v2.algorithm == "dsha-keyed-v2" and v2.digest.startswith("f91b4f50120") and v2.rows == 3
    assert dsha.fingerprint(table, key=KEY_B64, algorithm="dsha-keyed-v2") == v2
    assert v2.digest != dsha.fingerprint(table, key=KEY).digest
    spark.conf.set("spark.dsha.keyed.algorithm", "dsha-keyed-v2")
    try:
        assert table.agg(dsha_keyed(KEY, "*")).first()[0] == v2.digest
    finally:
        spark.conf.unset("spark.dsha.keyed.algorithm")
    parts = [dsha.state(table.where(f"id = {i}"), key=KEY, algorithm="keyed-v2") for i in (1, 2)]
    assert Fingerprint.from_state(dsha.merge(parts)) == v2
    assert dsha.equal(table, table.orderBy(F.desc("id")), key=KEY, algorithm="keyed-v2")
    assert not dsha.equal(table, table.union(table.limit(1)), key=KEY, algorithm="keyed-v2")
    assert (_key_settings(spark), spark.conf.get("spark.dsha.keyed.algorithm", None)) == before
    with pytest.raises(ValueError, match="go together"):
        dsha.fingerprint(table, algorithm="keyed-v2")
    # The CLI: --key-algorithm with --key-file; alone, a usage error (once: the CLI starts its own Spark).
    if os.environ.get("DSHA_SPARK_MODE") == "connect":
        return
    data = tmp_path / "t"
    table.write.parquet(str(data))
    (tmp_path / "key").write_text(KEY_HEX + "\n")
    out = run_cli("hash", str(data), "--key-file", str(tmp_path / "key"), "--key-algorithm", "dsha-keyed-v2", "--json")
    assert out.returncode == 0, out.stderr[-3000:]
    import json

    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["algorithm"] == "dsha-keyed-v2"
    assert got["digest"] == dsha.fingerprint(spark.read.parquet(str(data)), key=KEY, algorithm="keyed-v2").digest
    _no_key(out.stdout + out.stderr)
    alone = run_cli("hash", str(data), "--key-algorithm", "dsha-keyed-v2")
    assert alone.returncode == 2 and "give both" in alone.stderr


@pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect", reason="dsha.write needs a classic session")
def test_write_time_keyed_v2_digests_and_their_manifest(spark, tmp_path):
    import warnings

    path = str(tmp_path / "k2")
    first = spark.range(0, 300).selectExpr("id", "cast(id % 7 AS string) AS s", "map(id % 3, id) AS m")
    written = dsha.write(first.repartition(3), path, key=KEY, algorithm="keyed-v2")
    assert written.algorithm == "dsha-keyed-v2"
    assert written == dsha.fingerprint(spark.read.schema(first.schema).parquet(path), key=KEY, algorithm="keyed-v2")
    with open(os.path.join(path, "_dsha", "manifest.json"), encoding="utf-8") as f:
        manifest = f.read()
    assert '"key_id"' in manifest and '"dsha-keyed-v2"' in manifest
    _no_key(manifest)
    same = dsha.fingerprint_path(spark, path, key=KEY_B64, algorithm="keyed-v2")
    assert same.files_reused == same.files_total == 3 and same.fingerprint == written
    # Under dsha-keyed-v1 (same key) the states are not reused: the files are read, and the digest is v1's.
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        v1 = dsha.fingerprint_path(spark, path, key=KEY)
    assert v1.files_read == v1.files_total and v1.fingerprint == dsha.fingerprint(spark.read.parquet(path), key=KEY)


def test_secure_v2_forms_python_api_states_write_time_and_cli(spark, table, tmp_path, in_codegen_mode):
    """dsha-secure-v2 (SPEC.md §16.7) through SQL, the Python API and the CLI: one digest in every codegen mode and
    form, its own algorithm (not dsha-secure-v1's digest), states that merge in pure Python, comparisons; written
    states never stand for the files (anyone can compute them); the CLI's --secure-algorithm, on both engines."""
    from dsha.functions import dsha_secure_v2, dsha_secure_v2_fingerprint, dsha_secure_v2_state

    forms = set()
    for mode in PASS_MODES:
        with in_codegen_mode(mode):
            row = table.agg(dsha_secure_v2("*").alias("s"), dsha_secure_v2_fingerprint("*").alias("f"),
                            F.call_function("dsha_final", dsha_secure_v2_state("*")).alias("ss")).first()
            forms.add((row.s, row.f.digest, row.ss, row.f.algorithm, len(row.f.content_sum)))
    assert len(forms) == 1, forms
    digest, fd, sd, algorithm, hex_digits = forms.pop()
    assert digest == fd == sd and digest.startswith("fa1b4f50120") and algorithm == "dsha-secure-v2"
    assert hex_digits == 4096  # 2048 state bytes
    v2 = dsha.fingerprint(table, algorithm="secure-v2")
    assert v2.digest == digest and v2.rows == 3 and dsha.fingerprint(table, algorithm="dsha-secure-v2") == v2
    assert v2.digest != dsha.fingerprint(table, algorithm="secure").digest
    parts = [dsha.state(table.where(f"id = {i}"), algorithm="secure-v2") for i in (1, 2)]
    assert Fingerprint.from_state(dsha.merge(parts)) == v2
    assert dsha.equal(table, table.orderBy(F.desc("id")), algorithm="secure-v2")
    assert not dsha.equal(table, table.union(table.limit(1)), algorithm="secure-v2")
    if os.environ.get("DSHA_SPARK_MODE") == "connect":
        return  # dsha.write and the CLI's own Spark: classic only
    import json
    import warnings

    path = str(tmp_path / "w2")
    first = spark.range(0, 200).selectExpr("id", "cast(id % 7 AS string) AS s", "map(id % 3, id) AS m")
    written = dsha.write(first.repartition(3), path, algorithm="secure-v2")
    assert written.algorithm == "dsha-secure-v2"
    assert written == dsha.fingerprint(spark.read.schema(first.schema).parquet(path), algorithm="secure-v2")
    again = dsha.fingerprint_path(spark, path, algorithm="secure-v2")
    assert again.files_read == again.files_total == 3 and again.files_reused == 0 and again.fingerprint == written
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        v1 = dsha.fingerprint_path(spark, path, algorithm="secure")
    assert v1.files_read == v1.files_total and v1.fingerprint.algorithm == "dsha-secure-v1"
    expected = dsha.fingerprint(spark.read.parquet(path), algorithm="secure-v2").digest
    for engine in ("spark", "arrow"):
        out = run_cli("hash", path, "--secure", "--secure-algorithm", "dsha-secure-v2", "--engine", engine, "--json")
        assert out.returncode == 0, out.stderr[-3000:]
        got = json.loads(out.stdout.strip().splitlines()[-1])
        assert (got["algorithm"], got["digest"]) == ("dsha-secure-v2", expected), engine
    alone = run_cli("hash", path, "--secure-algorithm", "dsha-secure-v2")
    assert alone.returncode == 2 and "give both" in alone.stderr
