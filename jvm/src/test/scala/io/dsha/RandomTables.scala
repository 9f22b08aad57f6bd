package io.dsha

import java.sql.{Date, Timestamp}

import scala.util.Random

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

/** Random schemas (nested structs, arrays, maps) and random rows with nulls, reproducible from a seed. */
class RandomTables(seed: Long) {
  val random = new Random(seed)

  private val leaves: IndexedSeq[DataType] = IndexedSeq(
    BooleanType,
    ByteType,
    IntegerType,
    LongType,
    FloatType,
    DoubleType,
    StringType,
    BinaryType,
    DecimalType(10, 2),
    DecimalType(38, 10),
    DateType,
    TimestampType
  )

  def dataType(depth: Int): DataType = if (depth <= 0 || random.nextInt(3) > 0) {
    leaves(random.nextInt(leaves.size))
  } else {
    random.nextInt(3) match {
      case 0 => ArrayType(dataType(depth - 1), containsNull = true)
      case 1 => MapType(Seq(IntegerType, StringType, LongType)(random.nextInt(3)), dataType(depth - 1))
      case _ => structType(1 + random.nextInt(3), depth - 1)
    }
  }

  def structType(fields: Int, depth: Int): StructType =
    StructType(random.shuffle((0 until fields).map(i => s"f${i}_${random.alphanumeric.take(3).mkString}"))
      .map(name => StructField(name, dataType(depth))))

  def value(dt: DataType, nullable: Boolean = true): Any =
    if (nullable && random.nextInt(8) == 0) null
    else dt match {
      case BooleanType => random.nextBoolean()
      case ByteType => random.nextInt(256).toByte
      case IntegerType => if (random.nextBoolean()) random.nextInt(10) else random.nextInt()
      case LongType => random.nextLong()
      case FloatType => Seq(Float.NaN, -0.0f, random.nextFloat())(random.nextInt(3))
      case DoubleType => Seq(Double.NaN, -0.0, Double.PositiveInfinity, random.nextGaussian())(random.nextInt(4))
      case StringType => random.alphanumeric.take(random.nextInt(6)).mkString
      case BinaryType => Array.fill(random.nextInt(5))(random.nextInt(256).toByte)
      case d: DecimalType =>
        new java.math.BigDecimal(new java.math.BigInteger(d.precision * 3, random.self), d.scale)
          .remainder(java.math.BigDecimal.TEN.pow(d.precision - d.scale))
      case DateType => Date.valueOf(java.time.LocalDate.ofEpochDay(random.nextInt(40000) - 10000L))
      case TimestampType => new Timestamp(random.nextLong() % 4000000000000L)
      case ArrayType(e, _) => Seq.fill(random.nextInt(4))(value(e))
      case MapType(k, v, _) => Seq.fill(random.nextInt(4))(value(k, nullable = false) -> value(v)).toMap
      case s: StructType => Row.fromSeq(s.fields.map(f => value(f.dataType)).toSeq)
    }

  def rows(schema: StructType, n: Int): Seq[Row] = Seq.fill(n)(value(schema, nullable = false).asInstanceOf[Row])
}
