package io.dsha.algorithm.v1;

import io.dsha.algorithm.EntrySet;
import io.dsha.hash.ByteSink;
import io.dsha.hash.Murmur3x64Stream;
import io.dsha.hash.UInt128;

/**
 * dsha-v1's entry set (SPEC.md §3.4, §3.6): each entry hashed with MurmurHash3_x64_128 (seed 0), the entry digests
 * summed mod 2^128; written as u32 count, then the sum (low word first).
 */
public final class Murmur3EntrySum extends EntrySet {
  private final Murmur3x64Stream entry = new Murmur3x64Stream();
  private long low;
  private long high;

  @Override
  public void clear() {
    low = 0L;
    high = 0L;
  }

  @Override
  public Murmur3x64Stream begin() {
    entry.reset();
    return entry;
  }

  @Override
  public void end() {
    entry.finish();
    long l = entry.digestLow();
    high = UInt128.addHigh(high, entry.digestHigh(), low, l);
    low += l;
  }

  @Override
  public void writeTo(ByteSink out, int count) {
    out.putInt(count);
    out.putLong(low);
    out.putLong(high);
  }
}
