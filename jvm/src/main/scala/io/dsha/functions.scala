package io.dsha

import org.apache.spark.sql.{functions => F, Column, SparkSession}

import io.dsha.registration.DshaFunctions

/**
 * Dataset API: `df.select(logical_hash(col("a"), col("b")))`, `df.agg(dsha(col("*")))`. The columns call the SQL
 * functions by name, registering them into the active session first when its extensions did not.
 */
object functions {

  def logical_hash(cols: Column*): Column = call("logical_hash", cols)

  def dsha(cols: Column*): Column = call("dsha", cols)

  def dsha_fingerprint(cols: Column*): Column = call("dsha_fingerprint", cols)

  /** Aggregate: the mergeable state of the digest (BINARY, SPEC.md §11). */
  def dsha_state(cols: Column*): Column = call("dsha_state", cols)

  /** Aggregate: the mergeable state of the dsha-secure-v1 digest (SPEC.md §16.3). */
  def dsha_secure_state(cols: Column*): Column = call("dsha_secure_state", cols)

  /** Aggregate: the mergeable state of the dsha-secure-v2 digest (SPEC.md §16.7). */
  def dsha_secure_v2_state(cols: Column*): Column = call("dsha_secure_v2_state", cols)

  /**
   * Aggregate: the keyed digest (dsha-keyed-v1, SPEC.md §16.2) of the columns under `key` (its bytes, at least 16).
   * The key never enters the plan: it is kept for the active session under a random name, which the plan names
   * (`conf:NAME`), as the Python API's `key=` does. A Column built with `lit(key)` instead holds the key in the plan
   * the program made (every `explain` shows it).
   */
  @scala.annotation.varargs
  def dsha_keyed(key: Array[Byte], cols: Column*): Column = keyed("dsha_keyed", key, DefaultKeyed, cols)

  /** The same with a keyed algorithm named by its id: `dsha-keyed-v1` or `dsha-keyed-v2` (SPEC.md §16.6). */
  @scala.annotation.varargs
  def dsha_keyed(key: Array[Byte], algorithm: String, cols: Column*): Column =
    keyed("dsha_keyed", key, algorithm, cols)

  /** Aggregate: the keyed fingerprint struct, its key kept out of the plan as by [[dsha_keyed]]. */
  @scala.annotation.varargs
  def dsha_keyed_fingerprint(key: Array[Byte], algorithm: String, cols: Column*): Column =
    keyed("dsha_keyed_fingerprint", key, algorithm, cols)

  /** Aggregate: the keyed state (BINARY, SPEC.md §11), its key kept out of the plan as by [[dsha_keyed]]. */
  @scala.annotation.varargs
  def dsha_keyed_state(key: Array[Byte], algorithm: String, cols: Column*): Column =
    keyed("dsha_keyed_state", key, algorithm, cols)

  private val DefaultKeyed = io.dsha.algorithm.DshaKeyedV1.Unkeyed.id

  private def keyed(function: String, key: Array[Byte], algorithm: String, cols: Seq[Column]): Column = {
    val withKey = io.dsha.algorithm.KeyedAlgorithm.byId(algorithm, "the keyed algorithm")
      .withKey(io.dsha.util.Secret(key, "the key"))
    keyedCall(SparkSession.active, function, withKey, cols)
  }

  /** A keyed function of a query of `session` whose key (with its algorithm) is kept there, named in the plan. */
  private def keyedCall(
      session: SparkSession,
      function: String,
      algorithm: io.dsha.algorithm.KeyedAlgorithm,
      cols: Seq[Column]
  ): Column = {
    val name = io.dsha.registration.KeyArgument.remember(session, algorithm)
    call(function, F.lit(io.dsha.registration.KeyArgument.ConfPrefix + name) +: cols)
  }

  /** Aggregate: the mergeable state of an algorithm (for the keyed one, under its key, which stays out of the plan). */
  def state_of(algorithm: io.dsha.algorithm.Algorithm, cols: Column*): Column =
    state_in(SparkSession.active, algorithm, cols)

  /** The same for a query of `session`, which alone can name the key (keys are kept per session). */
  private[dsha] def state_in(session: SparkSession, algorithm: io.dsha.algorithm.Algorithm, cols: Seq[Column]): Column =
    algorithm match {
      case io.dsha.algorithm.DshaV1 => dsha_state(cols: _*)
      case io.dsha.algorithm.DshaSecureV1 => dsha_secure_state(cols: _*)
      case io.dsha.algorithm.DshaSecureV2 => dsha_secure_v2_state(cols: _*)
      case k: io.dsha.algorithm.KeyedAlgorithm if k.key.isDefined => keyedCall(session, "dsha_keyed_state", k, cols)
      case other => throw new IllegalArgumentException(s"no state function for ${other.id} without its key")
    }

  /** Aggregate: the merge of dsha states. */
  def dsha_merge(state: Column): Column = call("dsha_merge", Seq(state))

  /** The digest string of a dsha state. */
  def dsha_final(state: Column): Column = call("dsha_final", Seq(state))

  /** The fingerprint struct of a dsha state. */
  def dsha_final_fingerprint(state: Column): Column = call("dsha_final_fingerprint", Seq(state))

  private def call(name: String, cols: Seq[Column]): Column = {
    SparkSession.getActiveSession.foreach { spark =>
      if (!DshaFunctions.isRegistered(spark)) DshaFunctions.register(spark)
    }
    F.call_function(name, cols: _*)
  }
}
