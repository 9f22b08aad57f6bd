"""The algorithms (SPEC.md §6, §16): the one table of them in Python, held to the jar's ``Algorithm.all`` by
tests/python/test_algorithm_table.py. Everything else (state parsing and merging, ``algorithm=`` names, the SQL
functions of each, the command line's choices) reads it from here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from dsha.core.key_text import key_reference_parts

__all__ = ["ALGORITHMS", "BY_CODE", "BY_ID", "DEFAULT", "KEYED", "KEYED_NAMES", "META_ALGORITHM", "META_CODE",
           "Algorithm", "algorithm_id", "named_algorithm"]


@dataclass(frozen=True)
class Algorithm:
    """One algorithm: its id (``dsha-v1``), multihash code, combiner state (its bytes; ``lanes``: 64-bit lanes summed
    lane by lane, else one number summed mod 2^(8*bytes)), whether it takes a key, the prefix of its SQL functions
    (``dsha``, ``dsha_secure``, ``dsha_secure_v2``, ``dsha_keyed``) and the short name ``algorithm=`` takes besides the
    id."""

    id: str
    code: int
    state_bytes: int
    lanes: bool
    keyed: bool
    sql: str
    short_name: str


ALGORITHMS: Tuple[Algorithm, ...] = (
    Algorithm("dsha-v1", 0x3D5A01, 16, False, False, "dsha", "v1"),
    Algorithm("dsha-keyed-v1", 0x3D5A10, 32, False, True, "dsha_keyed", "keyed"),
    Algorithm("dsha-keyed-v2", 0x3D5A11, 32, False, True, "dsha_keyed", "keyed-v2"),
    Algorithm("dsha-secure-v1", 0x3D5A20, 4096, True, False, "dsha_secure", "secure"),
    Algorithm("dsha-secure-v2", 0x3D5A21, 2048, True, False, "dsha_secure_v2", "secure-v2"),
)
BY_ID: Dict[str, Algorithm] = {a.id: a for a in ALGORITHMS}
BY_CODE: Dict[int, Algorithm] = {a.code: a for a in ALGORITHMS}
DEFAULT = "dsha-v1"
KEYED: Tuple[str, ...] = tuple(a.id for a in ALGORITHMS if a.keyed)
# algorithm= names of the keyed algorithms (the short name and the id alike), which the Column functions take too.
KEYED_NAMES: Dict[str, str] = {n: a.id for a in ALGORITHMS if a.keyed for n in (a.short_name, a.id)}
_NAMES: Dict[Optional[str], str] = {None: DEFAULT, **{n: a.id for a in ALGORITHMS for n in (a.short_name, a.id)}}

# The approximate fingerprint of file or table metadata (SPEC.md §13): not a content digest, never in a state.
META_ALGORITHM = "dsha-meta-v1"
META_CODE = 0x3D5A80


def named_algorithm(key: object) -> Optional[str]:
    """The algorithm a key reference names, ``conf:NAME#ALGORITHM`` (SPEC.md §16.2), else None."""
    if isinstance(key, str) and key.startswith("conf:"):
        return key_reference_parts(key)[1]
    return None


def algorithm_id(algorithm: Optional[str], key: object) -> str:
    """The algorithm id of ``algorithm=`` and ``key=`` (SPEC.md §16): a key means dsha-keyed-v1, unless its reference
    names another."""
    if algorithm is None:
        algorithm = named_algorithm(key)
    if algorithm not in _NAMES:
        raise ValueError(f"unknown dsha algorithm {algorithm!r}: use 'v1', 'secure' / 'secure-v2', or 'keyed' / "
                         "'keyed-v2' (with key=)")
    resolved = "dsha-keyed-v1" if key is not None and algorithm is None else _NAMES[algorithm]
    if (resolved in KEYED) != (key is not None):
        raise ValueError("key= and algorithm='keyed' go together (or 'keyed-v2'): the keyed digests need a key, the "
                         "others take none")
    return resolved
