package io.dsha.registration

import java.lang.reflect.{InvocationHandler, InvocationTargetException, Method, Proxy}
import java.util.Locale

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Expression, Literal, SubqueryExpression}
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.{LocalRelation, LogicalPlan}
import org.apache.spark.sql.execution.command.SetCommand
import org.apache.spark.sql.types.{BinaryType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * Keeps keys written in SQL text away from Spark: the text is rewritten before the session's own parser sees it, so
 * the key is in no plan, no node's origin (the "== SQL ==" context of a runtime error such as an ANSI division by
 * zero), no view's stored text, no syntax error and no parser log at DEBUG:
 *  - a keyed function's literal key (`dsha_keyed('9f86…', *)`, `X'…'`) becomes `'conf:NAME'`, a name under which
 *    [[KeyArgument]] keeps the key for this session, wherever the call is: in a subquery, a CTE, a view, a SQL
 *    script's statement (Spark 4);
 *  - a key given as an expression (`unhex('…')`, `concat(…)`, `CAST(… AS BINARY)`) would keep its pieces in the plan:
 *    it becomes a name that is refused when the query is analysed, pointing to a literal, `conf:NAME` or Python's
 *    `key=`; a variable or a parameter is refused alike from the parsed plan;
 *  - `SET spark.dsha.secret.NAME = 'KEY'` keeps the key for this session (quotes or not), sets nothing and is never
 *    parsed by Spark: its result shows the value redacted, as `SET` alone does.
 * A literal the text scan leaves (escapes in it) is replaced in the parsed plan instead, as a fallback.
 *
 * Not reached: SQL text Spark records before parsing (Spark Connect's request events and job descriptions, the
 * `spark-sql` shell's job descriptions), which is why docs/tamper-evident.md recommends `key=` there.
 *
 * The wrapper is a dynamic proxy of [[ParserInterface]], so one jar fits every Spark line whatever methods a line's
 * parser has: each call goes to the wrapped parser with its text rewritten, and plans and expressions it returns are
 * rewritten.
 */
object KeyLiterals {

  /** `session`: the session whose parser this is, which alone can name the keys its text gives. */
  def parser(session: AnyRef, delegate: ParserInterface): ParserInterface =
    Proxy
      .newProxyInstance(getClass.getClassLoader, Array(classOf[ParserInterface]), new Rewriting(session, delegate))
      .asInstanceOf[ParserInterface]

  private final class Rewriting(session: AnyRef, delegate: ParserInterface) extends InvocationHandler {
    override def invoke(proxy: Any, method: Method, args: Array[AnyRef]): AnyRef = {
      val passed = if (args == null) Array.empty[AnyRef] else args
      val arguments = passed.headOption match {
        case Some(text: String) =>
          statementKey(text) match {
            // The statement's text is never given to Spark's parser, which logs it at DEBUG.
            case Some((name, value)) if classOf[LogicalPlan].isAssignableFrom(method.getReturnType) =>
              KeyArgument.fromStatement(session, name, value)
              return redactedSetting(name)
            case _ => passed.updated(0, masked(session, text))
          }
        case _ => passed
      }
      val result =
        try method.invoke(delegate, arguments: _*)
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

  private val SetKey = "(?is)\\s*SET\\s+(spark\\.dsha\\.secret\\.[^\\s=]+)\\s*=\\s*(.*?)\\s*;?\\s*".r

  /** `SET spark.dsha.secret.NAME = VALUE`: the setting's name and its value as written. */
  private def statementKey(text: String): Option[(String, String)] = text match {
    case SetKey(name, value) if value.nonEmpty => Some((name, value))
    case _ => None
  }

  /**
   * The SQL text with each keyed function's literal key (`dsha_keyed('9f86…', …)`, `X'…'`) replaced by
   * `'conf:NAME'`, the name under which [[KeyArgument]] keeps the key for `session`, before Spark's parser sees the
   * text: so the key is in no node's origin (the "== SQL ==" context of a runtime error), no view's stored text, no
   * parse error and no parser log. A literal with escapes is left to the rewrite of the parsed plan.
   */
  private[registration] def masked(session: AnyRef, text: String): String = {
    def keyed(t: SqlToken) = t.word && DshaFunctions.keyedNames.contains(t.text.toLowerCase(Locale.ROOT))
    val tokens = SqlTokens(text)
    if (!tokens.exists(keyed)) return text
    val out = new StringBuilder
    var copied = 0
    def replace(from: Int, until: Int, name: String): Unit = {
      out.append(text.substring(copied, from)).append(s"'${KeyArgument.ConfPrefix}$name'")
      copied = until
    }
    for (i <- tokens.indices if keyed(tokens(i)) && i + 2 < tokens.length && tokens(i + 1).text == "(") {
      val function = tokens(i).text
      // The first argument: the tokens up to a ',' or ')' outside parentheses.
      var end = i + 2
      var depth = 0
      while (end < tokens.length && !(depth == 0 && Set(",", ")").contains(tokens(end).text))) {
        if (tokens(end).text == "(") depth += 1 else if (tokens(end).text == ")") depth -= 1
        end += 1
      }
      val argument = tokens.slice(i + 2, end)
      if (end < tokens.length && argument.nonEmpty && tokens(i + 2).start >= copied) {
        val last = argument.last
        val body = if (last.quoted) last.text.substring(1, last.text.length - 1) else ""
        val plain = last.quoted && !body.contains('\\') && !body.contains(last.text.head)
        argument.map(_.text.toUpperCase(Locale.ROOT)) match {
          case Seq(_) if plain && !body.startsWith(KeyArgument.ConfPrefix) =>
            replace(last.start, last.end, KeyArgument.rememberLiteral(session, function, Left(body)))
          case Seq("X", _) if plain && body.length % 2 == 0 && body.forall(c => Character.digit(c, 16) >= 0) =>
            val bytes = body.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray
            replace(argument.head.start, last.end, KeyArgument.rememberLiteral(session, function, Right(bytes)))
          // A parameter marker: Spark 4.1+ puts the value into the text before parsing (and logs that text).
          case _
              if argument.exists(_.text == "?") || argument.sliding(2).exists(p => p.head.text == ":" && p.last.word) =>
            replace(argument.head.start, last.end, KeyArgument.refused(session, expressionKey(function)))
          case Seq(_) => () // a literal with escapes is left to the rewrite of the parsed plan; a name, a number
          case _ if argument.exists(_.quoted) => // an expression with text in it: its pieces never reach Spark
            replace(argument.head.start, last.end, KeyArgument.refused(session, expressionKey(function)))
          case _ => ()
        }
      }
    }
    out.append(text.substring(copied)).toString
  }

  private def expressionKey(function: String): String =
    s"the key of $function must be a constant written as a literal: BINARY (X'…'), a hex or base64 " +
      s"STRING, or '${KeyArgument.ConfPrefix}NAME' for a session setting (Python: key=); an expression " +
      "(unhex, concat, CAST, a variable, a parameter, a column) would keep the key in the plan"

  /** A token of SQL text: a word, a quoted string or identifier (quotes kept), or one other character. */
  private final case class SqlToken(text: String, start: Int, end: Int) {
    def word: Boolean = Character.isLetter(text.head) || text.head == '_'
    def quoted: Boolean = text.head == '\'' || text.head == '"'
  }

  /**
   * The tokens of SQL text as far as finding a function's first argument needs: comments and whitespace skipped,
   * strings (`'…'`, `"…"`, backslash escapes) and back-quoted identifiers whole. Not Spark's lexer: only a literal
   * found where a keyed function's first argument is, and followed by `,` or `)`, is ever replaced.
   */
  private object SqlTokens {
    def apply(s: String): IndexedSeq[SqlToken] = {
      val tokens = IndexedSeq.newBuilder[SqlToken]
      var i = 0
      val n = s.length
      while (i < n) {
        val c = s.charAt(i)
        if (Character.isWhitespace(c)) i += 1
        else if (c == '-' && i + 1 < n && s.charAt(i + 1) == '-') {
          while (i < n && s.charAt(i) != '\n') i += 1
        } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
          var depth = 1
          i += 2
          while (i < n && depth > 0) {
            if (s.startsWith("/*", i)) { depth += 1; i += 2 }
            else if (s.startsWith("*/", i)) { depth -= 1; i += 2 }
            else i += 1
          }
        } else if (c == '\'' || c == '"' || c == '`') {
          var j = i + 1
          while (j < n && s.charAt(j) != c) j += (if (s.charAt(j) == '\\' && c != '`') 2 else 1)
          val end = math.min(j + 1, n)
          tokens += SqlToken(s.substring(i, end), i, end)
          i = end
        } else if (Character.isLetterOrDigit(c) || c == '_') {
          var j = i
          while (j < n && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) j += 1
          tokens += SqlToken(s.substring(i, j), i, j)
          i = j
        } else {
          tokens += SqlToken(c.toString, i, i + 1)
          i += 1
        }
      }
      tokens.result()
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

    // Subqueries in an expression (`selectExpr("(SELECT dsha_keyed(...))")`) are plans of their own.
    def expression(e: Expression): Expression =
      e.transformUp(replace.orElse { case s: SubqueryExpression => s.withNewPlan(rewrite(s.plan)) })

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
              KeyArgument.refused(session, expressionKey(function))
            )
        }
        name.fold[Expression](f)(n => f.withNewChildren(Literal(KeyArgument.ConfPrefix + n) +: f.children.tail))
    }
  }

  private def keyed(f: UnresolvedFunction): Boolean =
    f.arguments.nonEmpty && DshaFunctions.keyedNames.contains(f.nameParts.last.toLowerCase(Locale.ROOT))
}
