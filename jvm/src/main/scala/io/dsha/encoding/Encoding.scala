package io.dsha.encoding

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.types._

import io.dsha.Algorithm
import io.dsha.shims.SparkShims

/**
 * How a Spark value is laid out in the canonical byte stream (SPEC.md, "Value encoding"), decided once per expression
 * from its input types. `canonicalType` is the type's name in the canonical schema; `sparkType` is the physical type
 * the value is read as (for UDTs, their SQL type).
 */
sealed trait Encoding extends Serializable {
  def sparkType: DataType
  def canonicalType: String
}

object Encoding {

  /** Leaf layouts. Each names the bytes written for a non-null value (the marker is written by the container). */
  sealed trait Kind extends Serializable
  object Kind {
    case object Bool extends Kind // 1 byte: 0 or 1
    case object Int8 extends Kind // 1 byte
    case object Int16 extends Kind // 2 bytes little-endian
    case object Int32 extends Kind // 4 bytes little-endian
    case object Int64 extends Kind // 8 bytes little-endian
    case object Float32 extends Kind // normalised IEEE-754 bits, 4 bytes
    case object Float64 extends Kind // normalised IEEE-754 bits, 8 bytes
    case object Utf8 extends Kind // u32 byte length + bytes
    case object Bytes extends Kind // u32 byte length + bytes
    case object Interval extends Kind // months i32, days i32, microseconds i64
    case object TimestampNanos extends Kind // microseconds i64, nanoseconds within the microsecond i16
    case object Void extends Kind // never non-null
    case object Variant extends Kind // tagged logical value (VariantEncoder)
  }

  final case class Leaf(kind: Kind, sparkType: DataType, canonicalType: String) extends Encoding
  final case class Decimal(precision: Int, scale: Int, sparkType: DataType) extends Encoding {
    def canonicalType: String = s"decimal($precision,$scale)"
    def wide: Boolean = precision > 18
  }
  final case class Array(element: Encoding, sparkType: DataType) extends Encoding {
    def canonicalType: String = s"array<${element.canonicalType}>"
  }
  final case class Map(key: Encoding, value: Encoding, sparkType: DataType) extends Encoding {
    def canonicalType: String = s"map<${key.canonicalType},${value.canonicalType}>"
  }

  /** A struct (or the top-level row): `fields` are in canonical order (by UTF-8 bytes of the name). */
  final case class Struct(fields: IndexedSeq[Field], sparkType: DataType) extends Encoding {
    def canonicalType: String =
      fields.map(f => s"${quoteName(f.name)}:${f.encoding.canonicalType}").mkString("struct<", ",", ">")
  }

  /** `ordinal` is the field's position in the Spark struct (or the argument list), not in canonical order. */
  final case class Field(name: String, ordinal: Int, encoding: Encoding)

  /** A type or a name that the algorithm cannot encode, with the path of the offending column or field. */
  final class Unsupported(val path: String, val reason: String) extends Exception(s"$path: $reason")

  /** Builds the encoding of a row whose columns have these names and types (in argument order). */
  def ofRow(columns: Seq[(String, DataType)]): Struct = {
    val fields = columns.zipWithIndex.map { case ((name, dt), i) => Field(name, i, of(dt, pathName(name))) }
    Struct(canonicalOrder(fields, "the argument list"), StructType(columns.map { case (n, t) => StructField(n, t) }))
  }

  def of(dt: DataType, path: String): Encoding = dt match {
    case BooleanType => Leaf(Kind.Bool, dt, "boolean")
    case ByteType => Leaf(Kind.Int8, dt, "tinyint")
    case ShortType => Leaf(Kind.Int16, dt, "smallint")
    case IntegerType => Leaf(Kind.Int32, dt, "int")
    case LongType => Leaf(Kind.Int64, dt, "bigint")
    case FloatType => Leaf(Kind.Float32, dt, "float")
    case DoubleType => Leaf(Kind.Float64, dt, "double")
    case d: DecimalType => Decimal(d.precision, d.scale, dt)
    // char(n)/varchar(n) are strings with a length rule (values arrive padded): hashed as string.
    case _: CharType | _: VarcharType => Leaf(Kind.Utf8, StringType, "string")
    case s: StringType => Leaf(Kind.Utf8, dt, SparkShims.canonicalStringType(s))
    case BinaryType => Leaf(Kind.Bytes, dt, "binary")
    case DateType => Leaf(Kind.Int32, dt, "date")
    case TimestampType => Leaf(Kind.Int64, dt, "timestamp")
    case TimestampNTZType => Leaf(Kind.Int64, dt, "timestamp_ntz")
    case CalendarIntervalType => Leaf(Kind.Interval, dt, "interval")
    case y: YearMonthIntervalType =>
      Leaf(
        Kind.Int32,
        dt,
        intervalName(YearMonthIntervalType.fieldToString(y.startField), YearMonthIntervalType.fieldToString(y.endField))
      )
    case d: DayTimeIntervalType =>
      Leaf(
        Kind.Int64,
        dt,
        intervalName(DayTimeIntervalType.fieldToString(d.startField), DayTimeIntervalType.fieldToString(d.endField))
      )
    case NullType => Leaf(Kind.Void, dt, "void")
    case a: ArrayType => Array(of(a.elementType, path + "[]"), dt)
    case m: MapType => Map(of(m.keyType, path + ".key"), of(m.valueType, path + ".value"), dt)
    case s: StructType =>
      val fields = s.fields.toIndexedSeq.zipWithIndex.map { case (f, i) =>
        Field(f.name, i, of(f.dataType, s"$path.${pathName(f.name)}"))
      }
      Struct(canonicalOrder(fields, path), dt)
    case u: UserDefinedType[_] => of(u.sqlType, path)
    case other =>
      SparkShims.newerLeaf(other).getOrElse(
        throw new Unsupported(path, s"type ${other.sql} is not supported by ${Algorithm.Name} (see SPEC.md)")
      )
  }

  private def intervalName(start: String, end: String): String =
    if (start == end) s"interval $start" else s"interval $start to $end"

  /** Orders fields by the unsigned bytes of their UTF-8 names and rejects duplicates, which would make it ambiguous. */
  private def canonicalOrder(fields: Seq[Field], where: String): IndexedSeq[Field] = {
    val sorted = fields.sortWith((a, b) => compareUtf8(a.name, b.name) < 0).toIndexedSeq
    sorted.sliding(2).foreach {
      case Seq(a, b) if a.name == b.name =>
        throw new Unsupported(
          pathName(a.name),
          s"duplicate name in $where (positions ${a.ordinal + 1} and ${b.ordinal + 1}); " +
            "names identify fields, so give each a distinct alias"
        )
      case _ =>
    }
    sorted
  }

  def compareUtf8(a: String, b: String): Int = {
    val x = a.getBytes(UTF_8)
    val y = b.getBytes(UTF_8)
    // Unsigned lexicographic byte order (java.util.Arrays.compareUnsigned, which is Java 9+: the 3.5 jars target 8).
    val n = math.min(x.length, y.length)
    var i = 0
    while (i < n && x(i) == y(i)) i += 1
    if (i < n) (x(i) & 0xff) - (y(i) & 0xff) else x.length - y.length
  }

  /** Names in error messages, quoted as Spark quotes identifiers. */
  def pathName(name: String): String = "`" + name.replace("`", "``") + "`"

  /** Names in the canonical schema: double-quoted, with backslash and double quote escaped by a backslash. */
  def quoteName(name: String): String =
    "\"" + name.replace("\\", "\\\\").replace("\"", "\\\"") + "\""
}
