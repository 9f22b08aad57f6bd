package io.dsha.registration

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeMap}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule

import io.dsha.expressions.NamedArguments

/**
 * Names a column argument as its input has it, not as the query spelled it: under case-insensitive resolution Spark
 * hands a function `a` renamed to `A` when the query says `dsha(A)`, and SPEC.md §2.1 names columns as the table does.
 * An analyzer rule (the input is known only here); sessions that only called `DshaFunctions.register` lack it.
 */
object ArgumentNamesAsInInput extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    // Only operators that call a dsha function pay for the map of their input (the rule runs on every query).
    case node
        if node.childrenResolved && node.children.nonEmpty &&
          node.expressions.exists(_.exists(_.isInstanceOf[NamedArguments])) =>
      val input = AttributeMap(node.children.flatMap(_.output).map(a => a -> a.name))
      node.transformExpressions { case e: NamedArguments =>
        val names = e.children.zip(e.fieldNames).map {
          case (a: Attribute, typed) => input.getOrElse(a, typed)
          case (_, name) => name
        }
        if (names == e.fieldNames) e else e.withFieldNames(names)
      }
  }
}
