"""A local Spark session with dsha for the reliability suite (classic mode; faults need a real scheduler), and a
Spark standalone cluster fixture (helpers in harness.py).

    python -m pytest tests/reliability -m "not slow"     # the fast part (about 5 minutes on 2 cores)
    python -m pytest tests/reliability -m slow           # standalone-cluster faults, 50M rows in 1 GB
"""
import pytest

import harness


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long tests (standalone-cluster faults, 50M rows), run with "
                                       "`dev/run slow` or `-m slow`")


def pytest_report_header(config):
    return f"dsha reliability: pyspark {harness.pyspark.__version__}, jar {harness.JAR}"


def pytest_sessionstart(session):
    if not harness.JAR.is_file():
        raise pytest.UsageError(f"dsha jar not found at {harness.JAR}: run dev/run build, or set DSHA_JAR")


@pytest.fixture(scope="session")
def spark():
    # local[2,4]: two cores, and a task may fail up to 4 times (needed for the retry tests). The jar and the
    # extension are given directly (not through the dsha package): the suite tests the engine as shipped.
    session = harness.local_session("local[2,4]", **{"spark.driver.memory": "2g"})
    session.sparkContext.setLogLevel("OFF")  # injected failures and expected analysis errors log loudly
    yield session
    session.stop()


@pytest.fixture
def standalone_cluster(tmp_path):
    """Factory: ``cluster = standalone_cluster(workers=2, hosts=None)`` starts a master and workers (separate JVMs,
    free ports, 127.0.0.1). Everything started is killed (process groups) at teardown, pass or fail."""
    clusters = []

    def make(workers=2, hosts=None):
        c = harness.StandaloneCluster(tmp_path / f"cluster{len(clusters)}")
        clusters.append(c)
        return c.start(workers, hosts)

    yield make
    for c in clusters:
        c.stop()
