"""Table formats digested from per-file states (Delta Lake, SPEC.md §14; Apache Iceberg, §15), sharing one
incremental engine (``units``): the cover of a version's files by cached units, the state cache file, and the merged
state of a rewrite's files."""
