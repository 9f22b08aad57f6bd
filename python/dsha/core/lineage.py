"""OpenLineage events that dsha emits by itself, when (and only when) an OpenLineage client is configured the way
openlineage-python reads its configuration: ``OPENLINEAGE_URL``, ``OPENLINEAGE__TRANSPORT__*`` variables, the file
``OPENLINEAGE_CONFIG`` names, ``openlineage.yml`` in the working directory or in ``~/.openlineage`` — and its
transport has a type (a configuration without one would print to the console, which is not asked for); never with
``OPENLINEAGE_DISABLED=true``.

- ``dsha.write(df, path)``: a COMPLETE event of job ``dsha.write`` whose output is the written path with the ``dsha``
  facet of the fingerprint it took while writing (nothing is read again);
- ``Changes.record()`` (``dsha.record``, ``run_if_changed``, ``skip_if_unchanged``, ``dsha record``): a COMPLETE
  event of the recorded step (job name = the record's name) whose inputs carry the ``dsha`` facets of the recorded
  fingerprints.

Jobs are in the namespace ``OPENLINEAGE_NAMESPACE`` names (OpenLineage's own variable), else ``dsha``. An emission
that fails (openlineage-python missing, a transport that cannot send) never changes a result: a ``DshaWarning``
says so, once per process. The check without a configuration reads a few variables and files, and imports nothing.
"""
from __future__ import annotations

import datetime
import os
import warnings
from typing import Any, Callable, List, Mapping, Optional, Tuple

from dsha.core.fingerprint import Fingerprint
from dsha.dependencies import install_hint
from dsha.errors import DshaWarning

__all__ = ["configured", "emit_recorded", "emit_written"]

_warned: List[str] = []


def configured() -> bool:
    """Whether openlineage-python would find a configuration (without importing it; see the module)."""
    if os.environ.get("OPENLINEAGE_DISABLED", "").strip().lower() == "true":
        return False
    if os.environ.get("OPENLINEAGE_URL") or any(k.startswith("OPENLINEAGE__") for k in os.environ):
        return True
    files = [os.environ.get("OPENLINEAGE_CONFIG"), os.path.join(os.getcwd(), "openlineage.yml"),
             os.path.join(os.path.expanduser("~"), ".openlineage", "openlineage.yml")]
    return any(f and os.path.isfile(f) for f in files)


def emit_written(fingerprint: Optional[Fingerprint], path: str) -> None:
    """The event of ``dsha.write``: its output, ``path``, with the facet of ``fingerprint`` (see the module)."""
    if fingerprint is None or not configured():
        return

    def event(ol: Any, facets: Any) -> Any:
        output = facets.with_facet(ol.OutputDataset(*facets.dataset_name(path)), fingerprint)
        return _event(ol, facets, "dsha.write", outputs=[output])

    _emit(f"dsha.write to {path}", event)


def emit_recorded(name: str, inputs: Mapping[str, Tuple[str, Optional[str], Fingerprint]]) -> None:
    """The event of a recorded step ``name``: its inputs (input name -> kind, source, fingerprint) with their
    facets; an input without a source (a DataFrame) is named by its input name in namespace ``dsha``."""
    if not configured():
        return

    def event(ol: Any, facets: Any) -> Any:
        datasets = []
        for key, (kind, source, fingerprint) in sorted(inputs.items()):
            datasets.append(facets.with_facet(ol.InputDataset(*facets.input_name(key, kind, source)), fingerprint))
        return _event(ol, facets, name, inputs=datasets)

    _emit(f"the record of {name}", event)


def _event(ol: Any, facets: Any, job: str, **datasets: Any) -> Any:
    from openlineage.client.uuid import generate_new_uuid

    return ol.RunEvent(eventType=ol.RunState.COMPLETE,
                       eventTime=datetime.datetime.now(datetime.timezone.utc).isoformat(),
                       run=ol.Run(runId=str(generate_new_uuid())),
                       job=ol.Job(namespace=os.environ.get("OPENLINEAGE_NAMESPACE") or "dsha", name=job),
                       producer=facets.PRODUCER, **datasets)


def _emit(what: str, build: Callable[[Any, Any], Any]) -> None:
    """Builds and emits an event; a failure is a warning (once per process), never an error."""
    try:
        from openlineage.client import OpenLineageClient
        from openlineage.client import event_v2 as ol

        from dsha.core import lineage_facet as facets

        client = OpenLineageClient()
        if not (os.environ.get("OPENLINEAGE_URL") or (client.config.transport or {}).get("type")):
            return  # a configuration without a transport: openlineage-python would print to the console
        client.emit(build(ol, facets))
    except Exception as e:  # an emission never changes the result
        hint = f"; {install_hint('openlineage')}" if isinstance(e, ImportError) else ""
        if not _warned:
            _warned.append(what)
            warnings.warn(f"dsha could not emit the OpenLineage event of {what} ({type(e).__name__}: {e}{hint}); the "
                          "result is not affected (this warning is shown once)", DshaWarning, stacklevel=3)
