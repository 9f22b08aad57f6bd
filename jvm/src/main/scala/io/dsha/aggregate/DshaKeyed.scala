package io.dsha.aggregate

import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}

import io.dsha.algorithm.{Algorithm, KeyedAlgorithm}

// The keyed tamper-evident digests (SPEC.md §16.2, §16.6): dsha's three forms with a keyed algorithm under a key as
// their algorithm (dsha-keyed-v1, or the one `spark.dsha.keyed.algorithm` names). The key is not an argument of the expression (it would print in plans): the function builder reads it
// (registration/KeyArgument) and the algorithm holds it.

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(key, expr1, expr2, ...) - Returns the keyed digest of the rows under a secret key: like dsha,
      order-independent and duplicate-sensitive, and tamper-evident for anyone without the key (the sum mod 2^256 of
      a pseudo-random function of each row: HMAC-SHA-256 for dsha-keyed-v1, the default; NH, a polynomial and
      AES-256 for dsha-keyed-v2, when the key reference 'conf:NAME#dsha-keyed-v2' or the setting
      spark.dsha.keyed.algorithm names it; SPEC.md §16). The key never appears in plans, logs or errors.
  """,
  arguments = """
    Arguments:
      * key - a constant: BINARY (at least 16 bytes), or a STRING in hex or base64 (SPEC.md §16.2), or 'conf:NAME'
          to read it from the session setting NAME (recommended: a literal key is part of the SQL text), or
          'conf:NAME#ALGORITHM' to name the keyed algorithm too (dsha-keyed-v1 or dsha-keyed-v2).
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT substr(_FUNC_('000102030405060708090a0b0c0d0e0f', *), 1, 11) FROM VALUES (1, 'a') AS t(id, name);
       f90b4f50120
  """,
  group = "agg_funcs",
  since = "0.5.0"
)
// scalastyle:on line.size.limit
case class DshaKeyed(children: Seq[Expression], fieldNames: Seq[String], algorithm: KeyedAlgorithm)
    extends DshaAggregate {
  override def prettyName: String = "dsha_keyed"
  override def withFieldNames(names: Seq[String]): DshaKeyed = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.Digest
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaKeyed =
    copy(children = newChildren)
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(key, expr1, expr2, ...) - Returns the keyed digest (dsha-keyed-v1, or dsha-keyed-v2: as for dsha_keyed)
      with its parts, as dsha_fingerprint does
      (content_sum: the 256-bit sum of row MACs, as confidential as the comparison; SPEC.md §16.2).
  """,
  arguments = """
    Arguments:
      * key - as for dsha_keyed.
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_('000102030405060708090a0b0c0d0e0f', *).algorithm FROM range(5);
       dsha-keyed-v1
  """,
  group = "agg_funcs",
  since = "0.5.0"
)
// scalastyle:on line.size.limit
case class DshaKeyedFingerprint(children: Seq[Expression], fieldNames: Seq[String], algorithm: KeyedAlgorithm)
    extends DshaAggregate {
  override def prettyName: String = "dsha_keyed_fingerprint"
  override def withFieldNames(names: Seq[String]): DshaKeyedFingerprint = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.Fingerprint
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaKeyedFingerprint =
    copy(children = newChildren)
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(key, expr1, expr2, ...) - Returns the mergeable state of the keyed digest (dsha-keyed-v1, or
      dsha-keyed-v2: as for dsha_keyed; SPEC.md §11, §16.2, §16.6).
      States merge and finalise without the key, and do not record which key made them.
  """,
  arguments = """
    Arguments:
      * key - as for dsha_keyed.
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT dsha_final(_FUNC_('000102030405060708090a0b0c0d0e0f', *)) = dsha_keyed('000102030405060708090a0b0c0d0e0f', *) FROM range(3);
       true
  """,
  group = "agg_funcs",
  since = "0.5.0"
)
// scalastyle:on line.size.limit
case class DshaKeyedState(children: Seq[Expression], fieldNames: Seq[String], algorithm: KeyedAlgorithm)
    extends DshaAggregate {
  override def prettyName: String = "dsha_keyed_state"
  override def withFieldNames(names: Seq[String]): DshaKeyedState = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.State
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaKeyedState =
    copy(children = newChildren)
}
