"""dsha: logical, order-independent digests of Spark tables.

>>> import dsha
>>> spark = dsha.configure(SparkSession.builder.master("local[*]")).getOrCreate()
>>> dsha.fingerprint(spark.range(10)).digest
'f81b4f5012...'

See the project README and SPEC.md for what the digest means.
"""
from dsha._session import EXTENSION_CLASS, DshaNotLoadedError, configure, ensure_loaded, jar_path, register
from dsha.fingerprint import Comparison, Fingerprint, equal, fingerprint
from dsha.states import StateError, merge, state

__version__ = "0.1.0"
ALGORITHM = "dsha-v1"

__all__ = [
    "ALGORITHM",
    "Comparison",
    "DshaNotLoadedError",
    "EXTENSION_CLASS",
    "Fingerprint",
    "StateError",
    "configure",
    "ensure_loaded",
    "equal",
    "fingerprint",
    "jar_path",
    "merge",
    "register",
    "state",
]
