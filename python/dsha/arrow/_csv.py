"""CSV files as Spark reads them with dsha's reader options (SPEC.md Appendix A, "CSV"): a header line, every column
a string, Spark's names for empty and duplicate headers, an empty field (quoted or not) null.

Spark's CSV parser (univocity, with ``\\`` as its escape and no multi-line records) reads unusual quoting in ways no
Arrow reader reproduces (``"a""b"`` is the five characters ``"a""b"``, ``"x" ,`` is ``x``). So before reading a
file the Arrow engine checks that its quoting is plain — every quote opens a field or closes one, no quoted field
holds a backslash or a line break — and refuses the file otherwise, naming it and the byte.
"""
from __future__ import annotations

import csv
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

from dsha.errors import UnsupportedTypeError

_CHUNK = 16 << 20
_QUOTE, _COMMA, _LF, _CR, _BACKSLASH = 34, 44, 10, 13, 92
_UNCLOSED = "a quote that closes a field is not followed by a comma or a line end"
_REFUSED = "the Arrow engine reads CSV quoting only where it is plain; hash this file with --engine spark"


def _refuse(path: str, at: int, what: str) -> UnsupportedTypeError:
    return UnsupportedTypeError(f"CSV file {path}: {what} at byte {at}; {_REFUSED}")


def check_plain_quoting(path: str) -> None:
    """Raises UnsupportedTypeError unless every ``"`` of the file opens a field (first byte of the file or after
    ``,``/line break) or, alternately, closes one (before ``,``/line break/the end), and no quoted field holds a
    ``\\`` or a line break. One pass over the (decompressed) bytes in chunks, vectorised."""
    done, quotes, prev = 0, 0, _LF  # bytes before this chunk, quotes so far, the byte before this chunk
    pending_close = -1  # a closing quote at the very end of the last chunk: its next byte is in this one
    with pa.input_stream(path, compression="detect") as stream:
        while True:
            chunk = np.frombuffer(stream.read(_CHUNK), dtype=np.uint8)
            if pending_close >= 0 and len(chunk) and chunk[0] not in (_COMMA, _LF, _CR):
                raise _refuse(path, pending_close, _UNCLOSED)
            pending_close = -1
            if not len(chunk):
                break
            is_quote = chunk == _QUOTE
            q = np.flatnonzero(is_quote)
            if len(q):
                before = np.where(q > 0, chunk[np.maximum(q - 1, 0)], prev)
                opens = (np.arange(len(q)) + quotes) % 2 == 0
                bad_open = opens & ~np.isin(before, (_COMMA, _LF, _CR))
                nxt = chunk[np.minimum(q + 1, len(chunk) - 1)]
                last = q == len(chunk) - 1
                bad_close = ~opens & ~last & ~np.isin(nxt, (_COMMA, _LF, _CR))
                bad = np.flatnonzero(bad_open | bad_close)
                if len(bad):
                    i = int(bad[0])
                    raise _refuse(path, done + int(q[i]), "a quote inside a field" if opens[i] else _UNCLOSED)
                if last[-1] and not opens[-1]:
                    pending_close = done + int(q[-1])
            inside = (np.cumsum(is_quote) + quotes) % 2 == 1
            special = inside & np.isin(chunk, (_BACKSLASH, _LF, _CR))
            if special.any():
                at = int(np.flatnonzero(special)[0])
                raise _refuse(path, done + at, "a quoted field holds a backslash or a line break")
            quotes += len(q)
            done, prev = done + len(chunk), int(chunk[-1])
    if quotes % 2:
        raise _refuse(path, done, "a quoted field is not closed")


def spark_names(header: Sequence[str]) -> List[str]:
    """Spark's column names for a CSV header (``CSVUtils.makeSafeHeader``, case-insensitive as Spark's default): an
    empty name is ``_c<i>``, a name that occurs twice (ignoring case) gets its index appended."""
    lower = [h.lower() for h in header]
    twice = {h for h in lower if lower.count(h) > 1}
    return [f"_c{i}" if h == "" else f"{h}{i}" if h.lower() in twice else h for i, h in enumerate(header)]


def _header(path: str) -> Optional[List[str]]:
    """The first line's fields (plain quoting checked before), or None for a file without bytes."""
    with pa.input_stream(path, compression="detect") as stream:
        first = b""
        while b"\n" not in first and b"\r" not in first:
            more = stream.read(1 << 16)
            if not more:
                break
            first += more
    if not first:
        return None
    line = first.splitlines()[0].decode("utf-8", "replace")
    if line.strip() == "":
        raise UnsupportedTypeError(f"CSV file {path}: its first line, the header, is empty; {_REFUSED}")
    return next(csv.reader([line]))


def csv_batches(files: Sequence[str], columns: Optional[Sequence[str]], batch_size: int,
                select: Callable[[pa.Schema, Optional[Sequence[str]]], List[str]]
                ) -> Tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """(schema, batches) of CSV files read as Spark reads them; every file must have the same header."""
    import pyarrow.csv as pcsv

    headers = []
    for f in files:
        check_plain_quoting(f)
        h = _header(f)
        if h is not None:
            headers.append((f, h))
    if not headers:
        raise UnsupportedTypeError(f"no CSV file under {files[0] if files else 'the path'} has a header line "
                                   f"(every file is empty), so there are no columns to hash")
    first_file, header = headers[0]
    for f, h in headers[1:]:
        if h != header:
            raise UnsupportedTypeError(f"CSV files {first_file} and {f} have different headers ({header} and {h}): "
                                       f"Spark takes the first file's columns by position; {_REFUSED}")
    names = spark_names(header)
    schema = pa.schema([pa.field(n, pa.string()) for n in names])
    cols = select(schema, columns)
    picked = [names.index(c) for c in cols]
    convert = pcsv.ConvertOptions(column_types={h: pa.string() for h in header}, null_values=[""],
                                  strings_can_be_null=True, quoted_strings_can_be_null=True)
    parse = pcsv.ParseOptions(quote_char='"', double_quote=False, escape_char=False, newlines_in_values=False)
    read = pcsv.ReadOptions(block_size=max(1 << 20, min(batch_size * 64, 64 << 20)))
    selected = pa.schema([schema.field(i) for i in picked])

    def gen() -> Iterator[pa.RecordBatch]:
        for f, _ in headers:
            try:
                reader = pcsv.open_csv(f, read_options=read, parse_options=parse, convert_options=convert)
                for b in reader:
                    yield pa.RecordBatch.from_arrays([b.column(i) for i in picked], schema=selected)
            except pa.ArrowInvalid as e:
                raise UnsupportedTypeError(f"CSV file {f}: {str(e).splitlines()[0]} (Spark pads short rows with "
                                           f"nulls and drops extra fields); {_REFUSED}") from None

    return selected, gen()


__all__ = ["check_plain_quoting", "csv_batches", "spark_names"]
