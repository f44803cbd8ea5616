package io.ferry.model;

/**
 * Where one blob of a pack-layout file (manifest version 3) lies: its raw length (blobs are
 * cut by content, so lengths vary) and its record in a pack: the pack's number in the
 * manifest's {@code packs} list, the record's byte offset and its length (a v1 chunk object,
 * header included). An all-zero blob is stored nowhere: {@link #zero(int)}.
 */
public record BlobPlace(int length, int pack, long offset, int recordLength) {
    /** Largest raw blob ({@code docs/formats/pack.md}): a record is read whole into memory. */
    public static final int MAX_LENGTH = 64 << 20;

    public BlobPlace {
        if (length < 1 || length > MAX_LENGTH) {
            throw new IllegalArgumentException("blob length must be within 1.." + MAX_LENGTH + ", got " + length);
        }
        if (pack == -1) {
            if (offset != 0 || recordLength != 0) {
                throw new IllegalArgumentException("an all-zero blob has no pack record");
            }
        } else if (pack < 0 || offset < 0 || recordLength < 1 || recordLength > MAX_LENGTH + (1 << 20)) {
            throw new IllegalArgumentException("blob record must have a pack number, offset and length >= 0, got pack "
                    + pack + " offset " + offset + " length " + recordLength);
        }
    }

    /** An all-zero blob of {@code length} bytes. */
    public static BlobPlace zero(int length) {
        return new BlobPlace(length, -1, 0, 0);
    }

    public boolean isZero() {
        return pack == -1;
    }
}
