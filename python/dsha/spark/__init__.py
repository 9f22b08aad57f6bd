"""dsha on Spark: the session and the bundled jar, the Py4J bridge, keys, digests, files and diffs. Nothing here
imports pyspark when it is imported (see ``dsha.dependencies``)."""
