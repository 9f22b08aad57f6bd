"""Inputs -> (Arrow schema, iterator of RecordBatches), streaming with memory bounded by the batch size."""
from __future__ import annotations

import os
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa

from dsha.arrow._csv import csv_batches
from dsha.arrow._int96 import as_instants, check_days, check_exact, checked, dataset_leaves
from dsha.arrow._json import json_batches
from dsha.arrow._types import check_name
from dsha.core.names import name_list, without_excluded
from dsha.core.paths import data_files, detect
from dsha.errors import UsageError, warn

DEFAULT_BATCH_SIZE = 64 * 1024

_EXTENSIONS = {
    ".parquet": "parquet", ".parq": "parquet", ".pq": "parquet",
    ".orc": "orc",
    ".csv": "csv",
    ".json": "json", ".jsonl": "json", ".ndjson": "json",
    ".arrow": "ipc", ".feather": "ipc", ".ipc": "ipc", ".arrows": "ipc",
}
_FORMATS = {"parquet": "parquet", "orc": "orc", "csv": "csv", "json": "json", "ndjson": "json",
            "ipc": "ipc", "arrow": "ipc", "feather": "ipc"}
_IGNORE = ("_", ".")


def _format_of_path(path: str) -> str:
    base = path.lower()
    for suffix in (".gz", ".bz2", ".zst", ".lz4"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    ext = os.path.splitext(base)[1]
    if ext not in _EXTENSIONS:
        raise ValueError(f"cannot tell the file format of {path!r} from its extension; pass format= "
                         f"(one of {sorted(set(_FORMATS))})")
    return _EXTENSIONS[ext]


def _format_of_directory(path: str) -> str:
    """As the Spark engine tells it (``dsha.core.paths.detect``: every data file; sidecars left out, mixed formats
    refused)."""
    for _, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(_IGNORE))
        if any(not f.startswith(_IGNORE) for f in files):
            found = detect(path).format
            if found == "delta":
                raise ValueError(f"{path} is a Delta table: its log decides which files are live, and the Arrow "
                                 f"engine does not read it; use Spark (format='{found}'), or pass format= to read "
                                 f"every file")
            return found
    raise ValueError(f"the directory {path!r} holds no data files (names starting with '_' or '.' are ignored); "
                     f"pass format= to read it as an empty table of a known format")


def _sidecars(path: str, fmt: str) -> List[str]:
    """The files of a directory that ``detect`` leaves out when it reads it as ``fmt`` (relative paths)."""
    try:
        found = detect(path)
    except UsageError:
        return []  # a format given for a mixed directory: every file, as Spark reads it
    return list(found.sidecars) if _FORMATS.get(found.format, found.format) == _FORMATS.get(fmt, fmt) else []


def _dataset_format(fmt: str) -> Any:
    import pyarrow.dataset as ds
    fmt = _FORMATS.get(fmt.lower(), fmt.lower()) if isinstance(fmt, str) else fmt
    if not isinstance(fmt, str):
        return fmt  # a pyarrow.dataset.FileFormat
    if fmt == "json" and not hasattr(ds, "JsonFileFormat"):
        raise ValueError("this pyarrow has no JSON dataset reader (pyarrow >= 14 needed)")
    if fmt not in ("parquet", "orc", "csv", "json", "ipc"):
        raise ValueError(f"unknown format {fmt!r}; one of parquet, orc, csv, json, ipc (arrow/feather)")
    if fmt == "parquet":
        # INT96 timestamps (Spark's default for TIMESTAMP) as microseconds: nanoseconds overflow outside 1677-2262
        return ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(coerce_int96_timestamp_unit="us"))
    if fmt == "csv":
        # As Spark reads CSV: an empty unquoted field is null (for strings too), a quoted "" is the empty string.
        import pyarrow.csv as pcsv
        return ds.CsvFileFormat(convert_options=pcsv.ConvertOptions(strings_can_be_null=True,
                                                                    quoted_strings_can_be_null=False))
    return fmt


def _path_format(p: str, format: Optional[str]) -> Any:
    if not os.path.exists(p):
        raise FileNotFoundError(p)
    if format is None:
        return _format_of_directory(p) if os.path.isdir(p) else _format_of_path(p)
    return format


def _text_source(path: Any, format: Optional[str], partitioning: Optional[str]
                 ) -> Optional[Tuple[str, List[str]]]:
    """("csv" or "json", the files) of a CSV or JSON path (read by :mod:`dsha.arrow._csv` and
    :mod:`dsha.arrow._json`, as Spark reads them), or None for other formats."""
    p = os.fspath(path)
    fmt = _path_format(p, format)
    kind = _FORMATS.get(fmt.lower(), fmt.lower()) if isinstance(fmt, str) else None
    if kind not in ("csv", "json"):
        return None
    if partitioning is not None:
        raise ValueError(f"the Arrow engine reads {kind.upper()} without partitioning= (Spark would infer the "
                         f"partition columns' types); hash a partitioned {kind.upper()} table with Spark")
    if not os.path.isdir(p):
        return kind, [p]
    left_out = set(_sidecars(p, fmt))
    return kind, [os.path.join(p, f) for f in data_files(p) if f not in left_out]


def _text_batches(source: Tuple[str, List[str]], columns: Optional[Sequence[str]], batch_size: int
                  ) -> Tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    kind, files = source
    return (csv_batches if kind == "csv" else json_batches)(files, columns, batch_size, _select)


def open_dataset(path: Any, format: Optional[str] = None, partitioning: Optional[str] = None) -> Any:
    import pyarrow.dataset as ds
    p = os.fspath(path)
    format = _path_format(p, format)
    fmt = _dataset_format(format)
    source: Any = p
    options: Dict[str, Any] = {"ignore_prefixes": list(_IGNORE)}
    skipped = _sidecars(p, format) if os.path.isdir(p) and isinstance(format, str) else []
    if skipped:  # the data files only, partitions still from the folders under p
        left_out = set(skipped)
        source = [os.path.join(p, f) for f in data_files(p) if f not in left_out]
        options = {"partition_base_dir": p}
    dataset = ds.dataset(source, format=fmt, partitioning=partitioning, **options)
    if isinstance(fmt, ds.ParquetFileFormat) and dataset.files:
        import pyarrow.parquet as pq

        schema = as_instants(dataset.schema, pq.ParquetFile(dataset.files[0]).schema)
        if schema is not dataset.schema:
            dataset = ds.dataset(source, format=fmt, partitioning=partitioning, schema=schema, **options)
    return dataset


def _parquet_format() -> Any:
    import pyarrow.dataset as ds

    return ds.ParquetFileFormat


def _parquet_batches(dataset: Any, columns: Optional[Sequence[str]], batch_size: int
                     ) -> Tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """A Parquet dataset's batches, one file after the other, each read as it is consumed (Arrow's dataset scanner
    decodes files ahead of a slower consumer: hundreds of MB for large files). INT96 columns as instants, per file."""
    import pyarrow.parquet as pq

    schema = dataset.schema
    cols = _select(schema, columns)
    selected = pa.schema([schema.field(c) for c in cols])

    def gen() -> Iterator[pa.RecordBatch]:
        for f in dataset.files:
            pf = pq.ParquetFile(f, coerce_int96_timestamp_unit="us")
            target = as_instants(pf.schema_arrow, pf.schema)
            leaves = check_days(f)
            for b in pf.iter_batches(batch_size=batch_size, columns=None if columns is None else cols):
                if target is not pf.schema_arrow:
                    b = pa.RecordBatch.from_arrays([b.column(i).cast(target.field(name).type)
                                                    for i, name in enumerate(b.schema.names)], names=b.schema.names)
                yield check_exact(b, leaves, f) if leaves else b

    return selected, gen()


def column_names(path: Any, format: Optional[str] = None, partitioning: Optional[str] = None) -> List[str]:
    """The top-level column names of the files at ``path``: from their metadata, a CSV file's header, or for JSON
    Spark's inference over every line."""
    source = _text_source(path, format, partitioning)
    if source is not None:
        return list(_text_batches(source, None, DEFAULT_BATCH_SIZE)[0].names)
    return list(open_dataset(path, format=format, partitioning=partitioning).schema.names)


def _combined(small: List[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    if len(small) == 1:
        yield small[0]
        return
    try:
        yield from pa.Table.from_batches(small).combine_chunks().to_batches()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # e.g. dictionaries Arrow cannot unify: as they came
        yield from small


def _rebatch(batches: Iterable[pa.RecordBatch], batch_size: int) -> Iterator[pa.RecordBatch]:
    """Batches of at most ``batch_size`` rows; runs of small ones (under a quarter of it, as Spark's mapInArrow and
    Sail hand them: 8-10K rows) combined into one of about half of it or more. A batch costs the hash a fixed number
    of numpy calls, each holding the GIL between its loops: threads hashing small batches in one process (Sail runs
    every partition's Python in its own) spend their time handing the GIL over (2 threads, lineitem in 8K-row
    batches: 2.2-3.0 s; combined by 8: 1.5 s)."""
    small: List[pa.RecordBatch] = []
    rows = 0
    for b in batches:
        if small and (b.num_rows >= batch_size // 4 or not b.schema.equals(small[0].schema)):
            yield from _combined(small)
            small, rows = [], 0
        if b.num_rows < batch_size // 4:
            small.append(b)
            rows += b.num_rows
            if rows >= batch_size // 2:
                yield from _combined(small)
                small, rows = [], 0
        elif b.num_rows <= batch_size:
            yield b
        else:
            for i in range(0, b.num_rows, batch_size):
                yield b.slice(i, batch_size)
    if small:
        yield from _combined(small)


def _polars_lazy(lf: Any, batch_size: int) -> Any:
    """A polars LazyFrame: streamed with ``collect_batches`` where polars has it, else collected."""
    if not hasattr(lf, "collect_batches"):
        return lf.collect().to_arrow()
    frames = iter(lf.collect_batches(chunk_size=batch_size))
    first = next(frames, None)
    if first is None:
        return lf.collect().to_arrow()
    head = first.to_arrow()

    def batches() -> Iterator[pa.RecordBatch]:
        yield from head.to_batches()
        for f in frames:
            yield from f.to_arrow().to_batches()
    return pa.RecordBatchReader.from_batches(head.schema, batches())


def _has_decimal(t: pa.DataType) -> bool:
    if pa.types.is_decimal(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_decimal(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _has_decimal(t.key_type) or _has_decimal(t.item_type)
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and _has_decimal(t.value_type)


def _from_pandas(df: Any) -> pa.Table:
    """A pandas DataFrame as Arrow converts it (its index is not a column), with a warning for each object column
    of ``decimal.Decimal`` values: Arrow infers their precision and scale from the values (a ``decimal(15,2)`` column
    read with ``to_pandas()`` can come back as ``decimal(4,2)``), so the digest is not the source table's."""
    for name in df.columns:
        if isinstance(name, str):
            check_name(name, name)  # before Arrow, whose error would name no column
    table = pa.Table.from_pandas(df, preserve_index=False)
    guessed = [f"{f.name} ({f.type})" for f, dtype in zip(table.schema, df.dtypes)
               if str(dtype) == "object" and _has_decimal(f.type)]
    if guessed:
        warn([f"pandas holds the column(s) {', '.join(guessed)} as decimal.Decimal objects, whose precision and scale "
              f"Arrow infers from the values, not from the table they came from: pass the Arrow table itself "
              f"(e.g. pyarrow.parquet.read_table(path) rather than its to_pandas()), or convert with "
              f"pyarrow.Table.from_pandas(df, schema=...), for the digest of the declared types"])
    return table


def _module(obj: Any) -> str:
    return type(obj).__module__ or ""


def to_batches(obj: Any, columns: Optional[Sequence[str]] = None, format: Optional[str] = None,
               batch_size: Optional[int] = None, partitioning: Optional[str] = None
               ) -> Tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """(schema of the selected columns, iterator of RecordBatches of those columns)."""
    bs = int(batch_size or DEFAULT_BATCH_SIZE)
    if bs <= 0:
        raise ValueError("batch_size must be positive")
    if isinstance(obj, (str, os.PathLike)):
        source = _text_source(obj, format, partitioning)
        if source is not None:
            return _text_batches(source, columns, bs)
        obj = open_dataset(obj, format=format, partitioning=partitioning)
        if isinstance(obj.format, _parquet_format()) and partitioning is None:
            return _parquet_batches(obj, columns, bs)
    mod = _module(obj)
    if mod.startswith("pandas"):
        obj = _from_pandas(obj)
    elif mod.startswith("polars"):
        if type(obj).__name__ == "LazyFrame":
            obj = _polars_lazy(obj, bs)
        else:
            obj = obj.to_arrow()

    try:
        import pyarrow.dataset as ds
        is_dataset = isinstance(obj, ds.Dataset)
    except ImportError:  # pragma: no cover
        is_dataset = False

    if is_dataset:
        schema = obj.schema
        cols = _select(schema, columns)
        # a small read-ahead keeps memory to a few batches (pyarrow's default reads ahead 16 batches of 4 files)
        kw = dict(batch_size=bs, batch_readahead=2, fragment_readahead=1)
        leaves = dataset_leaves(obj) if isinstance(obj.format, _parquet_format()) else []
        if columns is None:
            return schema, _rebatch(checked(obj.to_batches(**kw), leaves, "a file of the dataset"), bs)
        return (pa.schema([schema.field(c) for c in cols]),
                _rebatch(checked(obj.to_batches(columns=cols, **kw), leaves, "a file of the dataset"), bs))
    if isinstance(obj, pa.RecordBatch):
        obj = pa.Table.from_batches([obj])
    if isinstance(obj, pa.Table):
        cols = _select(obj.schema, columns)
        t = obj if columns is None else obj.select(cols)
        return t.schema, _rebatch(t.to_batches(max_chunksize=bs), bs)
    if isinstance(obj, pa.RecordBatchReader):
        schema = obj.schema
        if columns is None:
            return schema, _rebatch(obj, bs)
        cols = _select(schema, columns)
        idx = [schema.get_field_index(c) for c in cols]
        sel = pa.schema([schema.field(i) for i in idx])

        def gen() -> Iterator[pa.RecordBatch]:
            for b in obj:
                yield pa.RecordBatch.from_arrays([b.column(i) for i in idx], schema=sel)
        return sel, _rebatch(gen(), bs)
    if hasattr(obj, "__arrow_c_stream__") and hasattr(pa.RecordBatchReader, "from_stream"):
        return to_batches(pa.RecordBatchReader.from_stream(obj), columns, batch_size=bs)
    raise TypeError(f"dsha.arrow cannot read a {type(obj).__module__}.{type(obj).__name__}: pass a pyarrow Table, "
                    f"RecordBatch, RecordBatchReader or Dataset, a pandas or polars DataFrame, or a path to "
                    f"Parquet/ORC/CSV/JSON/Arrow IPC files")


def input_names(obj: Any, format: Optional[str] = None, partitioning: Optional[str] = None) -> List[str]:
    """The top-level column names of an input: a path's from its files (:func:`column_names`), anything else's from
    its Arrow schema (no batch read)."""
    if isinstance(obj, (str, os.PathLike)):
        return column_names(obj, format, partitioning)
    return list(to_batches(obj, None)[0].names)


def chosen_columns(obj: Any, columns: Optional[Sequence[str]], exclude: Any, format: Optional[str] = None,
                   partitioning: Optional[str] = None) -> Optional[Sequence[str]]:
    """The columns of ``obj`` to hash: ``columns`` (default all) without those ``exclude`` names (the rule of
    :func:`dsha.core.names.without_excluded`); ``columns`` itself when nothing is excluded."""
    if not name_list(exclude, "exclude"):
        return columns
    if isinstance(columns, str):
        columns = [columns]
    kept = without_excluded(exclude, [("the input", input_names(obj, format, partitioning))], columns)
    assert kept is not None
    return kept[0]


def _select(schema: pa.Schema, columns: Optional[Sequence[str]]) -> List[str]:
    names = list(schema.names)
    if columns is None:
        return names
    if isinstance(columns, str):
        columns = [columns]
    out = []
    for c in columns:
        if not isinstance(c, str):
            raise TypeError(f"columns are names (str), not {type(c).__name__}")
        if names.count(c) == 0:
            raise ValueError(f"unknown column {c!r}; the input has columns {names}")
        if c in out:
            raise ValueError(f"the same column twice: {c!r}")
        out.append(c)
    return out
