"""What `dsha diff` shows a person: the differing rows as an aligned table (rows only left and only right paired
where few cells differ, the differing cells marked; core/diff_table, whose cases are in tests/arrow), the same table
in ``str(Diff)``, and a line per step with its time on stderr when asked (``--phases``) or on a terminal; nothing of
it otherwise (the decision: tests/arrow/test_diff_table.py)."""
import os
import re

import pytest
from cli_runner import run_cli

import dsha

pytestmark = pytest.mark.skipif(os.environ.get("DSHA_SPARK_MODE") == "connect",
                                reason="the CLI and the text of a Diff do not depend on the transport")

TABLE = [
    "- only left (2 of 2), + only right (2 of 2); 1 paired where few cells differ, ^ what differs:",
    "    id  name  score",
    "  - 2   b     2.5",
    "  + 2   b     9.5",
    "              ^^^",
    "  - 3   c     3.5",
    "  + 4   d     4.5",
]


@pytest.fixture(scope="module")
def sides(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("cli_diff_output")
    schema = "id INT, name STRING, score DOUBLE"
    spark.createDataFrame([(1, "a", 1.5), (2, "b", 2.5), (3, "c", 3.5)], schema).write.parquet(str(root / "a"))
    spark.createDataFrame([(1, "a", 1.5), (2, "b", 9.5), (4, "d", 4.5)], schema).write.parquet(str(root / "b"))
    return root


def test_diff_prints_the_rows_as_a_table_and_phase_lines_when_asked(sides):
    out = run_cli("diff", sides / "a", sides / "b", "--phases")
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[2:] == ["3 rows left, 3 right: 2 only left, 2 only right", "columns: id 1, name 1, score 2",
                         "method: sketch", *TABLE]
    phases = [line for line in out.stderr.splitlines() if re.fullmatch(r"dsha: [a-z ,]+: \d+\.\d\d s", line)]
    assert [p.rsplit(":", 1)[0] for p in phases] == [
        "dsha: sketch both sides, decode the difference", "dsha: read the differing rows",
        "dsha: count the differing values per column", "dsha: read the rows shown"], out.stderr
    # not asked, and stderr not a terminal: no phase line
    quiet = run_cli("diff", sides / "a", sides / "b", "--limit", "1")
    assert quiet.returncode == 1 and not re.search(r"^dsha: .*: \d+\.\d\d s$", quiet.stderr, re.M), quiet.stderr
    assert "(1 more only left, 1 more only right)" in quiet.stdout


def test_str_of_a_diff_is_its_explanation_and_table(spark, sides):
    with dsha.diff(spark.read.parquet(str(sides / "a")), spark.read.parquet(str(sides / "b"))) as d:
        assert str(d).splitlines() == ["3 rows left, 3 right: 2 only left, 2 only right",
                                       "columns: id 1, name 1, score 2", "method: sketch", *TABLE]
        assert "- only left" not in repr(d)  # the repr runs no job
