package io.dsha.shims

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry
import org.apache.spark.sql.types.{DataType, StringType}

import io.dsha.encoding.{Encoding, ValueWriter}

/** Everything that differs between Spark lines. This is the Spark 3.5 version (Scala 2.12 and 2.13). */
object SparkShims {

  /** Spark 3.5 has one string type, without collations. */
  def canonicalStringType(s: StringType): String = "string"

  private def noVariant: Nothing =
    throw new UnsupportedOperationException("the variant type needs Spark 4.0 or newer")

  /** Spark 3.5 has no variant type: no value ever reaches these. */
  def variantWriter(path: String): ValueWriter = noVariant

  def variantEncoderClass: String = noVariant

  /** The types Spark 4.x added (variant, TIME, nanosecond timestamps) do not exist in Spark 3.5. */
  def newerLeaf(dt: DataType): Option[Encoding] = None

  /** Spark 3.5 names built-in functions by their bare name. */
  def functionIdentifier(name: String): FunctionIdentifier = FunctionIdentifier(name)

  def functionRegistry(spark: SparkSession): FunctionRegistry = spark.sessionState.functionRegistry
}
