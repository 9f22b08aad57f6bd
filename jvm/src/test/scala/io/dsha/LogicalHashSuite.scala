package io.dsha

import java.nio.ByteOrder.LITTLE_ENDIAN

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression, GenericInternalRow, Literal}
import org.apache.spark.sql.catalyst.expressions.codegen.GenerateUnsafeProjection
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.dsha.algorithm.DshaV1
import io.dsha.expressions.{LogicalHash, RowDigest, RowDigestWord}

/** The expression on its own: eval and generated code on hand-built InternalRows. */
class LogicalHashSuite extends AnyFunSuite {

  private def evalBoth(e: Expression, row: InternalRow): Seq[Byte] = {
    val interpreted = e.eval(row).asInstanceOf[Array[Byte]].toSeq
    val generated = GenerateUnsafeProjection.generate(Seq(e)).apply(row).getBinary(0).toSeq
    assert(interpreted == generated, s"eval and codegen differ for $e")
    interpreted
  }

  private def hashOf(dt: DataType, value: Any): Seq[Byte] =
    evalBoth(LogicalHash(Seq(BoundReference(0, dt, nullable = true)), Seq("v")), new GenericInternalRow(Array(value)))

  test("decimal digests do not depend on Spark's compact or BigDecimal representation") {
    val compact = Decimal(150L, 10, 2)
    val big = new Decimal().set(scala.math.BigDecimal("1.50"), 10, 2)
    assert(hashOf(DecimalType(10, 2), compact) == hashOf(DecimalType(10, 2), big))
    val wideCompact = Decimal(-12345L, 20, 0)
    val wideBig = new Decimal().set(scala.math.BigDecimal("-12345"), 20, 0)
    assert(hashOf(DecimalType(20, 0), wideCompact) == hashOf(DecimalType(20, 0), wideBig))
    assert(hashOf(DecimalType(20, 0), wideCompact) != hashOf(DecimalType(20, 0), Decimal(12345L, 20, 0)))
  }

  test("-0.0 equals 0.0 and every NaN payload is the same NaN, in eval and codegen") {
    val nan2 = java.lang.Double.longBitsToDouble(0x7ff8000000000001L)
    val nan3 = java.lang.Double.longBitsToDouble(0xfff0000000000abcL)
    assert(nan2.isNaN && nan3.isNaN)
    assert(hashOf(DoubleType, -0.0) == hashOf(DoubleType, 0.0))
    assert(hashOf(DoubleType, nan2) == hashOf(DoubleType, Double.NaN))
    assert(hashOf(DoubleType, nan3) == hashOf(DoubleType, Double.NaN))
    val fnan = java.lang.Float.intBitsToFloat(0x7fc00abc)
    assert(hashOf(FloatType, fnan) == hashOf(FloatType, Float.NaN))
    assert(hashOf(FloatType, -0.0f) == hashOf(FloatType, 0.0f))
    assert(hashOf(DoubleType, Double.PositiveInfinity) != hashOf(DoubleType, Double.NegativeInfinity))
  }

  test("null, empty and extreme values are all distinct") {
    val digests = Seq(
      hashOf(LongType, null),
      hashOf(LongType, Long.MinValue),
      hashOf(LongType, Long.MaxValue),
      hashOf(LongType, 0L),
      hashOf(LongType, -1L)
    )
    assert(digests.distinct.size == digests.size)
  }

  test("a type outside the spec is an analysis failure naming the column and the type") {
    val e = LogicalHash(Seq(BoundReference(0, ObjectType(classOf[String]), nullable = true)), Seq("payload"))
    e.checkInputDataTypes() match {
      case TypeCheckResult.TypeCheckFailure(message) =>
        assert(message.contains("`payload`") && message.contains(ObjectType(classOf[String]).sql), message)
      case other => fail(s"expected a failure, got $other")
    }
    val nested = LogicalHash(
      Seq(Literal.create(
        null,
        ArrayType(StructType(Seq(
          StructField("inner", ObjectType(classOf[String]))
        )))
      )),
      Seq("outer")
    )
    nested.checkInputDataTypes() match {
      case TypeCheckResult.TypeCheckFailure(message) => assert(message.contains("`outer`[].`inner`"), message)
      case other => fail(s"expected a failure, got $other")
    }
  }

  test("the aggregates' row digest gives the same digest as logical_hash, as words, interpreted and generated") {
    val row = new GenericInternalRow(Array[Any](7L, UTF8String.fromString("x")))
    val children = Seq(BoundReference(0, LongType, nullable = false), BoundReference(1, StringType, nullable = true))
    val bytes = evalBoth(LogicalHash(children, Seq("v", "s")), row)
    val words = Seq(0, 1).map(i => RowDigestWord(RowDigest(children, Seq("v", "s"), DshaV1), i))
    val expected = Seq(0, 8).map(at => java.nio.ByteBuffer.wrap(bytes.toArray, at, 8).order(LITTLE_ENDIAN).getLong)
    assert(words.map(_.eval(row)) == expected)
    val generated = GenerateUnsafeProjection.generate(words).apply(row)
    assert(Seq(generated.getLong(0), generated.getLong(1)) == expected)
  }
}
