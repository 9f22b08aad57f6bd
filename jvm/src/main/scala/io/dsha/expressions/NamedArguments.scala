package io.dsha.expressions

import scala.collection.mutable

import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, ExprId, GetStructField, NamedExpression}

/**
 * A dsha function whose arguments are identified by name (SPEC.md §2.1). Names are captured by the function builder,
 * while the analyzer still has them (binding erases them), and corrected by
 * [[io.dsha.registration.ArgumentNamesAsInInput]] to the input's spelling of each column.
 */
trait NamedArguments extends Expression {
  def fieldNames: Seq[String]
  def withFieldNames(names: Seq[String]): Expression
}

object NamedArguments {

  /**
   * A column's name; a nested field reference's (`s.x`, `s.y.x`) last field name as the struct type has it; an
   * alias's name; otherwise `_N` for the N-th argument. The same column passed twice gets the same name twice, which
   * the schema then rejects as a duplicate (however it was spelled).
   */
  def of(arguments: Seq[Expression]): Seq[String] = {
    // The first spelling of each column (an attribute is its exprId): linear in the arguments, as `*` may be wide.
    val columnNames = mutable.HashMap.empty[ExprId, String]
    arguments.zipWithIndex.map {
      case (a: Attribute, _) => columnNames.getOrElseUpdate(a.exprId, a.name)
      case (f: GetStructField, _) if isFieldReference(f) => f.childSchema(f.ordinal).name
      case (n: NamedExpression, _) => n.name
      case (_, i) => s"_${i + 1}"
    }
  }

  private def isFieldReference(e: Expression): Boolean = e match {
    case _: Attribute => true
    case f: GetStructField => isFieldReference(f.child)
    case _ => false
  }
}
