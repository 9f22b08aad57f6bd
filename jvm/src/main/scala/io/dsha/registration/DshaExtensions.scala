package io.dsha.registration

import org.apache.spark.sql.SparkSessionExtensions

import io.dsha.execution.HashRowBytes

/**
 * Loads dsha's SQL functions into every session: `--conf spark.sql.extensions=io.dsha.registration.DshaExtensions`.
 * Spark only logs a warning when this class cannot be loaded (for example, the jar is missing from --jars), and the
 * functions are then simply "not found"; see README, "Troubleshooting".
 */
class DshaExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    DshaFunctions.all.foreach(extensions.injectFunction)
    extensions.injectResolutionRule(_ => StarInFilter)
    extensions.injectResolutionRule(_ => ArgumentNamesAsInInput)
    extensions.injectColumnar(HashRowBytes.columnarRule)
    extensions.injectParser((session, parser) => KeyLiterals.parser(session, parser))
  }
}
