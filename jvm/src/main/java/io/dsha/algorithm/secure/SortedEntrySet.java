package io.dsha.algorithm.secure;

import io.dsha.algorithm.EntrySet;
import io.dsha.hash.ByteBufferSink;
import io.dsha.hash.ByteSink;

/**
 * The secure modes' entry set (SPEC.md §16.1): the entries' bytes are kept, then written as u32 count and each entry as
 * u32 length and bytes, sorted as unsigned byte strings. An injective encoding of the multiset of entries, unlike
 * dsha-v1's sum of MurmurHash3 digests, which can be forged.
 */
public final class SortedEntrySet extends EntrySet {
  private final ByteBufferSink bytes = new ByteBufferSink();
  private int[] starts = new int[16];
  private int[] ends = new int[16];
  private int count;

  @Override
  public void clear() {
    bytes.clear();
    count = 0;
  }

  @Override
  public ByteBufferSink begin() {
    if (count == starts.length) {
      starts = java.util.Arrays.copyOf(starts, 2 * count);
      ends = java.util.Arrays.copyOf(ends, 2 * count);
    }
    starts[count] = bytes.length();
    return bytes;
  }

  @Override
  public void end() {
    ends[count] = bytes.length();
    count++;
  }

  @Override
  public void writeTo(ByteSink out, int n) {
    int[] order = new int[count];
    for (int i = 0; i < count; i++) order[i] = i;
    sort(order, new int[count], 0, count);
    byte[] b = bytes.array();
    out.putInt(n);
    for (int i : order) {
      int len = ends[i] - starts[i];
      out.putInt(len);
      out.putBytes(b, org.apache.spark.unsafe.Platform.BYTE_ARRAY_OFFSET + starts[i], len);
    }
  }

  /** A stable merge sort of entry indexes by their bytes (no boxing; maps are usually small). */
  private void sort(int[] a, int[] tmp, int from, int to) {
    if (to - from < 2) return;
    int mid = (from + to) >>> 1;
    sort(a, tmp, from, mid);
    sort(a, tmp, mid, to);
    int i = from;
    int j = mid;
    int k = from;
    while (i < mid && j < to) tmp[k++] = compare(a[j], a[i]) < 0 ? a[j++] : a[i++];
    while (i < mid) tmp[k++] = a[i++];
    while (j < to) tmp[k++] = a[j++];
    System.arraycopy(tmp, from, a, from, to - from);
  }

  private int compare(int x, int y) {
    byte[] b = bytes.array();
    int lx = ends[x] - starts[x];
    int ly = ends[y] - starts[y];
    int n = Math.min(lx, ly);
    for (int k = 0; k < n; k++) {
      int c = (b[starts[x] + k] & 0xff) - (b[starts[y] + k] & 0xff);
      if (c != 0) return c;
    }
    return lx - ly;
  }
}
