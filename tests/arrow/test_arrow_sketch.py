"""The sketch of SPEC.md §17 in Python (dsha.core.sketch, dsha.arrow.sketch) against every vector of
tests/golden/vectors-sketch.json (written by the independent reference): bytes, folds, merges, decodings."""
import json
import os

import pytest

from arrow_helpers import NotCarryable, table_of
from dsha.arrow.sketch import build
from dsha.core.sketch import Sketch, decode, decode_smallest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
with open(os.path.join(ROOT, "tests", "golden", "vectors-sketch.json"), encoding="utf-8") as f:
    VECTORS = json.load(f)


def _sketch(schema, rows, cells, columns=True):
    order = list(rows[0].keys()) if rows else None
    try:
        t = table_of(schema, rows, order)
    except NotCarryable as e:
        pytest.skip(f"Arrow cannot carry the canonical type {e} (see SPEC.md Appendix A)")
    assert build(t.schema, t.to_batches(), cells).schema == schema
    return build(t.schema, t.to_batches(), cells, column_digests=columns)


def _decoded(result):
    """A decode as the vectors write it."""
    out = {"success": result.success, "filters_valid": result.filters_valid}
    if result.success:
        out["entries"] = {d.hex(): n for d, (n, _) in result.entries.items()}
    if result.filters_valid:
        out["filters"] = {d.hex(): phi for d, (_, phi) in result.entries.items()}
    return out


def _expected(vec):
    return {k: v for k, v in vec.items() if k in ("success", "entries", "filters_valid", "filters")}


@pytest.mark.parametrize("vec", VECTORS["sketches"], ids=[v["name"] for v in VECTORS["sketches"]])
def test_sketch_vector(vec):
    six = _sketch(vec["schema"], vec["rows"], 6)
    assert six.to_bytes().hex() == vec["sketch_m6"]
    assert _sketch(vec["schema"], vec["rows"], 1, columns=False).to_bytes().hex() == vec["sketch_m1_no_columns"]
    parsed = Sketch.parse(bytes.fromhex(vec["sketch_m6"]))
    assert parsed.to_bytes().hex() == vec["sketch_m6"]
    result = decode_smallest(parsed.minus(Sketch.empty(vec["schema"], 6)))
    assert result.cells == vec["decode"]["cells_used"]
    assert _decoded(result) == _expected(vec["decode"])


@pytest.mark.parametrize("vec", VECTORS["differences"], ids=[v["name"] for v in VECTORS["differences"]])
def test_difference_vector(vec):
    m_left, m_right = vec.get("m_left", vec.get("m")), vec.get("m_right", vec.get("m"))
    left = _sketch(vec["schema"], vec["rows_left"], m_left)
    right = _sketch(vec["schema"], vec["rows_right"], m_right)
    assert left.to_bytes().hex() == vec["sketch_left"]
    assert right.to_bytes().hex() == vec["sketch_right"]
    diff = Sketch.parse(bytes.fromhex(vec["sketch_left"])).minus(Sketch.parse(bytes.fromhex(vec["sketch_right"])))
    at_size = decode(diff)
    assert at_size.cells == vec["decode_at_size"]["size"]
    assert _decoded(at_size) == _expected(vec["decode_at_size"])
    smallest = decode_smallest(diff)
    assert _decoded(smallest) == _expected(vec["decode"])
    if smallest.success:
        assert smallest.cells == vec["decode"]["cells_used"]
    else:
        assert vec["decode"]["cells_used"] is None and smallest.estimate >= 1


def test_fold_vector():
    vec = VECTORS["fold"]
    twelve = _sketch(vec["schema"], vec["rows"], 12)
    assert twelve.to_bytes().hex() == vec["sketch_m12"]
    for m in (3, 4):
        assert twelve.fold(m).to_bytes().hex() == vec[f"folded_m{m}"]
        assert _sketch(vec["schema"], vec["rows"], m).to_bytes().hex() == vec[f"folded_m{m}"]


@pytest.mark.parametrize("vec", VECTORS["version1"], ids=[v["name"] for v in VECTORS["version1"]])
def test_version1_vector(vec):
    one = Sketch.parse(bytes.fromhex(vec["sketch_m6"]))
    assert one.filter is None and one.to_bytes().hex() == vec["sketch_m6"]
    two = _sketch(vec["schema"], vec["rows"], 6)
    assert one.merge(two).to_bytes().hex() == vec["merged_with_v2"]
    result = decode_smallest(one.minus(Sketch.empty(vec["schema"], 6)))
    assert result.cells == vec["decode"]["cells_used"]
    assert _decoded(result) == _expected(vec["decode"])
