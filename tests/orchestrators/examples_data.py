"""What the orchestrator tests share: small Parquet inputs written by pyarrow, their digest from the reference
implementation (tests/reference, an implementation of SPEC.md of its own), and the examples of examples/ as
docs/integrations.md shows them."""
import importlib.util
import os

import dsha_reference  # tests/reference (conftest puts it on the path)
import pyarrow as pa
import pyarrow.parquet as pq
from conftest import EXAMPLES, ROOT

SCHEMA = 'struct<"id":bigint,"k":bigint>'


def write_orders(path, n, files=2, reverse=False):
    """n rows (id, id % 7) as `files` Parquet files, replacing what was there."""
    path.mkdir(exist_ok=True)
    for old in path.iterdir():
        old.unlink()
    ids = list(range(n))[::-1] if reverse else list(range(n))
    step = -(-n // files)
    for i in range(files):
        part = ids[i * step:(i + 1) * step]
        pq.write_table(pa.table({"id": pa.array(part, pa.int64()), "k": pa.array([x % 7 for x in part], pa.int64())}),
                       str(path / f"part-{i}.parquet"))


def reference_digest(n):
    return dsha_reference.table_digest(SCHEMA, [{"id": i, "k": i % 7} for i in range(n)])["digest"]


def load_example(relative):
    """examples/<relative>, imported as a module of its own (it reads its settings from the environment)."""
    name = os.path.splitext(os.path.basename(relative))[0]
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, relative))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shown_verbatim(relative):
    """Whether docs/integrations.md shows examples/<relative> whole, as one Python block."""
    with open(os.path.join(ROOT, "docs", "integrations.md"), encoding="utf-8") as f:
        page = f.read()
    with open(os.path.join(EXAMPLES, relative), encoding="utf-8") as f:
        return f"```python\n{f.read()}```" in page
