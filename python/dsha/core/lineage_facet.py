"""The ``dsha`` dataset facet of OpenLineage (its class, its schema, OpenLineage's names of datasets): what
``dsha.openlineage`` hands to callers and what ``core/lineage`` emits by itself. Imports openlineage-python (dsha's
extra ``openlineage``): nothing imports this module before it is needed (``import dsha`` does not)."""
from __future__ import annotations

import importlib.metadata
import json
import os
from typing import Any, Dict, Optional, Tuple, TypeVar
from urllib.parse import urlsplit

import attr
from openlineage.client.event_v2 import Dataset
from openlineage.client.facet_v2 import DatasetFacet

from dsha.core.algorithms import META_ALGORITHM
from dsha.core.fingerprint import Fingerprint
from dsha.core.paths import local_path

__all__ = ["DEFAULT_TABLE_NAMESPACE", "FACET", "PRODUCER", "SCHEMA_FILE", "SCHEMA_URL", "DshaDatasetFacet",
           "dataset_name", "facet", "facet_schema", "input_name", "with_facet"]


def _version() -> str:
    try:
        return importlib.metadata.version("dsha")
    except importlib.metadata.PackageNotFoundError:  # a source tree without metadata
        return "0+unknown"


VERSION = _version()
FACET = "dsha"
# The facet schema's identifier (its "$id"), versioned as OpenLineage versions its facets; the document is
# SCHEMA_FILE, shipped in the package (and in the repository: python/dsha/DshaDatasetFacet.json).
SCHEMA_URL = "https://dsha.io/spec/openlineage/facets/1-0-0/DshaDatasetFacet.json#/$defs/DshaDatasetFacet"
SCHEMA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "DshaDatasetFacet.json")
PRODUCER = f"https://dsha.io/python/{VERSION}"
DEFAULT_TABLE_NAMESPACE = "spark_catalog"
_OBJECT_STORES = frozenset({"s3", "s3a", "s3n", "gs", "gcs"})

D = TypeVar("D", bound=Dataset)


@attr.define
class DshaDatasetFacet(DatasetFacet):  # type: ignore[misc]  # (the linting environment has no openlineage)
    """The dsha digest of a dataset as a run read or wrote it: equal digests, equal tables (SPEC.md). Its fields
    are camelCase, as OpenLineage's are; :func:`facet` makes one from a fingerprint, produced by dsha."""

    algorithm: str = attr.field(kw_only=True)
    """the algorithm's id, such as ``dsha-v1``"""
    digest: str = attr.field(kw_only=True)
    """the final digest, as ``dsha(*)`` prints it"""
    rowCount: int = attr.field(kw_only=True)
    """the number of rows digested"""
    exact: bool = attr.field(kw_only=True)
    """true for a content digest; false for ``dsha-meta-v1``, an approximation from file or table metadata"""
    schemaDigest: Optional[str] = attr.field(default=None, kw_only=True)
    """SHA-256 of the canonical schema, hex"""
    dshaVersion: str = attr.field(default=VERSION, kw_only=True)
    """the dsha release that computed the digest"""

    @staticmethod
    def _get_schema() -> str:
        return SCHEMA_URL


def facet(fingerprint: Fingerprint) -> DshaDatasetFacet:
    """The facet of a fingerprint (``dsha.fingerprint``, ``dsha.arrow.fingerprint``, a store's record)."""
    # attrs names the base's _producer `producer` in __init__ (the linting environment has no openlineage to show it)
    return DshaDatasetFacet(producer=PRODUCER,  # type: ignore[call-arg]
                            algorithm=fingerprint.algorithm, digest=fingerprint.digest, rowCount=fingerprint.rows,
                            exact=fingerprint.algorithm != META_ALGORITHM,
                            schemaDigest=fingerprint.schema_digest or None)


def facet_schema() -> Dict[str, Any]:
    """The facet's JSON schema (JSON Schema 2020-12; its ``$defs/DshaDatasetFacet`` extends OpenLineage's
    ``DatasetFacet``)."""
    with open(SCHEMA_FILE, encoding="utf-8") as f:
        schema: Dict[str, Any] = json.load(f)
    return schema


def dataset_name(source: str, table_namespace: str = DEFAULT_TABLE_NAMESPACE) -> Tuple[str, str]:
    """OpenLineage's ``(namespace, name)`` of a path or ``"table:NAME"``: a local path is namespace ``file`` and its
    absolute path; ``scheme://host/path`` is namespace ``scheme://host`` and the path (the object key for object
    stores); a table is ``table_namespace`` and its name."""
    if source.startswith("table:"):
        return table_namespace, source[len("table:"):]
    local = local_path(source)
    if local is not None:
        return "file", os.path.abspath(local)
    parts = urlsplit(source)
    path = parts.path.lstrip("/") if parts.scheme in _OBJECT_STORES else (parts.path or "/")
    return f"{parts.scheme}://{parts.netloc}", path


def input_name(key: str, kind: str, source: Optional[str],
               table_namespace: str = DEFAULT_TABLE_NAMESPACE) -> Tuple[str, str]:
    """OpenLineage's ``(namespace, name)`` of a store record's input ``key`` (of ``kind`` "path", "table" or
    "dataframe", read from ``source``): its path or table, or for a DataFrame (no source) ``key`` in namespace
    ``dsha``."""
    if source is None:
        return "dsha", key
    return dataset_name(f"table:{source}" if kind == "table" else source, table_namespace)


def with_facet(dataset: D, fingerprint: Fingerprint) -> D:
    """A copy of ``dataset`` (an ``InputDataset``, ``OutputDataset``, ``Dataset``) with the ``dsha`` facet of
    ``fingerprint`` among its facets (replacing one it had)."""
    evolved: D = attr.evolve(dataset, facets={**(dataset.facets or {}), FACET: facet(fingerprint)})
    return evolved
