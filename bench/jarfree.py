"""dsha.fingerprint of lineitem through the jar against the jar-free path (Python on the executors: mapInArrow and the
Arrow engine) on Apache Spark's own Connect server started without the jar, and on Sail (issue 31, item 5).

    PYTHONPATH=python "$(dev/python-env 4.1.4)/bin/python" bench/jarfree.py [--sf 1] [--rounds 3]

One run, three children in turn, each a fresh process with one session, which times `dsha.fingerprint` of the
Parquet table and of the same table cached (`df.cache()`, counted once untimed) `--rounds` times:

- `jar`: a classic local session with the dsha jar (`dsha.configure`), `engine="jvm"`;
- `spark-connect`: a Spark Connect session to Spark's own server of the same pyspark, started by `dev/connect-server`
  without the jar (its Python workers: this interpreter, which has dsha and pyarrow), the jar-free path by itself;
- `sail`: a Spark Connect session to Sail (`pysail`, started in the child: Sail runs the Python UDFs in its own
  process), the jar-free path by itself. Sail ignores `persist`, so its "cached" figure reads the Parquet files.

Every digest must be the jar's (and, at SF 1, the issue's f81b4f50...43b). Medians, the load average at each child's
start; results in bench/results/results-jarfree-sf<SF>.md and .json. The interpreter must have pysail (the
4.1.4 environment of `dev/python-env` has it).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from common import RESULTS, ROOT, loadavg, log, sf_label, write_results
from data import ensure_lineitem

sys.path.insert(0, os.path.join(ROOT, "tests"))
from spark_conf import connect_server_listens  # noqa: E402  (shared with tests/python/test_thin_client.py)

SF1_DIGEST = "f81b4f50120cc141bbce570c2e4c6f90b789d595dbb9b2d6826fbb29322d6fbbeb5d098043b"
WHERE = ("jar", "spark-connect", "sail")


def child(where, path, rounds, url):
    """In a child process: one session, then the timings of each input, printed as one JSON line."""
    import warnings

    warnings.simplefilter("ignore")
    import dsha
    from pyspark.sql import SparkSession

    server = None
    if where == "jar":
        spark = (dsha.configure(SparkSession.builder.master("local[*]")).config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    else:
        if where == "sail":
            import pysail.spark

            server = pysail.spark.SparkConnectServer()
            server.start()
            url = "sc://localhost:%d" % server.listening_address[1]
        spark = SparkSession.builder.remote(url).getOrCreate()
    engine = "jvm" if where == "jar" else None  # else the session's own choice: the jar-free path
    out = {"where": where, "load": loadavg()}
    table = spark.read.parquet(path)
    cached = spark.read.parquet(path).cache()
    cached.count()
    for name, df in (("parquet", table), ("cached", cached)):
        seconds, digests = [], set()
        for _ in range(rounds):
            started = time.perf_counter()
            fp = dsha.fingerprint(df, engine=engine)
            seconds.append(time.perf_counter() - started)
            digests.add((fp.digest, fp.rows))
        out[name] = {"seconds": seconds, "median": statistics.median(seconds), "digests": sorted(digests)}
    spark.stop()
    if server is not None:
        server.stop()
    print(json.dumps(out))


def _listening(url, seconds=300):
    if not connect_server_listens(url, seconds):
        raise SystemExit(f"the Spark Connect server {url} did not listen within {seconds} s")


def _run_child(where, path, rounds, url=""):
    log(f"{where}: {rounds} rounds of dsha.fingerprint, Parquet then cached")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_TESTING="1")
    done = subprocess.run([sys.executable, __file__, "--child", where, "--path", path, "--rounds", str(rounds),
                           "--url", url], capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{where} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(sf, rounds, out_stem=None):
    path = ensure_lineitem(sf, 4)
    results = {}
    results["jar"] = _run_child("jar", path, rounds)
    server = subprocess.run([os.path.join(ROOT, "dev", "connect-server"), "start", sys.prefix], capture_output=True,
                            text=True, check=True, cwd=ROOT).stdout.strip()
    try:
        with open(os.path.join(server, "url")) as f:
            url = f.read().strip()
        _listening(url)
        results["spark-connect"] = _run_child("spark-connect", path, rounds, url)
    finally:
        subprocess.run([os.path.join(ROOT, "dev", "connect-server"), "stop", server], cwd=ROOT, check=False)
    results["sail"] = _run_child("sail", path, rounds)
    digests = {tuple(d) for r in results.values() for k in ("parquet", "cached") for d in r[k]["digests"]}
    if len(digests) != 1 or (sf == 1 and next(iter(digests))[0] != SF1_DIGEST):
        raise SystemExit(f"the digests differ: {sorted(digests)}")
    (digest, rows), = digests
    jar = results["jar"]
    lines = [f"# dsha.fingerprint of lineitem SF {sf}: the jar vs the jar-free path (issue 31)", "",
             f"{rows:,} rows, every digest {digest}; {rounds} rounds each, medians in seconds; one run, "
             f"load average (1, 5, 15 min) at each child's start.", "",
             "| where | Parquet | cached | Parquet / jar | cached / jar | load |", "| --- | --- | --- | --- | --- | --- |"]
    for where in WHERE:
        r = results[where]
        p, c = r["parquet"]["median"], r["cached"]["median"]
        lines.append(f"| {where} | {p:.2f} | {c:.2f} | {p / jar['parquet']['median']:.2f} | "
                     f"{c / jar['cached']['median']:.2f} | {r['load']} |")
    lines += ["", "Sail ignores `persist`: its cached figure reads the Parquet files again.", ""]
    stem = out_stem or os.path.join(RESULTS, f"results-jarfree-sf{sf_label(sf)}")
    write_results(stem, "\n".join(lines), {"sf": sf, "rounds": rounds, "digest": digest, "rows": rows,
                                           "results": results})


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sf", type=float, default=1.0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default=None, help="results stem (default bench/results/results-jarfree-sf<SF>)")
    p.add_argument("--child", choices=WHERE, help=argparse.SUPPRESS)
    p.add_argument("--path", help=argparse.SUPPRESS)
    p.add_argument("--url", default="", help=argparse.SUPPRESS)
    a = p.parse_args()
    sf = int(a.sf) if a.sf == int(a.sf) else a.sf
    if a.child:
        child(a.child, a.path, a.rounds, a.url)
    else:
        main(sf, a.rounds, a.out)
