"""The Arrow engine never takes a digest from a manifest (SPEC.md §12.3: a manifest is a cache, never a trust anchor).
A directory holding a ``_dsha/manifest.json`` whose states an attacker without the key wrote, its §12.2 checksum
recomputed (which needs no secret), is read in full by ``dsha.arrow.fingerprint`` and ``dsha hash --engine arrow``
(every algorithm): the digest is the files' digest, the same as of the files without the manifest."""
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dsha.arrow

KEY = hashlib.sha256(b"test_arrow_manifest key").digest()


def _checksum(m):
    """SPEC.md §12.2 from its text: u32-LE-length-prefixed UTF-8 texts, SHA-256."""
    values = ["manifest", m["version"], m["algorithm"], m["format"], m["root"], m["schema"], m["schema_digest"]]
    values += [m["key_id"]] if "key_id" in m else []
    values.append(len(m["files"]))
    for f in m["files"]:
        values += [f["path"], f["size"], f["modified"], f["rows"], f["sum"]]
    data = b"".join(struct.pack("<I", len(str(v).encode())) + str(v).encode() for v in values)
    return hashlib.sha256(data).hexdigest()


def _forge(root, algorithm, width, genuine_rows):
    """A manifest of the directory's files as an attacker writes it: each entry with the file's real size and mtime
    (so a reader that trusted it would read nothing), states of other rows, totals and checksum made to agree."""
    schema = 'struct<"id":bigint,"s":string>'
    files = []
    for name in sorted(os.listdir(root)):
        if name.endswith(".parquet"):
            st = os.stat(root / name)
            files.append({"path": name, "size": st.st_size, "modified": st.st_mtime_ns // 1_000_000,
                          "rows": genuine_rows + 7, "sum": "ab" * width})
    m = {"dsha": "manifest", "version": 1, "algorithm": algorithm, "format": "parquet",
         "root": "file:" + str(root), "schema": schema,
         "schema_digest": hashlib.sha256(schema.encode()).hexdigest(),
         "rows": sum(f["rows"] for f in files), "digest": "f81b4f5012" + "00" * 64, "files": files}
    if algorithm.startswith("dsha-keyed"):
        m["key_id"] = "00" * 16  # any: without the key, no key_id and no MAC can be made to verify
        m["mac"] = "00" * 32
    m["checksum"] = _checksum(m)
    (root / "_dsha").mkdir(exist_ok=True)
    (root / "_dsha" / "manifest.json").write_text(json.dumps(m), encoding="utf-8")


def _cli(*args):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    package_root = os.path.dirname(os.path.dirname(dsha.arrow.__file__))
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(package_root)] + env.get("PYTHONPATH", "").split(os.pathsep))
    return subprocess.run([sys.executable, "-m", "dsha", "hash", "--engine", "arrow", *map(str, args)],
                          capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("algorithm,width,options", [
    ("dsha-v1", 16, {}),
    ("dsha-keyed-v1", 32, {"key": KEY}),
    ("dsha-secure-v1", 4096, {"algorithm": "secure"}),
])
def test_a_forged_manifest_is_never_read_by_the_arrow_engine(tmp_path, algorithm, width, options):
    clean, forged = tmp_path / "clean", tmp_path / "forged"
    clean.mkdir()
    table = pa.table({"id": pa.array(range(300), pa.int64()), "s": pa.array([str(7 * i) for i in range(300)])})
    for i in range(3):
        pq.write_table(table.slice(100 * i, 100), clean / f"part-{i}.parquet")
    shutil.copytree(clean, forged)  # copy2: the same sizes and modification times
    _forge(forged, algorithm, width, 100)
    files_digest = dsha.arrow.fingerprint(clean, **options)
    assert files_digest.rows == 300
    assert dsha.arrow.fingerprint(forged, **options) == files_digest
    cli_options = {"dsha-v1": [], "dsha-keyed-v1": ["--key-file", tmp_path / "key"],
                   "dsha-secure-v1": ["--secure"]}[algorithm]
    (tmp_path / "key").write_text(KEY.hex(), encoding="ascii")
    r = _cli(forged, *cli_options)
    assert r.returncode == 0 and r.stdout.strip() == files_digest.digest, r.stderr
    assert "from the manifest" not in r.stderr
