package io.dsha.types

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.types._

import io.dsha.shims.SparkShims
import io.dsha.types.CanonicalType._
import io.dsha.util.Bytes

/**
 * The canonical schema of a row (SPEC.md §2): its columns by name, in canonical order, with canonical types; and the
 * schema digest, SHA-256 of its text, which every row digest starts from.
 */
final case class CanonicalSchema(row: StructOf) {
  val text: String = row.name
  val digest: Array[Byte] = Bytes.sha256(text.getBytes(UTF_8))
  def digestHex: String = Bytes.hex(digest)
  def fields: IndexedSeq[Field] = row.fields
}

object CanonicalSchema {

  /** A type or a name that the algorithm cannot encode, with the path of the offending column or field. */
  final class Unsupported(val path: String, val reason: String) extends Exception(s"$path: $reason")

  /** The schema of a row whose columns have these names and types (in argument order). */
  def of(columns: Seq[(String, DataType)], algorithm: String): CanonicalSchema = {
    val fields = columns.zipWithIndex.map { case ((name, dt), i) =>
      val path = pathName(name)
      checkName(name, path)
      Field(name, i, typeOf(dt, path, algorithm))
    }
    CanonicalSchema(
      StructOf(
        canonicalOrder(fields, "the argument list"),
        StructType(columns.map { case (n, t) => StructField(n, t) })
      )
    )
  }

  /** The Spark type -> canonical type mapping (SPEC.md §2.3); a new type is added here and in [[CanonicalType]]. */
  def typeOf(dt: DataType, path: String, algorithm: String): CanonicalType = dt match {
    case BooleanType => Fixed(FixedKind.Bool, "boolean", dt)
    case ByteType => Fixed(FixedKind.Int8, "tinyint", dt)
    case ShortType => Fixed(FixedKind.Int16, "smallint", dt)
    case IntegerType => Fixed(FixedKind.Int32, "int", dt)
    case LongType => Fixed(FixedKind.Int64, "bigint", dt)
    case FloatType => Fixed(FixedKind.Float32, "float", dt)
    case DoubleType => Fixed(FixedKind.Float64, "double", dt)
    case d: DecimalType if d.precision <= Decimal.MAX_LONG_DIGITS =>
      Fixed(FixedKind.Decimal64(d.scale), decimalName(d), dt)
    case d: DecimalType => Composite(CompositeKind.Decimal128(d.scale), decimalName(d), dt)
    // char(n)/varchar(n) are strings with a length rule (values arrive padded): hashed as string.
    case _: CharType | _: VarcharType => LengthPrefixed(BytesKind.Utf8, "string", StringType)
    // Collations are part of the type: values are hashed by their exact bytes, the collation goes into the name.
    case s: StringType => LengthPrefixed(BytesKind.Utf8, SparkShims.stringTypeName(s), dt)
    case BinaryType => LengthPrefixed(BytesKind.Bytes, "binary", dt)
    case DateType => Fixed(FixedKind.Int32, "date", dt)
    case TimestampType => Fixed(FixedKind.Int64, "timestamp", dt)
    case TimestampNTZType => Fixed(FixedKind.Int64, "timestamp_ntz", dt)
    case CalendarIntervalType => Composite(CompositeKind.Interval, "interval", dt)
    case y: YearMonthIntervalType =>
      val (start, end) =
        (YearMonthIntervalType.fieldToString(y.startField), YearMonthIntervalType.fieldToString(y.endField))
      Fixed(FixedKind.Int32, intervalName(start, end), dt)
    case d: DayTimeIntervalType =>
      val (start, end) =
        (DayTimeIntervalType.fieldToString(d.startField), DayTimeIntervalType.fieldToString(d.endField))
      Fixed(FixedKind.Int64, intervalName(start, end), dt)
    case NullType => Void(dt)
    case a: ArrayType => ArrayOf(typeOf(a.elementType, path + "[]", algorithm), dt)
    case m: MapType =>
      MapOf(typeOf(m.keyType, path + ".key", algorithm), typeOf(m.valueType, path + ".value", algorithm), dt)
    case s: StructType =>
      val fields = s.fields.toIndexedSeq.zipWithIndex.map { case (f, i) =>
        val fieldPath = s"$path.${pathName(f.name)}"
        checkName(f.name, fieldPath)
        Field(f.name, i, typeOf(f.dataType, fieldPath, algorithm))
      }
      StructOf(canonicalOrder(fields, path), dt)
    case u: UserDefinedType[_] => typeOf(u.sqlType, path, algorithm)
    // Types of newer Spark lines, recognised by the line's shim.
    case v if SparkShims.isVariant(v) => Variant(v)
    // TIME(p), Spark 4.1+: nanoseconds since midnight in a long.
    case t if SparkShims.isTime(t) => Fixed(FixedKind.Int64, t.typeName.toLowerCase(java.util.Locale.ROOT), t)
    // TIMESTAMP_NTZ(p) / TIMESTAMP_LTZ(p) with p > 6, Spark 4.3+.
    case t if SparkShims.isNanosTimestamp(t) =>
      Composite(CompositeKind.TimestampNanos, t.typeName.toLowerCase(java.util.Locale.ROOT), t)
    case other => throw new Unsupported(path, s"type ${other.sql} is not supported by $algorithm (see SPEC.md)")
  }

  private def decimalName(d: DecimalType): String = s"decimal(${d.precision},${d.scale})"

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

  /** Unsigned lexicographic byte order (java.util.Arrays.compareUnsigned is Java 9+; the 3.5 jars run on Java 8). */
  def compareUtf8(a: String, b: String): Int = {
    val (x, y) = (a.getBytes(UTF_8), b.getBytes(UTF_8))
    val n = math.min(x.length, y.length)
    var i = 0
    while (i < n && x(i) == y(i)) i += 1
    if (i < n) (x(i) & 0xff) - (y(i) & 0xff) else x.length - y.length
  }

  /**
   * Refuses a name holding a lone UTF-16 surrogate (SPEC.md §2.1): it has no UTF-8 encoding, and Java's encoder would
   * write `?` for every one, making names that differ only there (and the name with `?` in their place) one name.
   */
  private def checkName(name: String, path: String): Unit = {
    val at = loneSurrogateAt(name)
    if (at >= 0) {
      throw new Unsupported(
        path,
        f"the name ${escapeSurrogates(name)} is not valid Unicode: it holds a lone UTF-16 surrogate " +
          f"(\\u${name.charAt(at).toInt}%04X at position ${at + 1}), which has no UTF-8 encoding; " +
          "dsha hashes names as UTF-8 and never replaces a character, so rename the column (SPEC.md §2.1)"
      )
    }
  }

  /** Index of the first surrogate that is not half of a high-low pair, or -1. */
  private def loneSurrogateAt(s: String): Int = {
    var i = 0
    while (i < s.length) {
      val c = s.charAt(i)
      if (Character.isHighSurrogate(c) && i + 1 < s.length && Character.isLowSurrogate(s.charAt(i + 1))) i += 2
      else if (Character.isSurrogate(c)) return i
      else i += 1
    }
    -1
  }

  /** The name with each lone surrogate written as \\uXXXX (upper-case hex), for error messages. */
  def escapeSurrogates(s: String): String = {
    val at = loneSurrogateAt(s)
    if (at < 0) s
    else {
      val c = s.charAt(at).toInt
      s.substring(0, at) + f"\\u$c%04X" + escapeSurrogates(s.substring(at + 1))
    }
  }

  /** Names in error messages, quoted as Spark quotes identifiers (lone surrogates escaped, so they can be read). */
  def pathName(name: String): String = "`" + escapeSurrogates(name.replace("`", "``")) + "`"

  /** Names in the canonical schema: double-quoted, with backslash and double quote escaped by a backslash. */
  def quoteName(name: String): String =
    "\"" + name.replace("\\", "\\\\").replace("\"", "\\\"") + "\""
}
