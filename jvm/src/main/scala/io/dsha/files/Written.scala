package io.dsha.files

import org.apache.spark.sql.SparkSession

import io.dsha.algorithm.{Algorithm, DshaV1, KeyedAlgorithm}
import io.dsha.registration.KeyArgument

/**
 * The algorithm of per-file states (`dsha.write`, re-digests) from what users give: an id, and for the keyed digest
 * a key argument (`conf:NAME`, hex or base64, as SQL takes it). A keyed manifest records the key's `key_id` (SPEC.md
 * §12.1), so that states are never reused under another key.
 */
object Written {

  def byId(session: SparkSession, id: String, key: String): Algorithm = id match {
    case null | "" | "dsha-v1" => DshaV1
    case keyed if KeyedAlgorithm.unkeyed.exists(_.id == keyed) =>
      if (key == null) throw new IllegalArgumentException(s"dsha: the keyed digest $keyed needs a key")
      KeyedAlgorithm.byId(keyed, "the algorithm").withKey(KeyArgument.fromText(session, "the key", key))
    case other => Algorithm.byId(other)
  }
}
