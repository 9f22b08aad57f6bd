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
