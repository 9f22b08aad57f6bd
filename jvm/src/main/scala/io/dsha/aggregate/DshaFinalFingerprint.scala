package io.dsha.aggregate

import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(state) - Returns the dsha fingerprint struct of a dsha state (from dsha_state or dsha_merge): exactly what
      dsha_fingerprint gives for the same rows. NULL for NULL; an error for a malformed state (SPEC.md §11).
  """,
  arguments = """
    Arguments:
      * state - a BINARY dsha state.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(dsha_merge(s)).rows FROM (SELECT dsha_state(*) AS s FROM range(10) GROUP BY id % 3);
       10
  """,
  group = "misc_funcs",
  since = "0.1.0"
)
// scalastyle:on line.size.limit
case class DshaFinalFingerprint(child: Expression) extends StateFinalisation {
  override def prettyName: String = "dsha_final_fingerprint"
  override protected def form: DshaResult.Form = DshaResult.Fingerprint
  override protected def withNewChildInternal(newChild: Expression): DshaFinalFingerprint = copy(child = newChild)
}
