package io.dsha.aggregate

import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(state) - Returns the dsha digest string of a dsha state (from dsha_state or dsha_merge): exactly what dsha
      gives for the same rows. NULL for NULL; an error for a malformed state (SPEC.md §11).
  """,
  arguments = """
    Arguments:
      * state - a BINARY dsha state.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(dsha_state(*)) FROM VALUES (1, 'a'), (2, 'b') AS t(id, name);
       f81b4f50120c0fe1c9d4d3e8b50a9fe4c8afe5f03db958ab0a2d154157578fe80e53f8dab68
  """,
  group = "misc_funcs",
  since = "0.1.0"
)
// scalastyle:on line.size.limit
case class DshaFinal(child: Expression) extends StateFinalisation {
  override def prettyName: String = "dsha_final"
  override protected def form: DshaResult.Form = DshaResult.Digest
  override protected def withNewChildInternal(newChild: Expression): DshaFinal = copy(child = newChild)
}
