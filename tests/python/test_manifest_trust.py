"""A manifest is a cache, never a trust anchor (SPEC.md §12.2, §12.3). An attacker without the key changes a data file,
re-stamps its manifest entry's size and modification time, keeps the old state and recomputes the public checksum:
keyed digests see it (the manifest's MAC no longer verifies), secure digests never read states back, and both equal a
full re-read and differ from the genuine table's. dsha-v1 trusts such a manifest (documented: dsha-v1 is not
tamper-evident), and `dsha hash` says in one stderr line when its answer rests on stored states."""
import hashlib
import hmac
import json
import os
import shutil
import struct
import warnings

import pytest

import dsha
from cli_runner import run_cli
from conftest import MODE

pytestmark = pytest.mark.skipif(MODE == "connect", reason="dsha.write and fingerprint_path need a classic session")

KEY = hashlib.sha256(b"test_manifest_trust key").digest()


def _manifest_path(out):
    return out / "_dsha" / "manifest.json"


def _load(out):
    return json.loads(_manifest_path(out).read_text(encoding="utf-8"))


def _fields(m):
    """The bytes SPEC.md §12.2 covers, implemented from its text: u32-LE-length-prefixed UTF-8 texts."""
    values = ["manifest", m["version"], m["algorithm"], m["format"], m["root"], m["schema"], m["schema_digest"]]
    if "key_id" in m:
        values.append(m["key_id"])
    values.append(len(m["files"]))
    for f in m["files"]:
        values += [f["path"], f["size"], f["modified"], f["rows"], f["sum"]]
    out = b""
    for v in values:
        b = str(v).encode("utf-8")
        out += struct.pack("<I", len(b)) + b
    return out


def _spec_mac(m, key):
    mac_key = hmac.new(key, f"{m['algorithm']} manifest mac key".encode("ascii"), hashlib.sha256).digest()
    return hmac.new(mac_key, _fields(m), hashlib.sha256).hexdigest()


def _genuine(spark, out, **algorithm):
    df = spark.range(0, 600, 1, 3).selectExpr("id", "CAST(id * 7 AS STRING) AS s")
    return dsha.write(df, str(out), **algorithm)


def _tamper(spark, out, tmp_path):
    """Replaces the first data file by other rows of the same schema, then re-stamps its manifest entry (size and
    modification time of the new file, old rows and state kept) and recomputes the public checksum."""
    other = tmp_path / "other"
    spark.range(5000, 5050, 1, 1).selectExpr("id", "CAST(id AS STRING) AS s").write.parquet(str(other))
    new_file = next(p for p in sorted(os.listdir(other)) if p.startswith("part-"))
    m = _load(out)
    entry = m["files"][0]
    target = out / entry["path"]
    shutil.copyfile(other / new_file, target)
    crc = target.parent / f".{target.name}.crc"
    if crc.exists():
        crc.unlink()  # Hadoop's local file system would refuse the file, not dsha
    st = os.stat(target)
    entry["size"], entry["modified"] = st.st_size, st.st_mtime_ns // 1_000_000
    m["checksum"] = hashlib.sha256(_fields(m)).hexdigest()
    _manifest_path(out).write_text(json.dumps(m, indent=2), encoding="utf-8")


def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [str(w.message) for w in caught]


@pytest.mark.parametrize("algorithm", ["keyed", "keyed-v2"])
def test_a_keyed_manifest_carries_the_mac_spec_defines_and_a_re_stamped_one_is_not_used(spark, tmp_path, algorithm):
    out = tmp_path / "t"
    genuine = _genuine(spark, out, key=KEY, algorithm=algorithm)
    m = _load(out)
    assert m["mac"] == _spec_mac(m, KEY) and m["checksum"] == hashlib.sha256(_fields(m)).hexdigest()
    assert KEY.hex() not in json.dumps(m)
    same = dsha.fingerprint_path(spark, str(out), key=KEY, algorithm=algorithm)
    assert (same.files_reused, same.fingerprint) == (3, genuine)

    _tamper(spark, out, tmp_path)
    r, messages = _caught(lambda: dsha.fingerprint_path(spark, str(out), key=KEY, algorithm=algorithm))
    full = dsha.fingerprint_path(spark, str(out), key=KEY, algorithm=algorithm, use_cache=False)
    read_back = dsha.fingerprint(spark.read.parquet(str(out)), key=KEY, algorithm=algorithm)
    assert r.fingerprint == full.fingerprint == read_back != genuine
    assert (r.files_read, r.files_reused, r.manifest) == (3, 0, None)
    assert any("MAC does not verify" in w for w in messages), messages


def test_a_keyed_manifest_without_a_mac_is_not_trusted_and_the_files_are_read(spark, tmp_path):
    out = tmp_path / "t"
    genuine = _genuine(spark, out, key=KEY)
    m = _load(out)
    del m["mac"]  # as dsha wrote keyed manifests before the MAC, or as anyone without the key can write one
    m["checksum"] = hashlib.sha256(_fields(m)).hexdigest()
    _manifest_path(out).write_text(json.dumps(m), encoding="utf-8")
    r, messages = _caught(lambda: dsha.fingerprint_path(spark, str(out), key=KEY))
    assert (r.files_read, r.files_reused, r.fingerprint) == (3, 0, genuine)
    assert any("carries no MAC" in w for w in messages), messages
    # A re-digest asked to keep its states writes them with a MAC again, which the next run uses.
    _caught(lambda: dsha.fingerprint_path(spark, str(out), key=KEY, update_manifest=True))
    again = dsha.fingerprint_path(spark, str(out), key=KEY)
    assert (again.files_reused, again.fingerprint) == (3, genuine) and _load(out)["mac"] == _spec_mac(_load(out), KEY)


def test_another_keys_mac_is_refused_even_with_this_keys_key_id(spark, tmp_path):
    out = tmp_path / "t"
    genuine = _genuine(spark, out, key=KEY)
    m = _load(out)
    m["mac"] = _spec_mac(m, bytes(reversed(KEY)))  # someone holding another key signs this key's manifest
    _manifest_path(out).write_text(json.dumps(m), encoding="utf-8")
    r, messages = _caught(lambda: dsha.fingerprint_path(spark, str(out), key=KEY))
    assert (r.files_read, r.fingerprint) == (3, genuine)
    assert any("MAC does not verify" in w for w in messages), messages


@pytest.mark.parametrize("algorithm", ["secure", "secure-v2"])
def test_secure_re_digests_read_every_file_whatever_the_manifest_says(spark, tmp_path, algorithm):
    out = tmp_path / "t"
    genuine = _genuine(spark, out, algorithm=algorithm)
    assert _load(out)["algorithm"] == genuine.algorithm and "mac" not in _load(out)
    untouched = dsha.fingerprint_path(spark, str(out), algorithm=algorithm)
    assert (untouched.files_read, untouched.files_reused, untouched.fingerprint) == (3, 0, genuine)
    _tamper(spark, out, tmp_path)
    r = dsha.fingerprint_path(spark, str(out), algorithm=algorithm)
    full = dsha.fingerprint_path(spark, str(out), algorithm=algorithm, use_cache=False)
    assert r.fingerprint == full.fingerprint == dsha.fingerprint(spark.read.parquet(str(out)), algorithm=algorithm)
    assert r.fingerprint != genuine and (r.files_read, r.files_reused, r.manifest) == (3, 0, None)


def test_dsha_v1_trusts_a_re_stamped_manifest_and_dsha_hash_says_so(spark, tmp_path):
    """Documented (SPEC.md §12.3): dsha-v1's checksum needs no secret, so a deliberately edited manifest is used;
    `dsha hash` says on stderr that its answer rests on stored states, and --no-cache gives the files' digest."""
    out = tmp_path / "t"
    genuine = _genuine(spark, out)
    _tamper(spark, out, tmp_path)
    actual = dsha.fingerprint(spark.read.parquet(str(out)))
    assert actual != genuine
    cached = run_cli("hash", str(out))
    assert cached.returncode == 0 and cached.stdout.strip() == genuine.digest, cached.stderr
    note = "dsha: 3 of 3 files from the manifest (size and mtime unchanged); --no-cache re-reads them"
    assert note in cached.stderr.splitlines(), cached.stderr
    reread = run_cli("hash", str(out), "--no-cache", "--json")
    assert reread.returncode == 0 and json.loads(reread.stdout)["digest"] == actual.digest, reread.stderr
    assert "from the manifest" not in reread.stderr
    # Partly from the manifest: a new file is read, the others are not, and the line counts them.
    spark.range(9000, 9010, 1, 1).selectExpr("id", "CAST(id AS STRING) AS s").write.mode("append").parquet(str(out))
    partly = run_cli("hash", str(out), "--json")
    assert json.loads(partly.stdout)["files_reused"] == 3, partly.stderr
    assert "dsha: 3 of 4 files from the manifest (size and mtime unchanged); --no-cache re-reads them" in partly.stderr


def test_check_and_record_say_when_unchanged_rests_on_stored_states(spark, tmp_path):
    """`dsha record` and `dsha check` name each input whose fingerprint rests on stored per-file states (a manifest
    beside the files, or the last record's), as `dsha hash` does. A file rewritten with the same size and its old
    modification time (the documented §12.3 limit) is "unchanged" from stored states, and says so; --no-cache (Python:
    use_cache=False) reads the files and finds the change."""
    written, store = tmp_path / "t", tmp_path / "store"
    genuine = _genuine(spark, written)
    rec = run_cli("record", "w", str(written), "--store", store, "--create-store", "--engine", "spark")
    note = "dsha: {}: {} of {} files from {} (size and mtime unchanged); --no-cache re-reads them"
    assert rec.returncode == 0 and genuine.digest in rec.stdout, rec.stderr
    assert note.format(written, 3, 3, "the manifest") in rec.stderr.splitlines(), rec.stderr
    data = tmp_path / "csv"
    data.mkdir()
    for name, rows in (("a.csv", "1,x\n2,y\n"), ("b.csv", "3,z\n")):
        (data / name).write_text(rows)
    first = run_cli("record", "step", str(data), "--store", store, "--engine", "spark")
    assert first.returncode == 0 and "files from" not in first.stderr, first.stderr
    stamp = os.stat(data / "a.csv")
    (data / "a.csv").write_text("1,x\n2,q\n")  # one value changed, same size, old modification time
    os.utime(data / "a.csv", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    check = run_cli("check", "step", str(data), "--store", store, "--engine", "spark")
    assert check.returncode == 0, (check.returncode, check.stderr)
    assert note.format(data, 2, 2, "the last record") in check.stderr.splitlines(), check.stderr
    explained = dsha.changed([str(data)], store=str(store), name="step").explain().splitlines()
    assert explained[1:] == [f"{data}: 2 of 2 files from the last record (size and mtime unchanged); use_cache=False "
                             "re-reads them"], explained
    assert dsha.changed([str(data)], store=str(store), name="step", use_cache=False)
    reread = run_cli("check", "step", str(data), "--store", store, "--engine", "spark", "--no-cache", "--json")
    assert reread.returncode == 1 and "files from" not in reread.stderr, (reread.returncode, reread.stderr)
    assert json.loads(reread.stdout)["changes"][0]["what"] == "content"
    both = run_cli("check", "step", str(data), "--store", store, "--no-cache", "--approximate")
    assert both.returncode == 2 and "takes no --no-cache" in both.stderr


@pytest.fixture(scope="module")
def written(spark, tmp_path_factory):
    """One directory per algorithm written by dsha.write (3 files), and its genuine digest."""
    root = tmp_path_factory.mktemp("written")
    return {name: (root / name, _genuine(spark, root / name, **options))
            for name, options in {"v1": {}, "keyed": {"key": KEY}, "secure": {"algorithm": "secure"}}.items()}


def _edit(out, attack):
    """One edit an attacker without the key makes to a copy written by dsha.write, the §12.2 checksum recomputed."""
    m = _load(out)
    f = m["files"]
    if attack == "sum":  # (a) a file's state
        f[0]["sum"] = "0" * len(f[0]["sum"])
    elif attack == "rows":  # (b) a file's rows
        f[0]["rows"] += 5
    elif attack == "totals":  # (b) the manifest's own rows and digest (derived, not covered: recomputed)
        m["rows"] += 5
        m["digest"] = m["digest"][:-4] + "0000"
    elif attack == "swap":  # (d) two entries' names swapped
        f[0]["path"], f[1]["path"] = f[1]["path"], f[0]["path"]
    elif attack == "missing":  # (e) an entry for a file that is gone
        (out / f[0]["path"]).unlink()
    elif attack == "extra":  # (e) an entry added for a file that does not exist
        f.append(dict(f[0], path="part-99999.parquet"))
    elif attack == "unlisted":  # (f) a file present that has no entry
        del f[0]
    m["checksum"] = hashlib.sha256(_fields(m)).hexdigest()
    _manifest_path(out).write_text(json.dumps(m), encoding="utf-8")


@pytest.mark.parametrize("attack", ["sum", "rows", "totals", "swap", "missing", "extra", "unlisted"])
def test_each_edit_gives_the_files_digest_or_a_warning_and_never_a_keyed_or_secure_forgery(spark, written, tmp_path,
                                                                                           attack):
    """Every reader of a manifest (fingerprint_path, and `dsha hash` on Spark, both the JVM's PathDigest) gives the
    digest of a full read (use_cache=False), or, for a keyed manifest whose MAC no longer verifies, that digest and
    a warning. The one exception is documented (SPEC.md §12.3): dsha-v1 uses an edited state whose checksum was
    recomputed, and `dsha hash` says its answer rests on stored states."""
    for name, (source, genuine) in written.items():
        out = tmp_path / name
        shutil.copytree(source, out)  # copy2: sizes and modification times kept, so unchanged files match
        _edit(out, attack)
        options = {"v1": {}, "keyed": {"key": KEY}, "secure": {"algorithm": "secure"}}[name]
        r, messages = _caught(lambda out=out, options=options: dsha.fingerprint_path(spark, str(out), **options))
        documented = name == "v1" and attack in ("sum", "rows")  # dsha-v1's checksum is no signature (§12.3)
        # A second computation where the data changed or the answer differs; else the files are the written ones.
        full = (dsha.fingerprint_path(spark, str(out), use_cache=False, **options).fingerprint
                if attack == "missing" or documented else genuine)
        assert (full == genuine) == (attack != "missing"), (name, attack)
        mac_broken = name == "keyed" and attack not in ("totals", "missing")
        assert any("MAC does not verify" in w for w in messages) == mac_broken, (name, attack, messages)
        if documented:
            assert r.files_reused == 3 and r.fingerprint != full, attack
            cli = run_cli("hash", str(out))
            assert cli.returncode == 0 and cli.stdout.strip() == r.fingerprint.digest, cli.stderr
            assert "3 of 3 files from the manifest (size and mtime unchanged)" in cli.stderr, cli.stderr
        else:
            assert r.fingerprint == full, (name, attack)
