package io.dsha.util

import java.util.Locale

/** Reading dsha's settings: one rule for each kind of value, one wording for its error. */
object Settings {

  /** A true/false setting's value (case and surrounding spaces ignored); anything else is an error naming it. */
  def trueOrFalse(name: String, text: String): Boolean = text.trim.toLowerCase(Locale.ROOT) match {
    case "true" => true
    case "false" => false
    case _ => throw new IllegalArgumentException(s"$name must be true or false, not '$text'")
  }
}
