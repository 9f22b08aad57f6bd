"""The documentation's Arrow-engine command lines run as written (README's blocks run in tests/docs/test_readme.py;
the other pages' blocks are syntax-checked in tests/docs/test_docs_blocks.py, as most need Spark, a cluster or a
lake). A ```bash block of docs/*.md preceded by ``<!-- run: arrow -->`` (or ``<!-- run: arrow, exit N -->``: the
exit code of its last command, such as ``dsha diff``'s 1 for "different") runs here, without pyspark or a JVM, with
README's rules: ``bash -eo pipefail``, this environment's ``dsha`` first on PATH, and its ``#>`` lines, ``...`` for
any text, are every line it prints on stdout. A marked ```python block runs the same way, as a script of this
environment's Python. Each runs in a temporary directory holding the pages' example data:

- ``data/v1`` and ``data/v2``: directories of one Parquet file each, three rows (``id``, ``name``, ``score``) that
  differ in one score (id 2: 2.5 left, 9.5 right);
- ``data/v1.parquet`` (v1 as one Parquet file) and ``data/v2.arrow`` (v2 as an Arrow IPC file)."""
import glob
import os
import re
import subprocess
import sys

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "docs"))
from test_readme import Block, matches  # noqa: E402  (the README runner's reader and matcher)

MARKER = re.compile(r"^<!-- run: arrow(?:, exit (?P<exit>\d+))? -->$")


def _marked():
    """(page, line of the fence, code, exit code) of each marked block of docs/*.md."""
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            m = MARKER.match(line.strip())
            if m is None:
                continue
            fence = next(j for j in range(i + 1, len(lines)) if lines[j].strip())
            assert lines[fence] in ("```bash", "```python"), (
                f"{path}:{i + 1}: the marker is not followed by a ```bash or ```python block")
            end = next(j for j in range(fence + 1, len(lines)) if lines[j].startswith("```"))
            found.append((os.path.basename(path), fence + 1, "\n".join(lines[fence + 1:end]) + "\n",
                          int(m.group("exit") or 0), lines[fence][3:]))
    return found


def _example_data(root):
    v1 = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"], "score": [1.5, 2.5, 3.5]})
    v2 = v1.set_column(2, "score", pa.array([1.5, 9.5, 3.5]))
    for name, table in (("v1", v1), ("v2", v2)):
        os.makedirs(root / "data" / name)
        pq.write_table(table, root / "data" / name / "part-0.parquet")
    pq.write_table(v1, root / "data" / "v1.parquet")
    feather.write_feather(v2, str(root / "data" / "v2.arrow"))


@pytest.mark.parametrize("page, line, code, exit_code, language", _marked(),
                         ids=[f"{p}:{n}" for p, n, _, _, _ in _marked()])
def test_marked_block_runs_as_written(page, line, code, exit_code, language, tmp_path):
    _example_data(tmp_path)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"),  # this checkout's dsha
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    command = ["bash", "-eo", "pipefail", "-c", code] if language == "bash" else [sys.executable, "-c", code]
    done = subprocess.run(command, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)
    where = f"docs/{page}:{line}"
    assert done.returncode == exit_code, f"{where}: exit {done.returncode}, not {exit_code}\n{done.stderr[-2000:]}"
    expected = Block(line, language, code, None).expected
    printed = done.stdout.splitlines()
    assert len(printed) == len(expected) and all(map(matches, expected, printed)), (
        f"{where} printed\n" + "\n".join(printed) + "\nbut the page shows\n" + "\n".join(expected))


def test_the_pages_have_runnable_arrow_blocks():
    assert [(page, language, code.split()[:2]) for page, _, code, _, language in _marked()] == [
        ("changes.md", "bash", ["dsha", "record"]), ("diff.md", "bash", ["dsha", "diff"]),
        ("python.md", "python", ["import", "pandas"]), ("tamper-evident.md", "bash", ["dsha", "hash"]),
        ("where-it-runs.md", "bash", ["dsha", "hash"])]
