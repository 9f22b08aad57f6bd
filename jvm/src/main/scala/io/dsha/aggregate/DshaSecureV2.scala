package io.dsha.aggregate

import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}

import io.dsha.algorithm.{Algorithm, DshaSecureV2 => SecureV2}

// The public tamper-evident digest at a fraction of dsha-secure-v1's cost (SPEC.md §16.7): dsha's three forms with
// dsha-secure-v2 as their algorithm.

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the dsha-secure-v2 digest of the rows: like dsha, order-independent and
      duplicate-sensitive, and tamper-evident without a secret (a lattice multiset hash, LtHash with 256 lanes of 64
      bits, over SHA-256 and fixed-key AES-128 of each row; SPEC.md §16.7). Faster than dsha_secure (dsha-secure-v1).
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT substr(_FUNC_(*), 1, 11) FROM VALUES (1, 'a'), (2, 'b') AS t(id, name);
       fa1b4f50120
  """,
  group = "agg_funcs",
  since = "0.6.0"
)
// scalastyle:on line.size.limit
case class DshaSecureV2(children: Seq[Expression], fieldNames: Seq[String]) extends DshaAggregate {
  def algorithm: Algorithm = SecureV2
  override def prettyName: String = "dsha_secure_v2"
  override def withFieldNames(names: Seq[String]): DshaSecureV2 = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.Digest
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaSecureV2 =
    copy(children = newChildren)
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the dsha-secure-v2 digest with its parts, as dsha_fingerprint does; content_sum
      is the 2048-byte lattice state in hex (SPEC.md §16.7).
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(*).algorithm FROM range(5);
       dsha-secure-v2
  """,
  group = "agg_funcs",
  since = "0.6.0"
)
// scalastyle:on line.size.limit
case class DshaSecureV2Fingerprint(children: Seq[Expression], fieldNames: Seq[String]) extends DshaAggregate {
  def algorithm: Algorithm = SecureV2
  override def prettyName: String = "dsha_secure_v2_fingerprint"
  override def withFieldNames(names: Seq[String]): DshaSecureV2Fingerprint = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.Fingerprint
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaSecureV2Fingerprint =
    copy(children = newChildren)
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the mergeable state of the dsha-secure-v2 digest (SPEC.md §11, §16.7), for
      dsha_merge, dsha_final and dsha_final_fingerprint.
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT dsha_final(_FUNC_(*)) = dsha_secure_v2(*) FROM VALUES (1, 'a'), (2, 'b') AS t(id, name);
       true
  """,
  group = "agg_funcs",
  since = "0.6.0"
)
// scalastyle:on line.size.limit
case class DshaSecureV2State(children: Seq[Expression], fieldNames: Seq[String]) extends DshaAggregate {
  def algorithm: Algorithm = SecureV2
  override def prettyName: String = "dsha_secure_v2_state"
  override def withFieldNames(names: Seq[String]): DshaSecureV2State = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.State
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaSecureV2State =
    copy(children = newChildren)
}
