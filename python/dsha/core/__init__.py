"""dsha's core: what needs neither Spark, nor a JVM, nor Arrow — the algorithm table, the state format and its
merge, fingerprints, the dsha-meta-v1 framing, input paths and formats, code versions."""
