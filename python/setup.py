"""Packaging hook: the wheel must carry the extension jars, and the version comes from build.sbt (its one source).

From the repository, the version is build.sbt's ``ThisBuild / version``; from an sdist (no build.sbt beside it), the
version in the names of the bundled jars (``dsha-spark<line>_<scala>-<version>.jar``), which sbt named from build.sbt.
"""
import atexit
import glob
import os
import re
import shutil
import tempfile

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
JARS = sorted(glob.glob(os.path.join(HERE, "dsha", "jars", "dsha-spark*.jar")))
if not JARS:
    raise SystemExit(
        "dsha: python/dsha/jars/dsha-spark*.jar is missing. Build the jars first with `dev/run build` "
        "(it runs sbt package for every Spark line and copies the jars into the Python package)."
    )


def version() -> str:
    build_sbt = os.path.join(HERE, "..", "build.sbt")
    if os.path.isfile(build_sbt):
        with open(build_sbt, encoding="utf-8") as f:
            m = re.search(r'^ThisBuild / version := "([^"]+)"', f.read(), re.M)
        if not m:
            raise SystemExit(f"dsha: no `ThisBuild / version := \"...\"` line in {build_sbt}")
        found = {m.group(1)}
    else:
        found = {re.match(r"dsha-spark[^_]+_[^-]+-(.+)\.jar$", os.path.basename(j)).group(1) for j in JARS}
    stale = [j for j in JARS if not any(j.endswith(f"-{v}.jar") for v in found)]
    if len(found) != 1 or stale:
        raise SystemExit(f"dsha: the bundled jars do not all carry version {sorted(found)}: "
                         f"{[os.path.basename(j) for j in JARS]}; rebuild them with `dev/run build`")
    return found.pop()


# setuptools' intermediate files (build/, dsha.egg-info) go to a temporary directory of this run, removed when it
# ends, not into the source tree: a read-only checkout installs, and a checkout is left as it was (issue 30).
_SCRATCH = tempfile.mkdtemp(prefix="dsha-build-")
atexit.register(shutil.rmtree, _SCRATCH, True)
setup(version=version(), options={"build": {"build_base": os.path.join(_SCRATCH, "build")},
                                  "egg_info": {"egg_base": _SCRATCH}})
