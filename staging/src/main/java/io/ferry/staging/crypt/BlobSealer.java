package io.ferry.staging.crypt;

import io.ferry.compression.CorruptChunkException;
import io.ferry.model.ChunkId;

import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Names blobs by a keyed hash and seals their records with AES-256-GCM, as
 * {@code docs/formats/pack.md} ("Sealed records") lays them out:
 *
 * <pre>
 * magic "FRYE" | version 1 | algorithm 1 (AES-256-GCM) | reserved 0 (2) | key id (8) | nonce (12) |
 * ciphertext | tag (16)
 * </pre>
 *
 * The ciphertext is the blob's v1 chunk object (header, CRC32C, zstd or raw bytes), so an opened
 * record decodes as a clear one does. The associated data is the 28-byte record header followed
 * by the blob id: a record moved under another blob's name, or whose key id was altered, fails to
 * open. The nonce is 96 random bits per record: the data key seals at most a few billion records
 * in the life of a store (2^32 random nonces keep a collision below 2^-32, NIST SP 800-38D).
 * Thread-safe: each thread keeps its own {@link Cipher} and {@link Mac}.
 */
public final class BlobSealer {
    public static final int MAGIC = 0x46525945; // "FRYE": Ferry, encrypted
    public static final int VERSION = 1;
    public static final int AES_256_GCM = 1;
    public static final int HEADER = 28;
    public static final int NONCE = 12;
    public static final int TAG = 16;
    /** Bytes a sealed record adds to the record it seals. */
    public static final int OVERHEAD = HEADER + TAG;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Keys keys;
    private final ThreadLocal<Cipher> ciphers =
            ThreadLocal.withInitial(() -> instance(() -> Cipher.getInstance("AES/GCM/NoPadding")));
    private final ThreadLocal<Mac> macs;

    public BlobSealer(Keys keys) {
        this.keys = keys;
        this.macs = ThreadLocal.withInitial(() -> instance(() -> {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(keys.namingKey());
            return m;
        }));
    }

    public Keys keys() {
        return keys;
    }

    /** A new HMAC-SHA256 under the naming key, for a caller that names a blob piece by piece. */
    public Mac newMac() {
        try {
            return (Mac) macs.get().clone();
        } catch (CloneNotSupportedException e) {
            return instance(() -> {
                Mac m = Mac.getInstance("HmacSHA256");
                m.init(keys.namingKey());
                return m;
            });
        }
    }

    /** The name of the blob {@code raw[off, off + len)}: HMAC-SHA256 under the naming key. */
    public ChunkId name(byte[] raw, int off, int len) {
        Mac mac = macs.get();
        mac.update(raw, off, len);
        return ChunkId.of(mac.doFinal());
    }

    /** Whether {@code record[off..]} begins as a sealed record does (its magic). */
    public static boolean isSealed(byte[] record, int off, int len) {
        return len >= 4 && ByteBuffer.wrap(record, off, 4).getInt() == MAGIC;
    }

    /** The key id a sealed record names, in hex. */
    public static String keyIdOf(byte[] record, int off) {
        return HexFormat.of().formatHex(record, off + 8, off + 8 + Keys.ID_LENGTH);
    }

    /**
     * Seals the record {@code plain[0, len)} of blob {@code id} into {@code out} at 0, which must hold
     * {@code len + OVERHEAD} bytes; returns the sealed record's length.
     */
    public int seal(ChunkId id, byte[] plain, int len, byte[] out) {
        ByteBuffer h = ByteBuffer.wrap(out, 0, HEADER);
        h.putInt(MAGIC).put((byte) VERSION).put((byte) AES_256_GCM).putShort((short) 0).put(keys.idBytes());
        byte[] nonce = new byte[NONCE];
        RANDOM.nextBytes(nonce);
        h.put(nonce);
        try {
            Cipher c = ciphers.get();
            c.init(Cipher.ENCRYPT_MODE, keys.dataKey(), new GCMParameterSpec(TAG * 8, nonce));
            c.updateAAD(out, 0, HEADER);
            c.updateAAD(id.bytes());
            return HEADER + c.doFinal(plain, 0, len, out, HEADER);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-256-GCM failed on a sound key and buffer", e);
        }
    }

    /**
     * Opens the sealed record {@code record[off, off + len)} of blob {@code id} into {@code out} at 0
     * ({@code len - OVERHEAD} bytes); returns the opened record's length. A record sealed with another
     * key is an {@link EncryptionKeyException}; one that does not open (altered bytes, another blob's
     * record, a bad header) is a {@link CorruptChunkException} naming {@code what}.
     */
    public int open(ChunkId id, byte[] record, int off, int len, byte[] out, String what)
            throws CorruptChunkException, EncryptionKeyException {
        if (len < OVERHEAD + 1) {
            throw new CorruptChunkException(what,
                    "sealed record of " + len + " bytes is shorter than its header and tag");
        }
        ByteBuffer h = ByteBuffer.wrap(record, off, HEADER);
        if (h.getInt() != MAGIC || h.get() != VERSION || h.get() != AES_256_GCM || h.getShort() != 0) {
            throw new CorruptChunkException(what,
                    "sealed record header unknown (version, algorithm or reserved bytes)");
        }
        if (!keys.isId(record, off + 8)) {
            throw EncryptionKeyException.of(what, keyIdOf(record, off), keys);
        }
        try {
            Cipher c = ciphers.get();
            c.init(Cipher.DECRYPT_MODE, keys.dataKey(), new GCMParameterSpec(TAG * 8, record, off + 16, NONCE));
            c.updateAAD(record, off, HEADER);
            c.updateAAD(id.bytes());
            return c.doFinal(record, off + HEADER, len - HEADER, out, 0);
        } catch (AEADBadTagException e) {
            throw new CorruptChunkException(what,
                    "AES-GCM tag mismatch: the sealed record was altered or belongs to another blob");
        } catch (GeneralSecurityException e) {
            throw new CorruptChunkException(what, "sealed record does not open: " + e.getMessage());
        }
    }

    private interface Maker<T> {
        T make() throws GeneralSecurityException;
    }

    private static <T> T instance(Maker<T> m) {
        try {
            return m.make();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES/GCM/NoPadding and HmacSHA256 are part of every Java 17 runtime", e);
        }
    }
}
