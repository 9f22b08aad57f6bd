package io.dsha.registration

import java.lang.reflect.{InvocationHandler, InvocationTargetException, Method, Proxy}
import java.util.Locale

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Expression, Literal}
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan}
import org.apache.spark.sql.execution.command.SetCommand
import org.apache.spark.sql.types.{BinaryType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * Keeps keys written in SQL text out of parsed plans and of Spark's error context, as the text is parsed by a
 * session's parser:
 *  - a keyed function's literal key (`dsha_keyed('9f86…', *)`) becomes `'conf:NAME'`, a name under which
 *    [[KeyArgument]] keeps the key for this session, wherever the call is: in a subquery, a CTE, a SQL script's
 *    statement (Spark 4). So EXPLAIN EXTENDED, event logs' plan descriptions and Spark Connect's plan events show the
 *    name, never the key;
 *  - a key given as an expression (`unhex('…')`, `concat(…)`, `CAST(… AS BINARY)`, a variable, a parameter) would
 *    keep its pieces in the plan: it is refused (when the query is analysed), pointing to a literal, `conf:NAME` or
 *    Python's `key=`;
 *  - `SET spark.dsha.secret.NAME = 'KEY'` keeps the key for this session (quotes or not) and sets nothing: its result
 *    shows the value redacted, as `SET` alone does.
 *
 * The SQL text itself is the caller's: Spark shows it where it shows statements (a job description set to it, a
 * view's original text, Spark Connect's statement events, the "== SQL ==" context of a runtime error such as an ANSI
 * division by zero), which is why README recommends `conf:NAME` or `key=`.
 *
 * The wrapper is a dynamic proxy of [[ParserInterface]], so one jar fits every Spark line whatever methods a line's
 * parser has: each call goes to the wrapped parser, and plans and expressions it returns are rewritten.
 */
object KeyLiterals {

  /** `session`: the session whose parser this is, which alone can name the keys its text gives. */
  def parser(session: AnyRef, delegate: ParserInterface): ParserInterface =
    Proxy
      .newProxyInstance(getClass.getClassLoader, Array(classOf[ParserInterface]), new Rewriting(session, delegate))
      .asInstanceOf[ParserInterface]

  private final class Rewriting(session: AnyRef, delegate: ParserInterface) extends InvocationHandler {
    override def invoke(proxy: Any, method: Method, args: Array[AnyRef]): AnyRef = {
      val result =
        try method.invoke(delegate, (if (args == null) Array.empty[AnyRef] else args): _*)
        catch { case e: InvocationTargetException => throw e.getCause }
      result match {
        case SetCommand(Some((name, Some(value)))) if name.startsWith(KeyArgument.SettingPrefix) =>
          KeyArgument.fromStatement(session, name, value)
          redactedSetting(name)
        case plan: LogicalPlan => new Rewrite(session).plan(plan)
        case e: Expression => new Rewrite(session).expression(e)
        case other => other
      }
    }
  }

  /** What `SET NAME` shows for a redacted setting: its name and Spark's redaction text. */
  private def redactedSetting(name: String): LogicalPlan = {
    val output = Seq(AttributeReference("key", StringType)(), AttributeReference("value", StringType)())
    val row = InternalRow(UTF8String.fromString(name), UTF8String.fromString("*********(redacted)"))
    LocalRelation(output, Seq(row))
  }

  /** One parse result's rewrite, for `session`. */
  private final class Rewrite(session: AnyRef) {
    def plan(p: LogicalPlan): LogicalPlan = rewrite(p)

    def expression(e: Expression): Expression = e.transformUp(replace)

    private def rewrite(plan: LogicalPlan): LogicalPlan =
      plan.transformUpWithSubqueries { case p => heldPlans(p.transformExpressionsUp(replace)) }

    /**
     * A node that holds plans as arguments without them being children: a SQL script's statement on Spark 4, a CTE's
     * relations (`UnresolvedWith`): those plans are rewritten whole (the traversal above does not reach them).
     */
    private def heldPlans(node: LogicalPlan): LogicalPlan = {
      var changed = false
      def held(arg: Any): Any = arg match {
        case p: LogicalPlan if !node.children.exists(_ eq p) =>
          val rewritten = rewrite(p)
          changed ||= !(rewritten eq p)
          rewritten
        // A CTE's relation: (name, plan), or (name, plan, depth) on later lines.
        case (a, b) => (held(a), held(b))
        case (a, b, c) => (held(a), held(b), held(c))
        case s: Seq[_] => s.map(held)
        case other => other
      }
      val args = node.productIterator.map(held(_).asInstanceOf[AnyRef]).toArray
      if (changed) node.makeCopy(args) else node
    }

    private val replace: PartialFunction[Expression, Expression] = {
      case f: UnresolvedFunction if keyed(f) =>
        val function = f.nameParts.last
        val name = f.arguments.head match {
          case l: Literal if l.value != null && (l.dataType == BinaryType || l.dataType.isInstanceOf[StringType]) =>
            l.value match {
              case text: UTF8String if text.toString.startsWith(KeyArgument.ConfPrefix) => None
              case text: UTF8String => Some(KeyArgument.rememberLiteral(session, function, Left(text.toString)))
              case bytes: Array[Byte] => Some(KeyArgument.rememberLiteral(session, function, Right(bytes)))
              case _ => None
            }
          case _: Literal => None // NULL, a number: the function's own error, with no key in it
          case other =>
            Some(
              KeyArgument.refused(
                session,
                s"the key of $function must be a constant written as a literal: BINARY (X'…'), a hex or base64 " +
                  s"STRING, or '${KeyArgument.ConfPrefix}NAME' for a session setting (Python: key=); an expression " +
                  "(unhex, concat, CAST, a variable, a parameter, a column) would keep the key in the plan"
              )
            )
        }
        name.fold[Expression](f)(n => f.withNewChildren(Literal(KeyArgument.ConfPrefix + n) +: f.children.tail))
    }
  }

  private def keyed(f: UnresolvedFunction): Boolean =
    f.arguments.nonEmpty && DshaFunctions.keyedNames.contains(f.nameParts.last.toLowerCase(Locale.ROOT))
}
