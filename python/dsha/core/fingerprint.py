"""Fingerprints (SPEC.md §6) and their comparison: values, the same from every engine."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from dsha.core.states import content_sum_hex, parse

__all__ = ["Comparison", "Fingerprint", "PathFingerprint"]


@dataclass(frozen=True)
class Fingerprint:
    """The dsha digest of a DataFrame and the parts it is made of (SPEC.md §6)."""

    digest: str
    rows: int
    schema_digest: str
    content_sum: str
    schema: str
    algorithm: str

    def __str__(self) -> str:
        return self.digest

    def __repr__(self) -> str:
        # one field a line: the schema and the digests are long
        return (f"Fingerprint(\n    digest={self.digest!r},\n    rows={self.rows},\n    algorithm={self.algorithm!r},\n"
                f"    schema={self.schema!r},\n    schema_digest={self.schema_digest!r},\n"
                f"    content_sum={self.content_sum!r},\n)")

    def _repr_html_(self) -> str:
        """The fingerprint in a notebook (Jupyter; Databricks: ``displayHTML(fp._repr_html_())``)."""
        from dsha.core.diff_html import fingerprint_html

        return fingerprint_html(self)

    @classmethod
    def from_state(cls, state: bytes) -> Fingerprint:
        """The fingerprint of a digest state (``dsha.state``, ``dsha.merge``, SQL ``dsha_state``), computed in pure
        Python: the same ``Fingerprint`` that ``dsha.fingerprint`` gives for the same rows (SPEC.md §11)."""
        s = parse(state)
        return cls(digest=s.digest, rows=s.rows, schema_digest=s.schema_digest.hex(),
                   content_sum=content_sum_hex(s.algorithm, s.content_sum), schema=s.schema, algorithm=s.algorithm)


@dataclass(frozen=True)
class Comparison:
    """Truthy exactly when the two fingerprints are equal; ``reason`` says which part differs."""

    left: Fingerprint
    right: Fingerprint

    @property
    def equal(self) -> bool:
        return self.left.digest == self.right.digest

    @property
    def reason(self) -> Optional[str]:
        """None when equal, else the first part that differs: "schema", "row count" or "content"."""
        if self.equal:
            return None
        if self.left.schema_digest != self.right.schema_digest:
            return "schema"
        if self.left.rows != self.right.rows:
            return "row count"
        return "content"

    def explain(self) -> str:
        """One or a few lines for people: equal (digest, rows), or what differs."""
        if self.equal:
            return f"equal: {self.left.digest} ({self.left.rows} rows)"
        if self.reason == "schema":
            return f"schemas differ:\n  {self.left.schema}\n  {self.right.schema}"
        if self.reason == "row count":
            return f"row counts differ: {self.left.rows} vs {self.right.rows}"
        return f"same schema and row count ({self.left.rows}), different content"

    def __bool__(self) -> bool:
        return self.equal

    def _repr_html_(self) -> str:
        """The comparison in a notebook: both sides side by side, what differs marked."""
        from dsha.core.diff_html import comparison_html

        return comparison_html(self)

    def __repr__(self) -> str:
        # what differs, each side's digest and rows, and the schema once when both sides share it
        lines = [f"Comparison(equal={self.equal}, reason={self.reason!r},",
                 f"    left=(digest={self.left.digest!r}, rows={self.left.rows}),",
                 f"    right=(digest={self.right.digest!r}, rows={self.right.rows}),"]
        if self.left.schema == self.right.schema:
            lines.append(f"    schema={self.left.schema!r},")
        else:
            lines += [f"    left_schema={self.left.schema!r},", f"    right_schema={self.right.schema!r},"]
        return "\n".join([*lines, f"    algorithm={self.left.algorithm!r},", ")"])


@dataclass(frozen=True)
class PathFingerprint:
    """The fingerprint of the files at a path (or of a table's files), with how it was computed: how many files were
    read and how many states were reused from a manifest or cache (``manifest``: where from, or None), and any
    warnings."""

    fingerprint: Fingerprint
    files_total: int
    files_read: int
    files_reused: int
    manifest: Optional[str]
    warnings: List[str] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return self.fingerprint.digest

    @property
    def rows(self) -> int:
        return self.fingerprint.rows

    def __str__(self) -> str:
        return self.fingerprint.digest

    def stored_states_note(self, fmt: Optional[str], cache: str = "the state file",
                           reread: str = "--no-cache") -> Optional[str]:
        """One line saying that the digest rests on stored per-file states and on the check that chose them
        (SPEC.md §12.3), or None when every file was read. ``fmt``: the input's format (None for a table);
        ``cache``: what to call a state cache that is not a manifest beside the files; ``reread``: the option that
        reads every file instead."""
        if self.files_reused == 0:
            return None
        # Delta and Iceberg states are kept per file name, which their logs never reuse for other data.
        table = fmt in (None, "delta", "iceberg")
        check = "named unchanged by the table's log" if table else "size and mtime unchanged"
        source = "the manifest" if (self.manifest or "").endswith("/_dsha/manifest.json") else cache
        return f"{self.files_reused} of {self.files_total} files from {source} ({check}); {reread} re-reads them"
