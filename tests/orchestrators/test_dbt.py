"""dsha's dbt package (dbt/) for real: dbt-core and dbt-spark from PyPI, dbt-spark's session method (a Spark session
in dbt's own process, dsha's jar and extensions from profiles.yml), `dbt deps` installing the package from its local
path as a user's packages.yml does, then `dbt build` of tests/orchestrators/dbt_project: the digests the macros
compute are the reference implementation's (tests/reference) and the Arrow engine's of the tables' files, and the
generic test dsha_equal passes for the same rows rebuilt and warns (one failing row) for a changed model;
dsha_unchanged passes for the digest kept in the project."""
import json
import os
import shutil
import subprocess
import sys

import dsha_reference
import pyarrow.parquet as pq
from conftest import ROOT
from examples_data import SCHEMA

import dsha
import dsha.arrow

PROJECT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dbt_project")
# The digest of models/orders.sql's rows, kept in models/schema.yml for the test dsha_unchanged.
EXPECTED = "f81b4f50120ab105f86d15c8f43ab49dbed9e9fbf86329e0373bef86ae0452a45dcd38cc301"


def dbt(project, *command, env):
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "dbt"), *command, "--project-dir",
                           str(project), "--profiles-dir", str(project)], cwd=project, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-3000:]


def test_dbt_build_digests_models_and_tests_their_equality(tmp_path):
    project, warehouse = tmp_path / "project", tmp_path / "warehouse"
    shutil.copytree(PROJECT, project)
    env = dict(os.environ, DSHA_DBT_PACKAGE=os.path.join(ROOT, "dbt"), DSHA_JAR=dsha.jar_path(),
               DSHA_DBT_WAREHOUSE=str(warehouse), DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    dbt(project, "deps", env=env)
    dbt(project, "build", env=env)

    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    tests = {r["unique_id"].split(".")[2]: (r["status"], r["failures"]) for r in results
             if r["unique_id"].startswith("test.")}
    assert tests == {"dsha_dsha_unchanged_orders_" + EXPECTED: ("pass", 0),
                     "dsha_dsha_equal_orders_rebuilt_ref_orders_": ("pass", 0),
                     "dsha_dsha_equal_orders_rebuilt_k__ref_orders_": ("pass", 0),
                     "dsha_dsha_equal_orders_changed_ref_orders_": ("warn", 1)}

    tables = warehouse / "dsha_dbt.db"
    [row] = pq.read_table(str(tables / "orders_digest")).to_pylist()
    expected = dsha_reference.table_digest(SCHEMA, [{"id": i, "k": i % 7} for i in range(500)])["digest"]
    assert expected == EXPECTED  # models/schema.yml's dsha_unchanged holds it
    assert row["digest"] == row["digest_value"] == expected
    assert row["k_digest"] == dsha_reference.table_digest('struct<"k":bigint>', [{"k": i % 7} for i in range(500)]
                                                          )["digest"]
    assert len(list((tables / "orders_rebuilt").glob("*.parquet"))) == 3
    for table in ("orders", "orders_rebuilt"):  # the files dbt wrote, digested without Spark
        assert dsha.arrow.fingerprint(str(tables / table)).digest == expected


def test_the_documented_project_files_are_the_tested_ones():
    """docs/integrations.md shows the test project's profile, tests and digest model whole."""
    with open(os.path.join(ROOT, "docs", "integrations.md"), encoding="utf-8") as f:
        page = f.read()
    for name, language in (("profiles.yml", "yaml"), ("models/schema.yml", "yaml"), ("models/orders_digest.sql", "sql")):
        with open(os.path.join(PROJECT, name), encoding="utf-8") as f:
            assert f"```{language}\n{f.read()}```" in page, name
