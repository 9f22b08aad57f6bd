package io.dsha.shims

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry
import org.apache.spark.sql.types.{DataType, StringType}

/**
 * Facts about the Spark 3.5 line (Scala 2.12 and 2.13). A shim answers questions about Spark and makes no encoding
 * decision. Spark 3.5 has no collations, variants, TIME or nanosecond timestamps: those types simply do not occur.
 */
object SparkShims {

  /** Spark 3.5 has one string type. */
  def stringTypeName(s: StringType): String = "string"

  def isVariant(dt: DataType): Boolean = false

  def isTime(dt: DataType): Boolean = false

  def isNanosTimestamp(dt: DataType): Boolean = false

  /** Never called: no variant value exists on this line. */
  def variantAccess: VariantAccess =
    throw new UnsupportedOperationException("the VARIANT type needs Spark 4.0 or newer")

  /** Spark 3.5 names built-in functions by their bare name. */
  def functionIdentifier(name: String): FunctionIdentifier = FunctionIdentifier(name)

  def functionRegistry(spark: SparkSession): FunctionRegistry = spark.sessionState.functionRegistry

  def queryExecution(df: org.apache.spark.sql.DataFrame): org.apache.spark.sql.execution.QueryExecution =
    df.queryExecution
}
