package io.dsha.registration

import org.apache.spark.sql.catalyst.analysis.{Star, UnresolvedFunction}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule

/**
 * Expands `*` among the arguments of dsha's functions in a filter, as in a projection: `WHERE logical_hash_in(X'..',
 * *)`, `df.filter(logical_hash_in(digests, "*"))`. Spark 4 expands it itself (before this rule runs, so here it finds
 * nothing); Spark 3.5 expands stars in projections and aggregates only and rejects one left in a filter
 * (INVALID_USAGE_OF_STAR_OR_REGEX).
 */
object StarInFilter extends Rule[LogicalPlan] {
  private lazy val dshaFunctions = DshaFunctions.names.toSet

  private def dshaCallWithStar(e: Expression): Boolean = e match {
    case f: UnresolvedFunction =>
      f.nameParts.lengthCompare(1) == 0 && dshaFunctions(f.nameParts.head.toLowerCase(java.util.Locale.ROOT)) &&
      f.arguments.exists(_.isInstanceOf[Star])
    case _ => false
  }

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsUp {
    case filter: Filter if filter.child.resolved && filter.condition.exists(dshaCallWithStar) =>
      filter.copy(condition = filter.condition.transformUp {
        case f: UnresolvedFunction if dshaCallWithStar(f) =>
          f.copy(arguments = f.arguments.flatMap {
            case star: Star => star.expand(filter.child, conf.resolver)
            case argument => Seq(argument)
          })
      })
  }
}
