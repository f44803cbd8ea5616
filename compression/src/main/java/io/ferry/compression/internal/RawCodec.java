package io.ferry.compression.internal;

import io.ferry.compression.Codec;
import io.ferry.compression.Codecs;

/** The identity codec: chunks whose compression would not pay are stored as they are. */
public final class RawCodec implements Codec {
    @Override
    public int id() {
        return Codecs.RAW_ID;
    }

    @Override
    public String name() {
        return "raw";
    }

    @Override
    public int maxCompressedLength(int rawLength) {
        return rawLength;
    }

    @Override
    public int compress(byte[] src, int srcOff, int len, byte[] dst, int dstOff) {
        System.arraycopy(src, srcOff, dst, dstOff, len);
        return len;
    }

    @Override
    public void decompress(byte[] src, int srcOff, int len, byte[] dst, int dstOff, int rawLength) {
        if (len != rawLength) {
            throw new IllegalArgumentException("raw chunk stores " + len + " bytes, header says " + rawLength);
        }
        System.arraycopy(src, srcOff, dst, dstOff, len);
    }
}
