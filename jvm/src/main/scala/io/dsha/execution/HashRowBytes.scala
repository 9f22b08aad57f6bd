package io.dsha.execution

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{And, Attribute, Expression}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateExpression, Partial}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{CodegenSupport, ColumnarRule, FilterExec, InputRDDCodegen, SparkPlan}
import org.apache.spark.sql.execution.aggregate.{HashAggregateExec, ObjectHashAggregateExec}

import io.dsha.aggregate.{DshaAggregate, DshaSketch}
import io.dsha.encoding.RowBytesWriter
import io.dsha.expressions.{LogicalFilterWordIn, LogicalHashIn}
import io.dsha.util.Settings

/**
 * Puts [[PartialDshaExec]] in place of the partial step of a global `dsha(...)` where it is faster than Spark's
 * generated aggregate: no GROUP BY, only dsha aggregates, arguments that are columns of flat types, and input rows that
 * exist anyway (a cached table, a shuffle, local data). Where Spark would fuse the aggregate with its input (a Parquet
 * scan, a projection, a join), building those rows would cost more than it saves, so the plan is left alone. Both
 * paths give the same digest. Likewise [[PartialSketchExec]] for a global `dsha_sketch(...)` and [[DigestFilterExec]]
 * for a filter that is one `logical_hash_in` (dsha.diff's two passes). Off with `spark.dsha.hashRowBytes=false`.
 */
case class HashRowBytes(session: SparkSession) extends Rule[SparkPlan] {

  override def apply(plan: SparkPlan): SparkPlan =
    if (!HashRowBytes.enabled(session)) plan
    else
      plan.transformUp {
        case agg: HashAggregateExec => HashRowBytes.partialStep(agg).getOrElse(agg)
        case agg: ObjectHashAggregateExec => HashRowBytes.partialSketch(agg).getOrElse(agg)
        case filter: FilterExec => HashRowBytes.digestFilter(filter).getOrElse(filter)
      }
}

object HashRowBytes {
  val Enabled = "spark.dsha.hashRowBytes"

  def enabled(session: SparkSession): Boolean = Settings.trueOrFalse(Enabled, session.conf.get(Enabled, "true"))

  /**
   * Installed as a columnar rule because that is the hook Spark applies to physical plans with and without adaptive
   * execution (to each query stage under AQE), after exchanges are planned and before codegen stages are collapsed.
   */
  def columnarRule(session: SparkSession): ColumnarRule = new ColumnarRule {
    override def preColumnarTransitions: Rule[SparkPlan] = HashRowBytes(session)
  }

  def partialStep(agg: HashAggregateExec): Option[PartialDshaExec] = {
    val bufferAttributes = agg.aggregateExpressions.flatMap(_.aggregateFunction.inputAggBufferAttributes)
    val global = agg.groupingExpressions.isEmpty && agg.aggregateExpressions.nonEmpty &&
      agg.output.map(_.exprId) == bufferAttributes.map(_.exprId)
    if (!global || !rowsExist(agg.child)) {
      None
    } else {
      val aggregates = agg.aggregateExpressions.map(aggregate(_, agg.child.output))
      if (aggregates.forall(_.isDefined)) Some(PartialDshaExec(aggregates.flatten, agg.output, agg.child)) else None
    }
  }

  def partialSketch(agg: ObjectHashAggregateExec): Option[PartialSketchExec] = {
    val bufferAttributes = agg.aggregateExpressions.flatMap(_.aggregateFunction.inputAggBufferAttributes)
    val global = agg.groupingExpressions.isEmpty && agg.aggregateExpressions.nonEmpty &&
      agg.output.map(_.exprId) == bufferAttributes.map(_.exprId)
    val sketches = agg.aggregateExpressions.map { e =>
      e.aggregateFunction match {
        case s: DshaSketch if e.mode == Partial && !e.isDistinct && e.filter.isEmpty && s.readsRowBytes =>
          val columns = s.children.map(column(_, agg.child.output))
          if (columns.forall(_.isDefined)) Some(s -> columns.flatten.toIndexedSeq) else None
        case _ => None
      }
    }
    if (global && rowsExist(agg.child) && sketches.forall(_.isDefined)) {
      Some(PartialSketchExec(sketches.flatten, agg.output, agg.child))
    } else None
  }

  def digestFilter(filter: FilterExec): Option[DigestFilterExec] = {
    def columns(e: Expression) = {
      val c = e.children.map(column(_, filter.child.output))
      if (c.forall(_.isDefined)) Some(c.flatten.toIndexedSeq) else None
    }
    def hashed(in: LogicalHashIn) =
      if (rowsExist(filter.child) && RowBytesWriter.direct(in.schema.row)) columns(in) else None
    filter.condition match {
      case And(words: LogicalFilterWordIn, in: LogicalHashIn) =>
        for (w <- columns(words); h <- hashed(in)) yield DigestFilterExec(in, h, filter.child, Some(words -> w))
      case in: LogicalHashIn => hashed(in).map(DigestFilterExec(in, _, filter.child))
      case _ => None
    }
  }

  /**
   * Whether the child hands over materialised rows (in whole-stage codegen, through an InputAdapter or an input RDD)
   * rather than values computed in the same generated loop. Columnar children are still batches at this point.
   */
  private def rowsExist(child: SparkPlan): Boolean = child match {
    case _: InputRDDCodegen => true
    case _: CodegenSupport => false
    case other => !other.supportsColumnar
  }

  private def aggregate(e: AggregateExpression, input: Seq[Attribute]): Option[PartialDshaExec.Aggregate] =
    e.aggregateFunction match {
      case d: DshaAggregate if e.mode == Partial && !e.isDistinct && e.filter.isEmpty =>
        val columns = d.children.map(column(_, input))
        if (columns.forall(_.isDefined)) {
          val spec = StateHasher.Spec(d.schema, columns.flatten.toIndexedSeq, d.algorithm)
          Some(PartialDshaExec.Aggregate(d.prettyName, d.fieldNames, spec)).filter(_ =>
            RowBytesWriter.direct(d.schema.row)
          )
        } else None
      case _ => None
    }

  private def column(e: Expression, input: Seq[Attribute]): Option[Int] = e match {
    case a: Attribute => Some(input.indexWhere(_.exprId == a.exprId)).filter(_ >= 0)
    case _ => None
  }
}
