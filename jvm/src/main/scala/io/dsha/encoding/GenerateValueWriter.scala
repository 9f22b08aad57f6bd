package io.dsha.encoding

import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, CodeGenerator}

import io.dsha.algorithm.Algorithm
import io.dsha.types.CanonicalType
import io.dsha.types.CanonicalType._

/**
 * Generates Java that writes the canonical encoding of a non-null value into a byte sink: the generated twin of
 * [[InterpretedValueWriter]], derived from the same table ([[CanonicalType]]). `h` is a variable of the algorithm's
 * concrete sink class, so every call on it is monomorphic. Entry sets are class fields, so that wide structs can be
 * split into methods that only need the struct passed in.
 */
final class GenerateValueWriter(ctx: CodegenContext, algorithm: Algorithm) {
  private val EntrySetClass = algorithm.entrySetClass.getName
  // The concrete sink an entry set hands out (its begin() narrows the return type).
  private val EntrySinkClass = algorithm.entrySetClass.getMethod("begin").getReturnType.getName

  /** Structs with more fields than this are written by split methods (Janino's 64 KB method limit). */
  private val InlineStructFields = 32

  /** Marker byte, then the value when present. */
  def writeNullable(t: CanonicalType, isNull: String, value: String, h: String, path: String): String =
    s"""if ($isNull) {
       |  $h.putByte(${Canonical.NULL_MARKER});
       |} else {
       |  ${writeMarked(t, value, h, path)}
       |}""".stripMargin

  /** The value marker, then the value: one sink call for fixed-width values, and with a string's length. */
  private def writeMarked(t: CanonicalType, v: String, h: String, path: String): String = {
    val m = Canonical.VALUE_MARKER
    t match {
      case Fixed(kind, _, _) => s"$h.putByteAnd${kind.width.method}($m, ${kind.bitsCode(v)});"
      case LengthPrefixed(BytesKind.Utf8, _, _) => s"${classOf[Canonical].getName}.putMarkedString($h, $v);"
      case _: LengthPrefixed | _: Composite | _: Void | _: Variant | _: ArrayOf | _: MapOf | _: StructOf =>
        s"$h.putByte($m);\n${write(t, v, h, path)}"
    }
  }

  def write(t: CanonicalType, v: String, h: String, path: String): String = t match {
    case Fixed(kind, _, _) => s"$h.put${kind.width.method}(${kind.bitsCode(v)});"
    case LengthPrefixed(kind, _, _) => kind.writeCode(h, v)
    case Composite(kind, _, _) => kind.writeCode(h, v)
    case Void(_) => ""
    case Variant(_) =>
      val pathRef = ctx.addReferenceObj("dshaPath", path)
      val algorithmRef = ctx.addReferenceObj("dshaAlgorithm", algorithm, classOf[Algorithm].getName)
      val cls = classOf[VariantEncoder].getName
      val encoder = ctx.addMutableState(
        cls,
        "dshaVariant",
        x => s"$x = ${VariantEncoders.getClass.getName.stripSuffix("$")}.create($pathRef, $algorithmRef);"
      )
      s"$encoder.write($h, $v);"
    case a: ArrayOf => array(a, v, h, path)
    case m: MapOf => map(m, v, h, path)
    case s: StructOf => struct(s, v, h, path)
  }

  private def array(a: ArrayOf, v: String, h: String, path: String): String = {
    val n = ctx.freshName("n")
    val i = ctx.freshName("i")
    val element = CodeGenerator.getValue(v, a.element.sparkType, i)
    s"""int $n = $v.numElements();
       |$h.putInt($n);
       |for (int $i = 0; $i < $n; $i++) {
       |  ${writeNullable(a.element, s"$v.isNullAt($i)", element, h, path + "[]")}
       |}""".stripMargin
  }

  private def map(m: MapOf, v: String, h: String, path: String): String = {
    val algorithmRef = ctx.addReferenceObj("dshaAlgorithm", algorithm, classOf[Algorithm].getName)
    val entries =
      ctx.addMutableState(EntrySetClass, "dshaEntries", x => s"$x = ($EntrySetClass) $algorithmRef.newEntrySet();")
    val keys = ctx.freshName("keys")
    val values = ctx.freshName("values")
    val n = ctx.freshName("n")
    val i = ctx.freshName("i")
    // A field, not a local: a wide struct inside the entry is written by split methods that must see it.
    val entry = ctx.addMutableState(EntrySinkClass, "dshaEntry")
    val key = CodeGenerator.getValue(keys, m.key.sparkType, i)
    val value = CodeGenerator.getValue(values, m.value.sparkType, i)
    s"""org.apache.spark.sql.catalyst.util.ArrayData $keys = $v.keyArray();
       |org.apache.spark.sql.catalyst.util.ArrayData $values = $v.valueArray();
       |int $n = $v.numElements();
       |$entries.clear();
       |for (int $i = 0; $i < $n; $i++) {
       |  $entry = $entries.begin();
       |  ${writeNullable(m.key, s"$keys.isNullAt($i)", key, entry, path + ".key")}
       |  ${writeNullable(m.value, s"$values.isNullAt($i)", value, entry, path + ".value")}
       |  $entries.end();
       |}
       |$entries.writeTo($h, $n);""".stripMargin
  }

  private def struct(s: StructOf, v: String, h: String, path: String): String = {
    val row = ctx.freshName("struct")
    val fields = s.fields.map { f =>
      val value = CodeGenerator.getValue(row, f.dataType.sparkType, f.ordinal.toString)
      writeNullable(f.dataType, s"$row.isNullAt(${f.ordinal})", value, h, s"$path.${f.name}")
    }
    if (fields.size <= InlineStructFields) {
      s"InternalRow $row = $v;\n" + fields.mkString("\n")
    } else {
      s"InternalRow $row = $v;\n" + ctx.splitExpressions(fields, "dshaStructFields", Seq("InternalRow" -> row))
    }
  }
}
