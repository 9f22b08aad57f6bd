package io.dsha.aggregate

import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.types.{BinaryType, DataType}

/**
 * Finalises a serialised dsha state (a BINARY from dsha_state or dsha_merge) into one of the forms of [[DshaResult]]:
 * exactly what dsha / dsha_fingerprint give for the same rows. NULL gives NULL; a malformed state is an error.
 */
abstract class StateFinalisation extends UnaryExpression {
  protected def form: DshaResult.Form

  override def dataType: DataType = form.dataType

  override def checkInputDataTypes(): TypeCheckResult = child.dataType match {
    case BinaryType => TypeCheckResult.TypeCheckSuccess
    case other =>
      TypeCheckResult.TypeCheckFailure(
        s"$prettyName takes a BINARY dsha state (from dsha_state or dsha_merge), not ${other.sql}: ${child.sql}"
      )
  }

  /** Called by the generated code too. */
  def finalise(state: Array[Byte]): Any = form(DigestState.parse(state))

  override protected def nullSafeEval(state: Any): Any = finalise(state.asInstanceOf[Array[Byte]])

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val self = ctx.addReferenceObj("stateFinalisation", this)
    defineCodeGen(ctx, ev, state => s"(${form.javaType}) $self.finalise($state)")
  }
}
