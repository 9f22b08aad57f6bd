import pytest

import dsha.arrow as da
from arrow_helpers import NotCarryable, load_vectors, table_of

VECTORS = load_vectors()


def _table(vec):
    rows = vec["rows"]
    order = list(rows[0].keys()) if rows else None
    return table_of(vec["schema"], rows, order)


@pytest.mark.parametrize("vec", VECTORS, ids=[v["name"] for v in VECTORS])
def test_golden_vector(vec):
    try:
        t = _table(vec)
    except NotCarryable as e:
        pytest.skip(f"Arrow cannot carry the canonical type {e} (see SPEC.md Appendix A)")
    assert da.canonical_schema(t.schema) == vec["schema"]
    hashes = da.logical_hash(t)
    assert [bytes(h).hex() for h in hashes.to_pylist()] == vec["row_digests"]
    fp = da.fingerprint(t)
    assert fp.digest == vec["dsha"]
    assert fp.content_sum == vec["content_sum"]
    assert fp.rows == len(vec["rows"])
    assert fp.schema == vec["schema"]
    assert da.state(t).hex() == vec["state"]


def test_golden_vector_count():
    ran = []
    for v in VECTORS:
        try:
            _table(v)
            ran.append(v["name"])
        except NotCarryable:
            pass
    print(f"\n{len(ran)} of {len(VECTORS)} golden vectors run on Arrow")
    assert len(ran) >= 44
