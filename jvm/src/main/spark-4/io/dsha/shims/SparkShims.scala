package io.dsha.shims

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry
import org.apache.spark.sql.catalyst.util.CollationFactory
import org.apache.spark.sql.types.{DataType, StringType, VariantType}

/**
 * Facts about the Spark 4.x line (Scala 2.13; one jar for 4.0-4.3). A shim answers questions about Spark and makes no
 * encoding decision; it depends on Spark and on the [[VariantAccess]] contract only.
 */
object SparkShims {

  /**
   * Spark's SQL name of a string type: "string" for Spark's default collation, however it was written (Spark 4.1+
   * names an explicit `COLLATE UTF8_BINARY`, and a string Spark Connect reads back from a Python function, "string
   * collate UTF8_BINARY"), or "string collate UTF8_LCASE" for another collation.
   */
  def stringTypeName(s: StringType): String =
    if (s.collationId == CollationFactory.UTF8_BINARY_COLLATION_ID) "string" else s.typeName

  def isVariant(dt: DataType): Boolean = dt == VariantType

  /** TIME(p), Spark 4.1+ (matched by name: this jar is compiled against 4.0). */
  def isTime(dt: DataType): Boolean = dt.getClass.getSimpleName == "TimeType"

  /** TIMESTAMP_NTZ(p) / TIMESTAMP_LTZ(p) with p > 6, Spark 4.3+ (matched by name). */
  def isNanosTimestamp(dt: DataType): Boolean = dt.getClass.getSimpleName.endsWith("NanosType")

  def variantAccess: VariantAccess = SparkVariantAccess

  /**
   * How a built-in function is named in the registry: Spark 4.3 requires a fully qualified identifier
   * (FunctionRegistry.builtinFunctionIdentifier, absent before), earlier 4.x lines the bare name.
   */
  def functionIdentifier(name: String): FunctionIdentifier =
    builtinIdentifier.fold(FunctionIdentifier(name))(m =>
      m.invoke(FunctionRegistry, name).asInstanceOf[FunctionIdentifier]
    )

  private lazy val builtinIdentifier: Option[java.lang.reflect.Method] =
    FunctionRegistry.getClass.getMethods.find(m =>
      m.getName == "builtinFunctionIdentifier" &&
        m.getParameterTypes.sameElements(Array(classOf[String]))
    )

  def functionRegistry(spark: SparkSession): FunctionRegistry =
    spark.asInstanceOf[org.apache.spark.sql.classic.SparkSession].sessionState.functionRegistry

  /** The query execution of a DataFrame (a classic Dataset on 4.x; Spark Connect's have none). */
  def queryExecution(df: org.apache.spark.sql.DataFrame): org.apache.spark.sql.execution.QueryExecution =
    df match {
      case d: org.apache.spark.sql.classic.Dataset[_] => d.queryExecution
      case other =>
        throw new UnsupportedOperationException(
          s"dsha needs a classic Spark DataFrame here, not ${other.getClass.getName}"
        )
    }
}
