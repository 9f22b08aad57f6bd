package io.dsha.aggregate

import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}

import io.dsha.algorithm.{Algorithm, DshaSecureV1}

// The public tamper-evident digest (SPEC.md §16.3): dsha's three forms with dsha-secure-v1 as their algorithm.

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the dsha-secure-v1 digest of the rows: like dsha, order-independent and
      duplicate-sensitive, and tamper-evident without a secret (a lattice multiset hash, LtHash with 512 lanes of 64
      bits, over SHA-256 and AES-256 of each row; SPEC.md §16). Slower than dsha.
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT substr(_FUNC_(*), 1, 11) FROM VALUES (1, 'a'), (2, 'b') AS t(id, name);
       fa0b4f50120
  """,
  group = "agg_funcs",
  since = "0.5.0"
)
// scalastyle:on line.size.limit
case class DshaSecure(children: Seq[Expression], fieldNames: Seq[String]) extends DshaAggregate {
  def algorithm: Algorithm = DshaSecureV1
  override def prettyName: String = "dsha_secure"
  override def withFieldNames(names: Seq[String]): DshaSecure = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.Digest
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaSecure =
    copy(children = newChildren)
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the dsha-secure-v1 digest with its parts, as dsha_fingerprint does; content_sum
      is the 4096-byte lattice state in hex (SPEC.md §16.3).
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(*).algorithm FROM range(5);
       dsha-secure-v1
  """,
  group = "agg_funcs",
  since = "0.5.0"
)
// scalastyle:on line.size.limit
case class DshaSecureFingerprint(children: Seq[Expression], fieldNames: Seq[String]) extends DshaAggregate {
  def algorithm: Algorithm = DshaSecureV1
  override def prettyName: String = "dsha_secure_fingerprint"
  override def withFieldNames(names: Seq[String]): DshaSecureFingerprint = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.Fingerprint
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaSecureFingerprint =
    copy(children = newChildren)
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the mergeable state of the dsha-secure-v1 digest (SPEC.md §11, §16.3), for
      dsha_merge, dsha_final and dsha_final_fingerprint.
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT dsha_final(_FUNC_(*)) = dsha_secure(*) FROM VALUES (1, 'a'), (2, 'b') AS t(id, name);
       true
  """,
  group = "agg_funcs",
  since = "0.5.0"
)
// scalastyle:on line.size.limit
case class DshaSecureState(children: Seq[Expression], fieldNames: Seq[String]) extends DshaAggregate {
  def algorithm: Algorithm = DshaSecureV1
  override def prettyName: String = "dsha_secure_state"
  override def withFieldNames(names: Seq[String]): DshaSecureState = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.State
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaSecureState =
    copy(children = newChildren)
}
