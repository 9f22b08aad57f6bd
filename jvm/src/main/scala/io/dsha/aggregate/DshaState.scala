package io.dsha.aggregate

import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}

import io.dsha.algorithm.{Algorithm, DshaV1}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the mergeable state of the dsha digest of the rows, as BINARY: the algorithm, the
      canonical schema and its digest, the row count and the sum of the row digests (layout in SPEC.md §11). Merge states
      with dsha_merge; dsha_final and dsha_final_fingerprint give exactly what dsha and dsha_fingerprint give for the
      same rows. Over no rows, the state of zero rows (not NULL: the schema is known).
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT dsha_final(_FUNC_(*)) = dsha(*) FROM VALUES (1, 'a'), (2, 'b') AS t(id, name);
       true
      > SELECT hex(substr(_FUNC_(*), 1, 9)) FROM range(3);
       445348530181B4F501
  """,
  group = "agg_funcs",
  since = "0.1.0"
)
// scalastyle:on line.size.limit
case class DshaState(children: Seq[Expression], fieldNames: Seq[String], algorithm: Algorithm = DshaV1)
    extends DshaAggregate {
  override def prettyName: String = "dsha_state"
  override def withFieldNames(names: Seq[String]): DshaState = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.State
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaState =
    copy(children = newChildren)
}
