"""The Spark session of a child process (local master, dsha's extension from DSHA_JAR) and what machine it runs on."""
import os
import platform
import sys

from common import ROOT


def spark_session(master, driver_memory, extra_java_options=None):
    from pyspark.sql import SparkSession

    # Python workers (pandas UDF) must use this interpreter, which has pandas and pyarrow.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    jar = os.environ.get("DSHA_JAR") or os.path.join(ROOT, "jvm", "target", "dsha-0.1.0.jar")
    if not os.path.exists(jar):
        raise SystemExit(f"dsha jar not found at {jar}: build it with `dev/run build` (or run via `dev/run bench`)")
    b = (
        SparkSession.builder.master(master)
        .appName("dsha-bench")
        .config("spark.jars", jar)
        .config("spark.sql.extensions", "io.dsha.registration.DshaExtensions")
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    if extra_java_options:
        b = b.config("spark.driver.extraJavaOptions", extra_java_options)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try:
        spark.sql("SELECT dsha(1)").collect()
    except Exception as e:  # the extension failing to load is only a warning in Spark's log
        raise SystemExit(f"dsha functions are not available (jar {jar} not loaded by the extension?): {e}")
    return spark


def machine_info(spark):
    info = {
        "cores": os.cpu_count(),
        "cpu": None,
        "memory_gb": None,
        "os": platform.platform(),
        "python": platform.python_version(),
        "spark": spark.version,
        "java": None,
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    info["memory_gb"] = round(int(line.split()[1]) / 1024 / 1024, 1)
                    break
    except OSError:
        pass
    try:
        jvm = spark.sparkContext._jvm
        sysprop = jvm.java.lang.System.getProperty
        info["java"] = f"{sysprop('java.vendor')} {sysprop('java.runtime.version')} ({sysprop('java.vm.name')})"
    except Exception:
        pass
    return info
