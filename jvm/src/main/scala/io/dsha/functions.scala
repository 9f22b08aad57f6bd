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

  /** Aggregate: the mergeable state of an algorithm (for the keyed one, under its key, which stays out of the plan). */
  def state_of(algorithm: io.dsha.algorithm.Algorithm, cols: Column*): Column =
    state_in(SparkSession.active, algorithm, cols)

  /** The same for a query of `session`, which alone can name the key (keys are kept per session). */
  private[dsha] def state_in(session: SparkSession, algorithm: io.dsha.algorithm.Algorithm, cols: Seq[Column]): Column =
    algorithm match {
      case io.dsha.algorithm.DshaV1 => dsha_state(cols: _*)
      case io.dsha.algorithm.DshaSecureV1 => dsha_secure_state(cols: _*)
      case io.dsha.algorithm.DshaSecureV2 => dsha_secure_v2_state(cols: _*)
      case k: io.dsha.algorithm.KeyedAlgorithm if k.key.isDefined =>
        val name = io.dsha.registration.KeyArgument.remember(session, k)
        call("dsha_keyed_state", F.lit(io.dsha.registration.KeyArgument.ConfPrefix + name) +: cols)
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
