"""`dsha hash --secure` / `--key-file` and `dsha compare` on the Arrow engine (issue 30 item 2): a consumer with the
arrow extra and no Java verifies a published dsha-secure-v1 digest, or a keyed one with the shared key. The files
hold golden vectors (tests/golden/vectors-secure.json, vectors-keyed-v2.json): the digests printed are the golden
ones."""
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("cryptography")
from arrow_helpers import load_vectors, table_of  # noqa: E402
from test_cli_engine import NO_SPARK, run_cli  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden")
NAMES = ("map_nested", "struct_null_field", "int")


def _golden(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def vectors(tmp_path_factory):
    """Each vector as a Parquet file, its golden digests, and key files (hex; raw bytes; base64 with a newline)."""
    root = tmp_path_factory.mktemp("cli-secure")
    secure, keyed_v2 = _golden("vectors-secure.json"), _golden("vectors-keyed-v2.json")
    by_name = {v["name"]: v for v in load_vectors()}
    out = {}
    for name in NAMES:
        vec = by_name[name]
        table = table_of(vec["schema"], vec["rows"], list(vec["rows"][0].keys()))
        pq.write_table(table, root / f"{name}.parquet")
        s = next(v for v in secure["vectors"] if v["name"] == name)
        k2 = next(v for v in keyed_v2["vectors"] if v["name"] == name)
        out[name] = (root / f"{name}.parquet", s["secure"]["dsha"], s["keyed"]["dsha"], k2["keyed_v2"]["dsha"])
    (root / "key.hex").write_text(secure["key_hex"] + "\n")
    (root / "key.bin").write_bytes(bytes.fromhex(secure["key_hex"]))
    (root / "key-v2.hex").write_text(keyed_v2["key_hex"])
    (root / "short.hex").write_text("00" * 12)
    return root, out


def test_secure_and_keyed_digests_are_the_golden_ones(vectors):
    root, out = vectors
    for name, (path, secure, keyed, keyed_v2) in out.items():
        got = run_cli("hash", str(path), "--engine", "arrow", "--secure")
        assert got.returncode == 0 and got.stdout.strip() == secure, (name, got.stderr)
        assert "engine: arrow" in got.stderr
        for key_file in ("key.hex", "key.bin"):
            got = run_cli("hash", str(path), "--engine", "arrow", "--key-file", str(root / key_file))
            assert got.returncode == 0 and got.stdout.strip() == keyed, (name, key_file, got.stderr)
        got = run_cli("hash", str(path), "--engine", "arrow", "--key-file", str(root / "key-v2.hex"),
                      "--key-algorithm", "dsha-keyed-v2", "--json")
        assert got.returncode == 0, got.stderr
        js = json.loads(got.stdout)
        assert js["digest"] == keyed_v2 and js["algorithm"] == "dsha-keyed-v2" and js["engine"] == "arrow"


def test_compare_with_a_key_and_errors_in_one_line(vectors, tmp_path):
    root, out = vectors
    path = out["int"][0]
    copy = tmp_path / "copy.parquet"
    pq.write_table(pq.read_table(path), copy)
    same = run_cli("compare", str(path), str(copy), "--engine", "arrow", "--key-file", str(root / "key.hex"))
    assert same.returncode == 0 and "equal" in same.stdout, same.stderr
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": pa.array([2], pa.int32())}), other)
    differ = run_cli("compare", str(path), str(other), "--engine", "arrow", "--secure")
    assert differ.returncode == 1, differ.stderr
    short = run_cli("hash", str(path), "--engine", "arrow", "--key-file", str(root / "short.hex"))
    lines = short.stderr.strip().splitlines()
    assert short.returncode == 2 and len(lines) == 1 and "short.hex" in lines[0] and "at least 16" in lines[0]
    assert "00" * 12 not in short.stderr


@NO_SPARK
def test_without_pyspark_auto_verifies_on_the_arrow_engine(vectors):
    _, out = vectors
    path, secure, _, _ = out["map_nested"]
    got = run_cli("hash", str(path), "--secure")
    assert got.returncode == 0 and got.stdout.strip() == secure and "engine: arrow" in got.stderr, got.stderr
