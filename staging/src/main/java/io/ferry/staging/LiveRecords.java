package io.ferry.staging;

import java.util.Arrays;

/**
 * The live records of one pack, for gc: each as one {@code long} (offset in the high 32 bits,
 * record length in the low 32), kept in an array that is sorted and rid of repeats whenever it
 * fills, so a record that a hundred generations reference costs 8 bytes, not a hundred map
 * entries. A TreeMap of boxed offsets and lengths (what gc used before) cost about 80 bytes per
 * record; this costs 8 to 16. Not thread-safe.
 */
final class LiveRecords {
    private long[] records = new long[8];
    private int size;
    /** Whether {@code records[0, size)} is sorted and without repeats. */
    private boolean compact = true;

    /** Adds the record at {@code offset} of {@code length} bytes (again: no change). */
    void add(long offset, int length) {
        if (offset < 0 || offset > 0xffff_ffffL || length <= 0) {
            throw new IllegalArgumentException("a pack record at offset " + offset + " of " + length
                    + " bytes is outside what a pack holds (offsets below 4 GiB)");
        }
        if (size == records.length) {
            compact();
            if (size > records.length / 2) {
                records = Arrays.copyOf(records, records.length * 2);
            }
        }
        records[size++] = offset << 32 | length;
        compact = false;
    }

    private void compact() {
        if (compact) {
            return;
        }
        Arrays.sort(records, 0, size);
        int out = 0;
        for (int i = 0; i < size; i++) {
            if (out == 0 || records[i] != records[out - 1]) {
                records[out++] = records[i];
            }
        }
        size = out;
        compact = true;
    }

    /** The length of the live record at {@code offset}, or -1 if none is there. */
    int lengthAt(long offset) {
        compact();
        int lo = 0;
        int hi = size - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long at = records[mid] >>> 32;
            if (at < offset) {
                lo = mid + 1;
            } else if (at > offset) {
                hi = mid - 1;
            } else {
                return (int) records[mid];
            }
        }
        return -1;
    }

    /** Bytes of the live records (each counted once). */
    long bytes() {
        compact();
        long sum = 0;
        for (int i = 0; i < size; i++) {
            sum += (int) records[i];
        }
        return sum;
    }

    /** Records held (each once). */
    int count() {
        compact();
        return size;
    }
}
