package io.dsha.shims

import java.{util => ju}

import org.apache.spark.types.variant.{Variant, VariantUtil}
import org.apache.spark.unsafe.types.VariantVal

import io.dsha.shims.VariantAccess.Kind

/** Reads Spark 4.x variants (`VariantVal`, nodes are `types.variant.Variant`) for the shared variant encoder. */
object SparkVariantAccess extends VariantAccess with Serializable {
  private def v(node: AnyRef): Variant = node.asInstanceOf[Variant]

  def root(value: AnyRef): AnyRef = {
    val x = value.asInstanceOf[VariantVal]
    new Variant(x.getValue, x.getMetadata)
  }

  def kind(node: AnyRef): Kind = v(node).getType match {
    case VariantUtil.Type.NULL => Kind.NULL
    case VariantUtil.Type.BOOLEAN => Kind.BOOLEAN
    case VariantUtil.Type.LONG => Kind.INTEGER
    case VariantUtil.Type.FLOAT => Kind.FLOAT
    case VariantUtil.Type.DOUBLE => Kind.DOUBLE
    case VariantUtil.Type.DECIMAL => Kind.DECIMAL
    case VariantUtil.Type.DATE => Kind.DATE
    case VariantUtil.Type.TIMESTAMP => Kind.TIMESTAMP
    case VariantUtil.Type.TIMESTAMP_NTZ => Kind.TIMESTAMP_NTZ
    case VariantUtil.Type.STRING => Kind.STRING
    case VariantUtil.Type.BINARY => Kind.BINARY
    case VariantUtil.Type.UUID => Kind.UUID
    case VariantUtil.Type.ARRAY => Kind.ARRAY
    case VariantUtil.Type.OBJECT => Kind.OBJECT
    case _ => Kind.OTHER
  }

  def typeName(node: AnyRef): String = v(node).getType.toString
  def getBoolean(node: AnyRef): Boolean = v(node).getBoolean
  def getLong(node: AnyRef): Long = v(node).getLong
  def getFloat(node: AnyRef): Float = v(node).getFloat
  def getDouble(node: AnyRef): Double = v(node).getDouble
  def getDecimal(node: AnyRef): java.math.BigDecimal = v(node).getDecimal
  def getString(node: AnyRef): String = v(node).getString
  def getBinary(node: AnyRef): Array[Byte] = v(node).getBinary
  def getUuid(node: AnyRef): ju.UUID = v(node).getUuid
  def arraySize(node: AnyRef): Int = v(node).arraySize
  def element(node: AnyRef, i: Int): AnyRef = v(node).getElementAtIndex(i)
  def objectSize(node: AnyRef): Int = v(node).objectSize

  def field(node: AnyRef, i: Int): ju.Map.Entry[String, AnyRef] = {
    val f = v(node).getFieldAtIndex(i)
    new ju.AbstractMap.SimpleImmutableEntry[String, AnyRef](f.key, f.value)
  }
}
