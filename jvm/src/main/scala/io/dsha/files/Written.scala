package io.dsha.files

import io.dsha.algorithm.{Algorithm, DshaKeyedV1, DshaSecureV1, DshaV1}

/** The algorithms whose per-file states a manifest may hold (SPEC.md §12), by the id users give. */
object Written {

  /**
   * dsha-v1 and dsha-secure-v1. Not dsha-keyed-v1: a manifest does not record which key made its states, so a
   * re-digest under another key would merge states of two keys into a digest of neither.
   */
  def check(algorithm: Algorithm): Unit = if (algorithm.id == DshaKeyedV1.Id) {
    throw new IllegalArgumentException(
      "dsha: per-file states and manifests are kept for dsha-v1 and dsha-secure-v1, not for the keyed digest (a " +
        "manifest cannot say which key made its states): hash the data with dsha.fingerprint(df, key=...)"
    )
  }

  def byId(id: String): Algorithm = id match {
    case null | "" | "dsha-v1" => DshaV1
    case "dsha-secure-v1" => DshaSecureV1
    case other =>
      check(Algorithm.byId(other))
      Algorithm.byId(other)
  }
}
