package io.ferry.model;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.stream.IntStream;

/**
 * A set of ranks written as sorted ranges, {@code "0-15,32-47,64"}: what one node runs. Its
 * text form is what travels in commands, so a node of 256 ranks costs a few bytes, not a list.
 * Immutable.
 */
public final class RankSet {
    /** Largest rank Ferry accepts (2^24 - 1: sixteen million ranks). */
    public static final int MAX_RANK = (1 << 24) - 1;
    private final BitSet bits;
    private final String text;

    private RankSet(BitSet bits) {
        this.bits = bits;
        this.text = format(bits);
    }

    public static RankSet of(IntStream ranks) {
        BitSet b = new BitSet();
        ranks.forEach(r -> {
            if (r < 0 || r > MAX_RANK) {
                throw new IllegalArgumentException("rank must be within 0.." + MAX_RANK + ", got " + r);
            }
            b.set(r);
        });
        return new RankSet(b);
    }

    public static RankSet range(int fromInclusive, int toExclusive) {
        return of(IntStream.range(fromInclusive, toExclusive));
    }

    /** Parses {@code "0-3,8,10-11"} (empty text: no ranks); errors quote the text. */
    public static RankSet parse(String text) {
        BitSet b = new BitSet();
        if (text == null) {
            throw new IllegalArgumentException("rank set missing");
        }
        if (text.isEmpty()) {
            return new RankSet(b);
        }
        for (String part : text.split(",", -1)) {
            String[] lr = part.split("-", -1);
            try {
                int lo = Integer.parseInt(lr[0]);
                int hi = lr.length == 2 ? Integer.parseInt(lr[1]) : lo;
                if (lr.length > 2 || lo < 0 || hi < lo || hi > MAX_RANK) {
                    throw new NumberFormatException();
                }
                b.set(lo, hi + 1);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad rank range '" + part + "' in '" + text
                        + "': use N or N-M with 0 <= N <= M <= " + MAX_RANK);
            }
        }
        return new RankSet(b);
    }

    public boolean contains(int rank) {
        return rank >= 0 && bits.get(rank);
    }

    public int size() {
        return bits.cardinality();
    }

    public boolean isEmpty() {
        return bits.isEmpty();
    }

    public IntStream stream() {
        return bits.stream();
    }

    public List<Integer> toList() {
        List<Integer> l = new ArrayList<>(size());
        bits.stream().forEach(l::add);
        return l;
    }

    private static String format(BitSet b) {
        StringBuilder s = new StringBuilder();
        int lo = b.nextSetBit(0);
        while (lo >= 0) {
            int hi = b.nextClearBit(lo) - 1;
            s.append(s.length() == 0 ? "" : ",").append(lo);
            if (hi > lo) {
                s.append('-').append(hi);
            }
            lo = b.nextSetBit(hi + 1);
        }
        return s.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RankSet r && r.bits.equals(bits);
    }

    @Override
    public int hashCode() {
        return bits.hashCode();
    }

    @Override
    public String toString() {
        return text;
    }
}
