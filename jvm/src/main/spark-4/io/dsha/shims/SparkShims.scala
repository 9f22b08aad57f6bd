package io.dsha.shims

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry
import org.apache.spark.sql.types.{DataType, StringType, VariantType}
import org.apache.spark.unsafe.types.VariantVal

import io.dsha.encoding.{Encoding, ValueWriter, VariantEncoder}
import io.dsha.encoding.Encoding.{Kind, Leaf}

/** Everything that differs between Spark lines. This is the Spark 4.x version (Scala 2.13). */
object SparkShims {

  /** Collations are part of the type: values are hashed by their exact bytes, the collation goes into the schema. */
  def canonicalStringType(s: StringType): String = s.typeName // "string", or "string collate UTF8_LCASE"

  /** Variant values (Spark 4.0+): written by [[VariantEncoder]], from interpreted and generated code alike. */
  def variantWriter(path: String): ValueWriter = {
    val encoder = new VariantEncoder(path)
    (h, v) => encoder.write(h, v.asInstanceOf[VariantVal])
  }

  def variantEncoderClass: String = classOf[VariantEncoder].getName

  /** Types that only some Spark lines have, matched by name where this jar is compiled against an older line. */
  def newerLeaf(dt: DataType): Option[Encoding] = dt match {
    case VariantType => Some(Leaf(Kind.Variant, dt, "variant"))
    // TIME(p) arrived in Spark 4.1: nanoseconds since midnight in a long.
    case t if t.getClass.getSimpleName == "TimeType" => Some(Leaf(Kind.Int64, dt, t.typeName.toLowerCase))
    // TIMESTAMP_NTZ(p)/TIMESTAMP_LTZ(p) with p > 6 arrived in Spark 4.3 (TimestampNanosVal values).
    case t if t.getClass.getSimpleName.endsWith("NanosType") =>
      Some(Leaf(Kind.TimestampNanos, dt, t.typeName.toLowerCase))
    case _ => None
  }

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
}
