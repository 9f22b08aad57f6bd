"""Every "what to install" hint names the packages of dsha's extras as pyproject.toml declares them, never
``dsha[extra]`` (pip would look dsha up on PyPI, where that name is not ours)."""
import pathlib
import re
import tomllib

from dsha.dependencies import install_hint

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXTRAS = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _requirements(command):
    assert command.startswith("pip install ")
    return re.findall(r'"([^"]+)"|(\S+)', command[len("pip install "):])


def _normal(requirement):
    """`pyspark>=3.5,<5` and `pyspark<5,>=3.5` are one requirement."""
    name, spec = re.match(r"([A-Za-z0-9_.\-\[\]]+)(.*)", requirement.replace(" ", "")).groups()
    return name.lower(), tuple(sorted(filter(None, spec.split(","))))


def test_each_extra_installs_what_pyproject_declares():
    for extra, declared in EXTRAS.items():
        named = [q or b for q, b in _requirements(install_hint(extra))]
        assert sorted(map(_normal, named)) == sorted(map(_normal, declared)), extra



def test_no_message_in_the_package_tells_pip_to_install_dsha_by_name():
    offenders = [f"{p.relative_to(ROOT)}:{n}" for p in (ROOT / "python" / "dsha").rglob("*.py")
                 for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"pip install \S*dsha\[", line)]
    assert offenders == []
