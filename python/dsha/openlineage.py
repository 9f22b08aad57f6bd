"""OpenLineage facets of dsha digests: which version of a dataset a run read or wrote, as the ``dsha`` dataset facet.

    event = dsha.openlineage.attach(event, {"/data/orders": "/data/orders"})   # a RunEvent built by the caller
    client.emit(event)

The facet (``DshaDatasetFacet``, key ``"dsha"`` in a dataset's ``facets``) holds the algorithm, the digest, the row
count, the schema digest, whether the digest is exact (a content digest) or approximate (``dsha-meta-v1``, SPEC.md
§13), and the dsha version. Its JSON schema ships in the package (``DshaDatasetFacet.json``, :func:`facet_schema`)
and is what the facet's ``_schemaURL`` names. ``dsha.airflow``'s operators return these facets to Airflow's
OpenLineage provider (``get_openlineage_facets_on_complete``), so a DAG run with OpenLineage configured emits them.

Datasets are named as OpenLineage names them (its naming conventions): a local path is namespace ``file`` and its
absolute path; ``scheme://host/path`` is namespace ``scheme://host`` and the path (the object key for object
stores); a table ``table:NAME`` is namespace ``table_namespace`` (default ``spark_catalog``: give the one your
lineage backend uses, such as ``hive://host:port``) and ``NAME``. Needs openlineage-python (dsha's extra
``openlineage``). The facet, its schema and the names are defined in ``dsha.core.lineage_facet``, shared with the
events dsha emits by itself when an OpenLineage client is configured (``dsha.core.lineage``: ``dsha.write`` and
a store's ``record``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Tuple, TypeVar, Union

from dsha.errors import MissingDependencyError, UsageError

try:
    import attr
    from openlineage.client.event_v2 import Dataset, InputDataset, OutputDataset, RunEvent

    from dsha.core.lineage_facet import (
        DEFAULT_TABLE_NAMESPACE,
        FACET,
        PRODUCER,
        SCHEMA_FILE,
        SCHEMA_URL,
        DshaDatasetFacet,
        dataset_name,
        facet,
        facet_schema,
        input_name,
        with_facet,
    )
except ImportError as e:
    raise MissingDependencyError(f"dsha.openlineage needs openlineage-python ({e}): pip install openlineage-python "
                                 "(dsha's extra openlineage)", name="openlineage") from None
from dsha.core.fingerprint import Fingerprint, PathFingerprint
from dsha.inputs import Table
from dsha.orchestrators import fingerprint_on
from dsha.store import InputRecord, Record

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["FACET", "PRODUCER", "SCHEMA_FILE", "SCHEMA_URL", "DshaDatasetFacet", "attach", "dataset_name", "facet",
           "facet_schema", "input_dataset", "input_datasets", "output_dataset", "with_facet"]

D = TypeVar("D", bound=Dataset)


def _fingerprint(data: Any, engine: str, spark: Optional[SparkSessionLike]) -> Fingerprint:
    """A fingerprint taken already (``dsha.write``'s, ``fingerprint_path``'s), else that of ``data`` now."""
    if isinstance(data, PathFingerprint):
        return data.fingerprint
    return data if isinstance(data, Fingerprint) else fingerprint_on(data, engine=engine, spark=spark)


def _named(data: Any, name: Optional[str], namespace: Optional[str]) -> Tuple[str, str]:
    if name is not None:
        return namespace or "dsha", name
    source = data if isinstance(data, str) else f"table:{data.name}" if isinstance(data, Table) else getattr(
        data, "path", None)
    if not isinstance(source, str):
        raise UsageError(f"dsha.openlineage: name= is needed for {type(data).__name__} (a dataset is named by its "
                         "path or table)")
    ns, n = dataset_name(source, namespace or DEFAULT_TABLE_NAMESPACE)
    return (namespace or ns), n


def input_dataset(data: Any, *, name: Optional[str] = None, namespace: Optional[str] = None, engine: str = "auto",
                  spark: Optional[SparkSessionLike] = None,
                  fingerprint: Union[Fingerprint, PathFingerprint, None] = None) -> InputDataset:
    """An ``InputDataset`` carrying the ``dsha`` facet of ``data`` (a path, ``dsha.Path``, ``"table:NAME"``, a
    DataFrame, or a ``Fingerprint`` already taken), digested on ``engine`` (as ``dsha.orchestrators``: Arrow for
    local typed files without a session, else Spark); named after its path or table unless ``name=`` is given
    (then in ``namespace``, default ``dsha``). ``fingerprint=`` gives the digest already taken (``dsha.write``
    returns one): ``data`` then only names the dataset and is not read."""
    ns, n = _named(data, name, namespace)
    taken = _fingerprint(data if fingerprint is None else fingerprint, engine, spark)
    return with_facet(InputDataset(namespace=ns, name=n), taken)


def output_dataset(data: Any, *, name: Optional[str] = None, namespace: Optional[str] = None, engine: str = "auto",
                   spark: Optional[SparkSessionLike] = None,
                   fingerprint: Union[Fingerprint, PathFingerprint, None] = None) -> OutputDataset:
    """As :func:`input_dataset`, an ``OutputDataset`` (what a run wrote: digest it after the write, or give
    ``fingerprint=dsha.write(df, path)`` with ``data=path``)."""
    ns, n = _named(data, name, namespace)
    taken = _fingerprint(data if fingerprint is None else fingerprint, engine, spark)
    return with_facet(OutputDataset(namespace=ns, name=n), taken)


def _record_dataset(key: str, record: InputRecord, table_namespace: str) -> InputDataset:
    ns, n = input_name(key, record.kind, record.source, table_namespace)
    return with_facet(InputDataset(namespace=ns, name=n), record.fingerprint)


def input_datasets(record: Record, table_namespace: str = DEFAULT_TABLE_NAMESPACE) -> List[InputDataset]:
    """The inputs of a store's record (what ``dsha.changed`` took, or recorded), each with its ``dsha`` facet; an
    input without a source (a DataFrame) is named by its key, in namespace ``dsha``."""
    return [_record_dataset(k, r, table_namespace) for k, r in sorted(record.inputs.items())]


def attach(event: RunEvent, digests: Mapping[Union[str, Tuple[str, str]], Any], *, engine: str = "auto",
           spark: Optional[SparkSessionLike] = None) -> RunEvent:
    """A copy of ``event`` whose inputs and outputs named in ``digests`` carry the ``dsha`` facet. A key is a
    dataset's name or its ``(namespace, name)``; a value, what to digest (as :func:`input_dataset` takes it) or a
    ``Fingerprint``. A key that names no dataset of the event is an error (a misspelt name would be lost)."""
    datasets = [*(event.inputs or []), *(event.outputs or [])]
    missing = [k for k in digests if not any(k in ((d.namespace, d.name), d.name) for d in datasets)]
    if missing:  # before reading any data
        names = sorted(f"{d.namespace} {d.name}" for d in datasets)
        raise UsageError(f"dsha.openlineage.attach: no input or output of the event is named {missing} "
                         f"(its datasets: {names})")
    taken = {k: _fingerprint(v, engine, spark) for k, v in digests.items()}

    def one(d: D) -> D:
        key = next((k for k in ((d.namespace, d.name), d.name) if k in taken), None)
        return d if key is None else with_facet(d, taken[key])

    return attr.evolve(event, inputs=[one(d) for d in event.inputs or []],
                       outputs=[one(d) for d in event.outputs or []])
