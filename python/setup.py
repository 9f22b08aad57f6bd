"""Packaging hook: the wheel must carry the extension jar, so building without it fails loudly."""
import glob
import os

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
if not glob.glob(os.path.join(HERE, "dsha", "jars", "dsha-*.jar")):
    raise SystemExit(
        "dsha: python/dsha/jars/dsha-*.jar is missing. Build it first with `dev/run build` "
        "(it runs sbt package and copies the jar into the Python package)."
    )
setup()
