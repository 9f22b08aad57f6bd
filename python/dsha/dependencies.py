"""Optional dependencies, imported on first use: ``import dsha`` needs neither pyspark nor pyarrow.

A module that needs pyspark names it here once, at module level (``from dsha.dependencies import F``); the real
import happens when an attribute is first read, and a missing package is a :class:`MissingDependencyError` that
says what to install. Type checkers see the real modules.
"""
from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import re
from types import ModuleType
from typing import TYPE_CHECKING, Any, Optional

from dsha.errors import MissingDependencyError

__all__ = ["F", "arrow_installed", "install_hint", "installed", "lazy_module", "optional_module", "py4j_protocol",
           "pyspark", "pyspark_sql", "pyspark_types"]

# The extra of dsha's package that brings each top-level package.
_EXTRAS = {"pyspark": "spark", "py4j": "spark", "pyarrow": "arrow", "numpy": "arrow"}
# What an extra brings when the installed package has no metadata to say it (a source tree on sys.path).
_EXTRA_FALLBACK = {"spark": ["pyspark"], "connect": ["pyspark[connect]"], "arrow": ["pyarrow", "numpy"],
                   "client": ["pyspark-client", "pyarrow", "numpy", "cryptography"],
                   "airflow": ["apache-airflow", "pyarrow", "numpy"], "dagster": ["dagster", "pyarrow", "numpy"],
                   "openlineage": ["openlineage-python", "pyarrow", "numpy"]}


def arrow_installed() -> bool:
    """Whether the Arrow engine can run: pyarrow and numpy (its [arrow] extra; pyarrow alone comes with other
    packages, e.g. pyspark's pandas support)."""
    return installed("pyarrow") and installed("numpy")


def install_hint(extra: str) -> str:
    """The pip command that installs what dsha's optional ``extra`` brings: ``pip install "pyarrow>=15" ...``.

    It names the packages themselves, never ``dsha[extra]``: dsha is installed from its own wheel or checkout, and
    pip would look ``dsha`` up on PyPI, where that name is not ours.
    """
    wanted = re.compile(r"""extra\s*==\s*["']""" + re.escape(extra) + r"""["']""")
    try:
        requirements = importlib.metadata.requires("dsha") or []
    except importlib.metadata.PackageNotFoundError:
        requirements = []
    packages = [r.split(";")[0].strip() for r in requirements if ";" in r and wanted.search(r.split(";", 1)[1])]
    packages = packages or _EXTRA_FALLBACK[extra]
    return "pip install " + " ".join(f'"{p}"' if re.search(r"[<>=!~\[ ]", p) else p for p in packages)


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


class _LazyModule(ModuleType):
    """A stand-in for a module, imported on first attribute access."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_dsha_module"] = None

    def _load(self) -> ModuleType:
        module: Optional[ModuleType] = self.__dict__["_dsha_module"]
        if module is None:
            top = self.__name__.split(".")[0]
            try:
                module = importlib.import_module(self.__name__)
            except ModuleNotFoundError as e:
                if e.name is None or e.name.split(".")[0] != top:
                    raise
                extra = _EXTRAS.get(top)
                hint = install_hint(extra) if extra else f"pip install {top}"
                raise MissingDependencyError(f"this dsha function needs {top}, which is not installed: {hint}",
                                             name=top) from None
            self.__dict__["_dsha_module"] = module
        return module

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._load(), attr)

    def __repr__(self) -> str:
        return f"<dsha lazy module {self.__name__!r}>"


def optional_module(name: str) -> Optional[ModuleType]:
    """``name`` imported now, or None when it (or one of its own optional dependencies) cannot be imported."""
    try:
        return importlib.import_module(name)
    except Exception:
        return None


def lazy_module(name: str) -> Any:
    """``name`` imported on first attribute access."""
    return _LazyModule(name)


if TYPE_CHECKING:
    import py4j.protocol as py4j_protocol
    import pyspark
    import pyspark.sql as pyspark_sql
    import pyspark.sql.functions as F
    import pyspark.sql.types as pyspark_types
else:
    pyspark = lazy_module("pyspark")
    pyspark_sql = lazy_module("pyspark.sql")
    pyspark_types = lazy_module("pyspark.sql.types")
    F = lazy_module("pyspark.sql.functions")
    py4j_protocol = lazy_module("py4j.protocol")
