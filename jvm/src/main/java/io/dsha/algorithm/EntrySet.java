package io.dsha.algorithm;

import io.dsha.hash.ByteSink;

/**
 * An order-independent set of entries inside one value (map entries, variant object fields): each entry is written
 * into the sink {@link #begin()} returns and closed by {@link #end()}; {@link #writeTo} then writes the set's
 * canonical form. Subclasses narrow {@code begin()}'s return type to their concrete sink, so generated code calls it
 * without an interface dispatch. One instance per nesting level, reused.
 */
public abstract class EntrySet {
  /** Starts a new (empty) set. */
  public abstract void clear();

  /** Starts an entry; write its bytes into the returned sink. */
  public abstract ByteSink begin();

  /** Ends the entry begun last. */
  public abstract void end();

  /** Writes the set of {@code count} entries into {@code out}. */
  public abstract void writeTo(ByteSink out, int count);
}
