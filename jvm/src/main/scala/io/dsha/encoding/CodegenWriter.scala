package io.dsha.encoding

import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, CodeGenerator}

import io.dsha.encoding.Encoding.Kind
import io.dsha.hash.Murmur3x64Stream
import io.dsha.shims.SparkShims

/**
 * Generates Java that writes the canonical encoding of a non-null value into a hash stream: the code-generated twin of
 * [[ValueWriter]], calling the same [[Canonical]] helpers. Streams for map entries are class fields, so that wide
 * structs can be split into methods that only need the struct passed in.
 */
object CodegenWriter {
  private val StreamClass = classOf[Murmur3x64Stream].getName
  private val CanonicalClass = classOf[Canonical].getName

  /** Structs with more fields than this are written by split methods (Janino's 64 KB method limit). */
  private val InlineStructFields = 32

  def write(ctx: CodegenContext, encoding: Encoding, value: String, h: String, path: String): String =
    fixedWidth(encoding, value) match {
      case Some((width, bits)) => s"$h.put$width($bits);"
      case None =>
        encoding match {
          case Encoding.Leaf(kind, _, _) => leaf(ctx, kind, value, h, path)
          case d: Encoding.Decimal => s"$CanonicalClass.putDecimal128($h, $value, ${d.scale});"
          case a: Encoding.Array => array(ctx, a, value, h, path)
          case m: Encoding.Map => map(ctx, m, value, h, path)
          case s: Encoding.Struct => struct(ctx, s, value, h, path)
        }
    }

  /**
   * Encodings of 1, 2, 4 or 8 bytes, as the stream method's width (`put<Width>`, `putByteAnd<Width>`) and the Java
   * expression of those bytes.
   */
  private def fixedWidth(encoding: Encoding, v: String): Option[(String, String)] = encoding match {
    case Encoding.Leaf(Kind.Bool, _, _) => Some("Byte" -> s"($v ? 1 : 0)")
    case Encoding.Leaf(Kind.Int8, _, _) => Some("Byte" -> v)
    case Encoding.Leaf(Kind.Int16, _, _) => Some("Short" -> v)
    case Encoding.Leaf(Kind.Int32, _, _) => Some("Int" -> v)
    case Encoding.Leaf(Kind.Int64, _, _) => Some("Long" -> v)
    case Encoding.Leaf(Kind.Float32, _, _) => Some("Int" -> s"$CanonicalClass.floatBits($v)")
    case Encoding.Leaf(Kind.Float64, _, _) => Some("Long" -> s"$CanonicalClass.doubleBits($v)")
    case d: Encoding.Decimal if !d.wide => Some("Long" -> s"$CanonicalClass.unscaledLong($v, ${d.scale})")
    case _ => None
  }

  /** Marker byte, then the value when present. */
  def writeNullable(
      ctx: CodegenContext,
      encoding: Encoding,
      isNull: String,
      value: String,
      h: String,
      path: String
  ): String =
    s"""if ($isNull) {
       |  $h.putByte(${Canonical.NULL_MARKER});
       |} else {
       |  ${writeMarked(ctx, encoding, value, h, path)}
       |}""".stripMargin

  /** The value marker, then the value: one stream call for fixed-width values, and with a string's length. */
  private def writeMarked(ctx: CodegenContext, encoding: Encoding, v: String, h: String, path: String): String = {
    val m = Canonical.VALUE_MARKER
    (encoding, fixedWidth(encoding, v)) match {
      case (_, Some((width, bits))) => s"$h.putByteAnd$width($m, $bits);"
      case (Encoding.Leaf(Kind.Utf8, _, _), None) => s"$CanonicalClass.putMarkedString($h, $v);"
      case _ => s"$h.putByte($m);\n${write(ctx, encoding, v, h, path)}"
    }
  }

  /** Leaves of variable or composite width (the fixed-width ones are in [[fixedWidth]]). */
  private def leaf(ctx: CodegenContext, kind: Kind, v: String, h: String, path: String): String = kind match {
    case Kind.Utf8 => s"$CanonicalClass.putString($h, $v);"
    case Kind.Bytes => s"$CanonicalClass.putBinary($h, $v);"
    case Kind.Interval => s"$CanonicalClass.putInterval($h, $v);"
    case Kind.TimestampNanos => s"$CanonicalClass.putTimestampNanos($h, $v);"
    case Kind.Void => ""
    case Kind.Variant =>
      val pathRef = ctx.addReferenceObj("dshaPath", path)
      val variantClass = SparkShims.variantEncoderClass
      val encoder = ctx.addMutableState(variantClass, "dshaVariant", x => s"$x = new $variantClass($pathRef);")
      s"$encoder.write($h, $v);"
    case fixed => throw new IllegalStateException(s"$fixed is written by fixedWidth")
  }

  private def array(ctx: CodegenContext, a: Encoding.Array, v: String, h: String, path: String): String = {
    val n = ctx.freshName("n")
    val i = ctx.freshName("i")
    val element = CodeGenerator.getValue(v, a.element.sparkType, i)
    s"""int $n = $v.numElements();
       |$h.putInt($n);
       |for (int $i = 0; $i < $n; $i++) {
       |  ${writeNullable(ctx, a.element, s"$v.isNullAt($i)", element, h, path + "[]")}
       |}""".stripMargin
  }

  private def map(ctx: CodegenContext, m: Encoding.Map, v: String, h: String, path: String): String = {
    val entry = ctx.addMutableState(StreamClass, "dshaEntry", x => s"$x = new $StreamClass();")
    val keys = ctx.freshName("keys")
    val values = ctx.freshName("values")
    val n = ctx.freshName("n")
    val i = ctx.freshName("i")
    val low = ctx.freshName("low")
    val high = ctx.freshName("high")
    val sum = ctx.freshName("sum")
    val key = CodeGenerator.getValue(keys, m.key.sparkType, i)
    val value = CodeGenerator.getValue(values, m.value.sparkType, i)
    s"""org.apache.spark.sql.catalyst.util.ArrayData $keys = $v.keyArray();
       |org.apache.spark.sql.catalyst.util.ArrayData $values = $v.valueArray();
       |int $n = $v.numElements();
       |long $low = 0L;
       |long $high = 0L;
       |for (int $i = 0; $i < $n; $i++) {
       |  $entry.reset();
       |  ${writeNullable(ctx, m.key, s"$keys.isNullAt($i)", key, entry, path + ".key")}
       |  ${writeNullable(ctx, m.value, s"$values.isNullAt($i)", value, entry, path + ".value")}
       |  $entry.finish();
       |  long $sum = $low + $entry.digestLow();
       |  $high += $entry.digestHigh() + (Long.compareUnsigned($sum, $low) < 0 ? 1L : 0L);
       |  $low = $sum;
       |}
       |$h.putInt($n);
       |$h.putLong($low);
       |$h.putLong($high);""".stripMargin
  }

  private def struct(ctx: CodegenContext, s: Encoding.Struct, v: String, h: String, path: String): String = {
    val row = ctx.freshName("struct")
    val fields = s.fields.map { f =>
      val value = CodeGenerator.getValue(row, f.encoding.sparkType, f.ordinal.toString)
      writeNullable(ctx, f.encoding, s"$row.isNullAt(${f.ordinal})", value, h, s"$path.${f.name}")
    }
    if (fields.size <= InlineStructFields) {
      s"InternalRow $row = $v;\n" + fields.mkString("\n")
    } else {
      s"InternalRow $row = $v;\n" + ctx.splitExpressions(fields, "dshaStructFields", Seq("InternalRow" -> row))
    }
  }
}
