"""Unit tests of the reference's file manifests (SPEC §12) and metadata fingerprints (SPEC §13).

Hand-built examples only; nothing here depends on dsha's engine.  Expected bytes are written out from the text of
the specification.
"""

import copy
import hashlib
import json
import os
import struct
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import dsha_reference as ref  # noqa: E402

S = 'struct<"a":int,"b":string>'
SD = hashlib.sha256(S.encode()).hexdigest()


def _sum_hex(rows):
    return ref.u128_bytes(int(ref.table_digest(S, rows)["content_sum"], 16)).hex()


PART0 = [{"a": 1, "b": "x"}, {"a": 2, "b": None}]
PART1 = [{"a": 3, "b": "é"}]


def manifest(files=None, **over):
    if files is None:
        files = [
            {"path": "k=1/part-00000.parquet", "size": 1234, "modified": 1763900000123, "rows": 2,
             "sum": _sum_hex(PART0)},
            {"path": "k=2/part-00001.parquet", "size": 99, "modified": 1763900000456, "rows": 1,
             "sum": _sum_hex(PART1)},
        ]
    doc = {"dsha": "manifest", "version": 1, "algorithm": "dsha-v1", "format": "parquet", "root": "file:/data/t",
           "schema": S, "schema_digest": SD, "rows": sum(f["rows"] for f in files),
           "digest": ref.table_digest(S, PART0 + PART1)["digest"], "files": files}
    doc.update(over)
    doc["checksum"] = ref.manifest_checksum(doc)
    return doc


def _field(text):
    b = text.encode("utf-8")
    return struct.pack("<I", len(b)) + b


def test_checksum_by_hand():
    doc = manifest()
    data = b"".join(_field(t) for t in ["manifest", "1", "dsha-v1", "parquet", "file:/data/t", S, SD, "2"])
    for f in doc["files"]:
        data += b"".join(_field(str(f[m])) for m in ("path", "size", "modified", "rows", "sum"))
    assert doc["checksum"] == hashlib.sha256(data).hexdigest()
    # a negative integer is its decimal text with '-'
    neg = manifest()
    neg["files"][0]["modified"] = -5
    data = data.replace(_field(str(doc["files"][0]["modified"])), b"\x02\x00\x00\x00-5", 1)
    assert ref.manifest_checksum(neg) == hashlib.sha256(data).hexdigest() != doc["checksum"]


def test_merged_state_and_digest():
    res = ref.check_manifest(manifest())
    whole = ref.table_digest(S, PART0 + PART1)
    assert res["digest"] == whole["digest"] == res["manifest_digest"]
    assert res["rows"] == 3 == res["manifest_rows"]
    assert res["content_sum"] == whole["content_sum"]
    assert ref.finalise_state(res["state"]) == whole["digest"]
    assert ref.parse_state(res["state"])["schema"] == S
    st = ref.file_state(manifest(), "k=2/part-00001.parquet")
    assert ref.finalise_state(st) == ref.table_digest(S, PART1)["digest"]


def test_empty_manifest_is_the_state_of_zero_rows():
    res = ref.check_manifest(manifest(files=[], rows=0, digest=ref.table_digest(S, [])["digest"]))
    assert res["rows"] == 0 and res["sum"] == 0 and res["digest"] == ref.table_digest(S, [])["digest"]


def test_sums_wrap():
    files = [{"path": p, "size": 1, "modified": 1, "rows": (1 << 64) - 1, "sum": "ff" * 16} for p in ("a", "b")]
    res = ref.check_manifest(manifest(files=files))
    assert res["rows"] == (1 << 64) - 2 and res["sum"] == (1 << 128) - 2


COVERED = [("version", 2), ("algorithm", "dsha-v2"), ("format", "orc"), ("root", "file:/data/u"),
           ("schema", 'struct<"a":int>'), ("schema_digest", "00" * 32)]
FILE_COVERED = [("path", "k=1/part-00009.parquet"), ("size", 1235), ("modified", 1763900000124), ("rows", 3),
                ("sum", "00" * 16)]


@pytest.mark.parametrize("member,value", COVERED)
def test_checksum_covers_each_member(member, value):
    doc = manifest()
    edited = dict(doc, **{member: value})
    assert ref.manifest_checksum(edited) != doc["checksum"]


@pytest.mark.parametrize("member,value", FILE_COVERED)
def test_checksum_covers_each_file_member(member, value):
    doc = manifest()
    edited = copy.deepcopy(doc)
    edited["files"][0][member] = value
    assert ref.manifest_checksum(edited) != doc["checksum"]
    with pytest.raises(ref.ManifestError, match="checksum that does not match"):
        ref.check_manifest(edited)


def test_checksum_covers_the_number_and_order_of_files():
    doc = manifest()
    one = copy.deepcopy(doc)
    del one["files"][1]
    assert ref.manifest_checksum(one) != doc["checksum"]
    swapped = copy.deepcopy(doc)
    swapped["files"].reverse()
    assert ref.manifest_checksum(swapped) != doc["checksum"]


def test_checksum_ignores_rows_digest_and_other_members():
    doc = manifest()
    for edit in ({"rows": 7}, {"digest": "f81b4f50120" + "00" * 32}, {"extra": [1, 2]}):
        edited = dict(doc, **edit)
        assert ref.manifest_checksum(edited) == doc["checksum"]
        res = ref.check_manifest(edited)  # accepted: the reader recomputes rows and digest
        assert res["digest"] == ref.table_digest(S, PART0 + PART1)["digest"]
    edited = dict(doc, rows=7)
    assert ref.check_manifest(edited)["manifest_rows"] == 7 != ref.check_manifest(edited)["rows"]
    extra_file_member = copy.deepcopy(doc)
    extra_file_member["files"][0]["note"] = "x"
    assert ref.check_manifest(extra_file_member)["rows"] == 3


def _rejected(doc, match):
    with pytest.raises(ref.ManifestError, match=match):
        ref.check_manifest(doc)


@pytest.mark.parametrize("member", sorted(ref.MANIFEST_MEMBERS))
def test_rejects_a_missing_member(member):
    doc = manifest()
    del doc[member]
    _rejected(doc, f"lacks a member: {member}")


@pytest.mark.parametrize("member", sorted(ref.FILE_MEMBERS))
def test_rejects_a_missing_file_member(member):
    doc = manifest()
    del doc["files"][1][member]
    _rejected(doc, rf"lacks a member: files\[1\]\.{member}")


@pytest.mark.parametrize("member,value", [
    ("dsha", 1), ("version", "1"), ("version", 1.0), ("version", True), ("algorithm", None), ("format", ["parquet"]),
    ("root", 1), ("schema", {}), ("schema_digest", 0), ("rows", "3"), ("rows", 3.0), ("digest", None),
    ("files", {}), ("checksum", 5)])
def test_rejects_a_member_of_the_wrong_type(member, value):
    _rejected(dict(manifest(), **{member: value}), f"wrong type: {member}")


@pytest.mark.parametrize("member,value", [
    ("path", 1), ("size", "1234"), ("size", 1234.0), ("modified", False), ("rows", None), ("sum", 0)])
def test_rejects_a_file_member_of_the_wrong_type(member, value):
    doc = manifest()
    doc["files"][0][member] = value
    _rejected(doc, rf"wrong type: files\[0\]\.{member}")
    doc = manifest()
    doc["files"][0] = [1]
    _rejected(doc, r"wrong type: files\[0\]")


def test_rejects_another_dsha_version_or_algorithm():
    _rejected(manifest(dsha="states"), "another dsha")
    _rejected(manifest(version=2), "another version")
    _rejected(manifest(algorithm="dsha-v2"), "does not implement")
    _rejected(manifest(algorithm="dsha-meta-v1"), "does not implement")


def test_rejects_a_schema_digest_that_is_not_the_sha256_of_schema():
    _rejected(manifest(schema_digest=SD.upper()), "not the SHA-256 of schema")
    _rejected(manifest(schema_digest=hashlib.sha256(b'struct<"a":int>').hexdigest()), "not the SHA-256 of schema")
    _rejected(manifest(schema='struct<"b":string,"a":int>'), "not in canonical form")
    _rejected(manifest(schema="struct<a:int>"), "not a canonical schema")


@pytest.mark.parametrize("bad", ["00" * 15, "00" * 17, "", "0" * 31])
def test_rejects_a_sum_of_the_wrong_length(bad):
    doc = copy.deepcopy(manifest())
    doc["files"][0]["sum"] = bad
    doc["checksum"] = ref.manifest_checksum(doc)
    _rejected(doc, "sum of the wrong length")


def test_rejects_a_sum_that_is_not_lower_case_hex():
    doc = copy.deepcopy(manifest())
    doc["files"][0]["sum"] = "AB" * 16
    doc["checksum"] = ref.manifest_checksum(doc)
    _rejected(doc, "not lower-case hex")


def test_rejects_a_path_listed_twice():
    files = manifest()["files"]
    files[1]["path"] = files[0]["path"]
    _rejected(manifest(files=files), "path listed twice")


def test_files_in_any_order_and_paths_not_below_root():
    # SPEC §12.3: a reader does not require the ascending order writers use; the checksum covers the order listed
    files = manifest()["files"]
    assert ref.check_manifest(manifest(files=files[::-1]))["digest"] == ref.check_manifest(manifest())["digest"]
    reordered = manifest()
    reordered["files"].reverse()  # the checksum of the written order
    _rejected(reordered, "checksum that does not match")
    for bad in ("", "/abs/part.parquet", "k=1//p", "../p", "k=1/./p", "k=1/"):
        fs = copy.deepcopy(files)
        fs[0]["path"] = bad
        _rejected(manifest(files=fs), "not a '/'-separated path below root")


def test_ascending_order_is_by_utf8_bytes():
    # U+FF21 (UTF-8 ef bc a1) sorts before U+1F600 (f0 9f 98 80) by UTF-8 bytes (and code points), after it by
    # UTF-16 code units (ff21 > d83d)
    fs = [{"path": p, "size": 1, "modified": 1, "rows": 0, "sum": "00" * 16} for p in ("\uff21", "\U0001f600")]
    ref.check_manifest(manifest(files=fs))
    assert sorted(f["path"].encode("utf-8") for f in fs) == [f["path"].encode("utf-8") for f in fs]
    utf16 = sorted((f["path"] for f in fs), key=lambda p: p.encode("utf-16-be"))
    assert utf16 != [f["path"] for f in fs]  # UTF-16 order (Java's String) is the other one


def test_rejects_a_checksum_that_does_not_match():
    doc = manifest()
    _rejected(dict(doc, checksum=doc["checksum"].upper()), "checksum that does not match")
    _rejected(dict(doc, checksum="0" * 64), "checksum that does not match")
    edited = copy.deepcopy(doc)
    edited["files"][0]["rows"] += 1  # a hand-edited row count
    _rejected(edited, "checksum that does not match")


def test_rejects_other_values():
    _rejected(manifest(format="Parquet"), "lower case")
    _rejected(manifest(format=""), "lower case")
    _rejected(manifest(root="/data/t"), "fully qualified")
    files = manifest()["files"]
    files[0]["size"] = -1
    _rejected(manifest(files=files), "size must not be negative")
    files = manifest()["files"]
    files[0]["rows"] = -1
    _rejected(manifest(files=files), "rows must be a u64")
    files = manifest()["files"]
    files[0]["modified"] = -1  # before 1970: an integer, as §12.2 writes negative ones
    ref.check_manifest(manifest(files=files))


def test_ignores_a_manifest_of_another_digest():
    doc = manifest()
    ref.check_manifest(doc, expect_algorithm="dsha-v1", expect_format="parquet",
                       expect_schema='struct<"b":string,"a":int>', expect_root="file:/data/t")
    with pytest.raises(ref.ManifestError, match="format 'parquet' differs"):
        ref.check_manifest(doc, expect_format="orc")
    with pytest.raises(ref.ManifestError, match="schema digest differs"):
        ref.check_manifest(doc, expect_schema='struct<"a":bigint,"b":string>')
    with pytest.raises(ref.ManifestError, match="not the directory being read"):
        ref.check_manifest(doc, expect_root="file:/data/u")
    with pytest.raises(ref.ManifestError, match="differs"):
        ref.check_manifest(doc, expect_algorithm="dsha-v2")


def test_load_manifest():
    doc = manifest()
    assert ref.load_manifest(json.dumps(doc).encode()) == doc
    for bad, match in [(b"{", "not valid JSON"), (b"[1]", "JSON object"), (b'\xff{}', "UTF-8"),
                       (b'{"a": 1, "a": 2}', "duplicate"), (b'{"a": NaN}', "NaN")]:
        with pytest.raises(ref.ManifestError, match=match):
            ref.load_manifest(bad)


# ----------------------------------------------------------------------------------------------------------------
# dsha-meta-v1 (SPEC §13)
# ----------------------------------------------------------------------------------------------------------------

FILES = [("file:/data/t/part-00001.parquet", 99, 1763900000456, ""),
         ("file:/data/t/part-00000.parquet", 1234, 1763900000123, ""),
         ("s3a://b/t/k=é/part-00002.parquet", 7, 0, '"9b2cf535f27731c974343645a3985328"')]


def _meta_by_hand(schema, files):
    body = b"dsha-meta-v1" + hashlib.sha256(schema.encode()).digest() + struct.pack("<Q", len(files))
    for p, size, mod, etag in sorted(files, key=lambda f: f[0].encode()):
        body += (struct.pack("<I", len(p.encode())) + p.encode() + struct.pack("<QQ", size, mod)
                 + struct.pack("<I", len(etag.encode())) + etag.encode())
    return "f" + bytes([0x80, 0xB5, 0xF5, 0x01, 0x20]).hex() + hashlib.sha256(body).hexdigest()


def test_meta_digest_by_hand():
    d = ref.meta_digest_files(S, FILES)
    assert d == _meta_by_hand(S, FILES)
    assert d.startswith("f80b5f50120") and len(d) == 75
    assert not d.startswith("f81b4f501")
    assert ref.varint(0x3D5A80) == bytes([0x80, 0xB5, 0xF5, 0x01])


def test_meta_digest_order_independent_and_sensitive():
    d = ref.meta_digest_files(S, FILES)
    assert ref.meta_digest_files(S, FILES[::-1]) == d
    assert ref.meta_digest_files('struct<"b":string,"a":int>', FILES) == d  # canonical schema
    changed = [
        FILES[:2],
        [("file:/data/t/part-00009.parquet",) + FILES[0][1:]] + FILES[1:],
        [FILES[0][:1] + (100,) + FILES[0][2:]] + FILES[1:],
        [FILES[0][:2] + (1763900000457, "")] + FILES[1:],
        [FILES[0][:3] + ("x",)] + FILES[1:],
    ]
    outs = {ref.meta_digest_files(S, fs) for fs in changed} | {ref.meta_digest_files('struct<"a":int>', FILES), d}
    assert len(outs) == len(changed) + 2
    empty = ref.meta_digest_files(S, [])
    assert empty == _meta_by_hand(S, [])


def test_meta_digest_sorts_by_utf8_bytes():
    fs = [("file:/t/\U0001f600", 1, 1, ""), ("file:/t/\uff21", 2, 2, "")]
    body = b"dsha-meta-v1" + bytes.fromhex(SD) + struct.pack("<Q", 2)
    for p, size, mod, _ in (fs[1], fs[0]):  # ef bc a1 < f0 9f 98 80
        body += struct.pack("<I", len(p.encode())) + p.encode() + struct.pack("<QQI", size, mod, 0)
    assert ref.meta_digest_files(S, fs) == "f80b5f50120" + hashlib.sha256(body).hexdigest()


def test_meta_digest_rejects():
    for bad in ([FILES[0], FILES[0]], [("p", -1, 0, "")], [("p", 1, 1 << 64, "")], [("p", 1, 1, None)],
                [("", 1, 1, "")], [("p", 1, 1)], [("p", True, 1, "")]):
        with pytest.raises(ValueError):
            ref.meta_digest_files(S, bad)


def test_meta_digest_delta_by_hand():
    tid = "5a6b7c8d-0000-4000-8000-123456789abc"
    body = (b"dsha-meta-v1:delta" + bytes.fromhex(SD) + struct.pack("<I", len(tid)) + tid.encode()
            + struct.pack("<Q", 3))
    d = ref.meta_digest_delta(S, tid, 3)
    assert d == "f80b5f50120" + hashlib.sha256(body).hexdigest()
    assert len(b"dsha-meta-v1:delta") == 18
    assert d != ref.meta_digest_delta(S, tid, 4) != ref.meta_digest_delta(S, tid + "x", 3)
    assert d != ref.meta_digest_delta('struct<"a":int>', tid, 3)
    # a Delta fingerprint is never a file-list one
    assert d != ref.meta_digest_files(S, [])


def _add(dc):
    return {"add": {"path": "p", "dataChange": dc}}


def _remove(dc):
    return {"remove": {"path": "p", "dataChange": dc}}


def test_delta_data_version():
    commits = {
        0: [{"metaData": {"id": "t"}}, _add(True)],
        1: [_add(True)],                                  # append
        2: [_remove(False), _add(False)],                 # OPTIMIZE
        3: [{"commitInfo": {}}, _remove(False), _add(False)],
        4: [_remove(True), _add(True)],                   # delete
        5: [_remove(False), _add(False), {"metaData": {"id": "t"}}],  # a schema change
        6: [_remove(False), _add(False)],
        8: [_remove(False), _add(False)],                 # 7 is missing (log cleanup)
        9: None,                                          # unreadable
        10: [_add(False), {"add": {"path": "q"}}],        # dataChange absent: taken as a change
        11: [_remove(False), _add(False)],
    }
    expected = {0: 0, 1: 1, 2: 1, 3: 1, 4: 4, 5: 5, 6: 5, 7: 7, 8: 7, 9: 9, 10: 10, 11: 10}
    assert {v: ref.delta_data_version(commits, v) for v in expected} == expected
    assert ref.delta_data_version({0: [_remove(False), _add(False)]}, 0) == 0  # d = 0 always counts
    assert ref.delta_data_version({}, 3) == 3


def test_read_delta_commits(tmp_path):
    log = tmp_path / "_delta_log"
    log.mkdir()
    (log / f"{0:020d}.json").write_text(json.dumps({"metaData": {"id": "t"}}) + "\n" + json.dumps(_add(True)))
    (log / f"{1:020d}.json").write_text(json.dumps(_add(False)) + "\n")
    (log / f"{3:020d}.json").write_text("{not json")
    commits = ref.read_delta_commits(str(tmp_path), 3)
    assert commits[0][0] == {"metaData": {"id": "t"}} and commits[2] is None and commits[3] is None
    assert [ref.delta_data_version(commits, v) for v in range(4)] == [0, 0, 2, 3]


def test_list_local_data_files(tmp_path):
    (tmp_path / "k=1").mkdir()
    (tmp_path / "_dsha").mkdir()
    (tmp_path / ".hidden").mkdir()
    for p in ("k=1/a.parquet", "b.parquet", "_SUCCESS", ".b.parquet.crc", "_dsha/manifest.json", ".hidden/x",
              "k=1/_tmp"):
        (tmp_path / p).write_bytes(b"12345")
    os.utime(tmp_path / "b.parquet", ns=(0, 1_700_000_000_123_999_999))
    got = sorted(ref.list_local_data_files(str(tmp_path)))
    assert got == [(f"file:{tmp_path}/b.parquet", 5, 1_700_000_000_123, ""),
                   (f"file:{tmp_path}/k=1/a.parquet", 5, (tmp_path / "k=1/a.parquet").stat().st_mtime_ns // 10**6,
                    "")]


# ----------------------------------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------------------------------

SCRIPT = os.path.join(HERE, "dsha_reference.py")


def _run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def test_command_line_manifest_and_meta(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest()))
    r = _run("manifest", str(path))
    assert r.returncode == 0 and r.stdout.strip() == ref.table_digest(S, PART0 + PART1)["digest"]
    path.write_text(json.dumps(dict(manifest(), rows=9)))
    r = _run("manifest", str(path))
    assert r.returncode == 0 and "its rows 9 are not the files' 3" in r.stderr
    doc = manifest()
    doc["files"][0]["rows"] = 5
    path.write_text(json.dumps(doc))
    r = _run("manifest", str(path))
    assert r.returncode == 1 and "checksum that does not match" in r.stderr
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "p.parquet").write_bytes(b"x")
    r = _run("meta", str(tmp_path / "d"), S)
    assert r.returncode == 0
    assert r.stdout.strip() == ref.meta_digest_files(S, ref.list_local_data_files(str(tmp_path / "d")))
    assert _run("nonsense").returncode == 2
