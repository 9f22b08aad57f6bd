"""Per-file digest states of table formats (Delta, SPEC.md §14; Iceberg, §15): a unit is a set of files whose rows
together have one state, and a rewrite that only moved rows (OPTIMIZE, a replace snapshot) gives its new files the
merged state of the units it removed."""
from __future__ import annotations

from typing import Dict, FrozenSet, Hashable, List, Optional, Tuple

from dsha.states import merge


class Unit:
    """Files whose rows together have ``state`` (None: no rows): one file, or the group of a rewrite."""

    __slots__ = ("keys", "state")

    def __init__(self, keys: FrozenSet[Hashable], state: Optional[bytes]):
        self.keys, self.state = keys, state


def replaced_state(removed: List[Hashable], by_key: Dict[Hashable, Unit]) -> Tuple[bool, Optional[bytes]]:
    """(True, the merged state) when the removed files are exactly covered by known units lying wholly among them;
    (False, None) otherwise (then the rewrite's new files must be read)."""
    rset = set(removed)
    cover: Dict[int, Unit] = {}
    for k in removed:
        u = by_key.get(k)
        if u is None or not u.keys <= rset:
            return False, None
        cover[id(u)] = u
    if sum(len(u.keys) for u in cover.values()) != len(rset):
        return False, None
    states = [u.state for u in cover.values() if u.state is not None]
    return True, merge(states) if states else None
