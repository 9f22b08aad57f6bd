"""What several commands share about their arguments: inputs named on the command line, columns, and the digest
options of ``hash`` and ``compare`` (``--engine``, ``--secure``, ``--key-file``, ``--key-algorithm``)."""
from __future__ import annotations

import argparse
import base64
import binascii
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from dsha.core.algorithms import ALGORITHMS, KEYED
from dsha.core.key_text import checked_key_text
from dsha.core.paths import check_local, format_of
from dsha.errors import UsageError
from dsha.inputs import Path, Table

__all__ = ["ENGINES", "add_digest_options", "algorithm_args", "check_columns", "check_conf", "check_sources",
           "columns", "excluded", "source_input", "validate_digest_options"]

ENGINES = ("auto", "arrow", "spark")


def source_input(source: str, fmt: Optional[str], force: bool = False) -> Union[Table, Path]:
    """A source as the command line names it: ``table:NAME``, else a path (in ``--format``, if given)."""
    return Table(source[len("table:"):]) if source.startswith("table:") else Path(source, fmt, force)


def check_sources(sources: Sequence[Optional[str]], fmt: Optional[str] = None, force: bool = False) -> None:
    """Fail fast, before Spark starts: local paths that are missing or unreadable, mixed directories, a format
    given for a Delta or Iceberg table's directory without --force."""
    for source in sources:
        if source is not None and not source.startswith("table:"):
            check_local(source)
            format_of(source, fmt, force, note=False)


def check_conf(args: argparse.Namespace) -> None:
    """Every ``--conf`` is KEY=VALUE (Spark fails on a bare KEY only once its session starts, and not saying which)."""
    for kv in args.conf:
        key, eq, _ = kv.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"--conf {kv}: a Spark setting is KEY=VALUE, e.g. --conf spark.sql.shuffle.partitions=8")


def columns(args: argparse.Namespace) -> Optional[List[str]]:
    """``--columns a,b`` as a list, or None for all columns."""
    text = getattr(args, "columns", None)
    return [c.strip() for c in text.split(",") if c.strip()] if text else None


def excluded(args: argparse.Namespace) -> Optional[List[str]]:
    """``--exclude a,b`` as a list, or None when nothing is left out."""
    text = getattr(args, "exclude", None)
    return [c.strip() for c in text.split(",") if c.strip()] if text else None


def check_columns(args: argparse.Namespace) -> None:
    """--columns chooses the columns and --exclude leaves some out: one of them (before Spark starts)."""
    if getattr(args, "columns", None) and getattr(args, "exclude", None):
        raise UsageError("--columns chooses the columns to hash and --exclude leaves columns out: give one of them")


# The public tamper-evident algorithms (SPEC.md §16.3, §16.7): state lanes, no key.
SECURE = tuple(a.id for a in ALGORITHMS if a.lanes)


def add_digest_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engine", choices=ENGINES, default="auto",
                   help="arrow: dsha.arrow, without Spark or a JVM (local files); spark: an embedded or "
                        "remote Spark; auto (default): arrow for local Parquet, ORC and Arrow files when "
                        "no Spark setting, table or per-file state is asked for, else spark")
    p.add_argument("--secure", action="store_true",
                   help="the tamper-evident public digest dsha-secure-v1 (SPEC.md §16.3; slower)")
    p.add_argument("--secure-algorithm", choices=SECURE, default=None,
                   help="with --secure: the public algorithm (default dsha-secure-v1; dsha-secure-v2, SPEC.md "
                        "§16.7, is about three times faster)")
    p.add_argument("--key-file", metavar="FILE",
                   help="the keyed digest dsha-keyed-v1 (SPEC.md §16.2) under the key in FILE: hex or "
                        "base64 text, or raw bytes (at least 16). Never give a key on the command line")
    p.add_argument("--key-algorithm", choices=KEYED, default=None,
                   help="with --key-file: the keyed algorithm (default dsha-keyed-v1; dsha-keyed-v2, "
                        "SPEC.md §16.6, is faster: 1.4x dsha against 1.8x)")


def validate_digest_options(args: argparse.Namespace) -> None:
    if args.key_algorithm and not args.key_file:
        raise UsageError("--key-algorithm chooses the keyed digest of --key-file: give both")
    if args.secure_algorithm and not args.secure:
        raise UsageError("--secure-algorithm chooses the public digest of --secure: give both")
    if args.secure and args.key_file:
        raise UsageError("--secure and --key-file are two digests: give one")
    if args.key_file:
        _read_key(args.key_file)  # missing, empty or short: said before Spark starts, naming the file


def _read_key(path: str) -> Union[str, bytes]:
    """The key in a --key-file: its text if it is hex or base64, else its bytes. Errors name the file, never the key."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError(f"cannot read the key file {path}: {e.strerror}") from None
    try:
        text: Optional[str] = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    # Key text, also when Unicode spaces surround it (refused then, by name: the jar would not strip them); other
    # content is the key's raw bytes.
    if text is not None and re.fullmatch(r"(?:[0-9a-fA-F]{2})+|[A-Za-z0-9+/_-]+={0,2}", text.strip()):
        try:
            text = checked_key_text(text, f"the key file {path}")
        except ValueError as e:
            raise UsageError(str(e)) from None
        size, form = _decoded_size(path, text)
        if size < 16:
            raise UsageError(f"the key file {path} holds a {form} key of {size} bytes; a key needs at least 16 (32 "
                             "random bytes are recommended)")
        return text
    if len(data) < 16:
        raise UsageError(f"the key file {path} holds {len(data)} bytes; a key needs at least 16 (32 random bytes "
                         "are recommended), as raw bytes, hex or base64")
    return data


def _decoded_size(path: str, text: str) -> Tuple[int, str]:
    """The bytes a hex or base64 key text stands for, and which form it is: hex when it is valid hex (SPEC.md §16.2)."""
    if re.fullmatch(r"(?:[0-9a-fA-F]{2})+", text):
        return len(text) // 2, "hex"
    unpadded = text.rstrip("=").replace("+", "-").replace("/", "_")
    try:
        return len(base64.urlsafe_b64decode(unpadded + "=" * (-len(unpadded) % 4))), "base64"
    except (binascii.Error, ValueError):
        raise UsageError(f"the key file {path} holds text that is neither hex nor base64") from None


def algorithm_args(args: argparse.Namespace) -> Dict[str, Any]:
    """``dsha.fingerprint``'s algorithm/key arguments for --secure / --key-file."""
    if getattr(args, "key_file", None):
        chosen = getattr(args, "key_algorithm", None)
        return {"key": _read_key(args.key_file), **({"algorithm": chosen} if chosen else {})}
    if getattr(args, "secure", False):
        return {"algorithm": getattr(args, "secure_algorithm", None) or "secure"}
    return {}
