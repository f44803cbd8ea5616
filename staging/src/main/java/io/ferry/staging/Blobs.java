package io.ferry.staging;

import io.ferry.compression.ChunkFormat;
import io.ferry.compression.ChunkHeader;
import io.ferry.compression.CorruptChunkException;
import io.ferry.compression.Digests;
import io.ferry.model.BlobPlace;
import io.ferry.model.ChunkId;
import io.ferry.model.Manifest;
import io.ferry.staging.crypt.BlobSealer;
import io.ferry.staging.crypt.EncryptionKeyException;
import io.ferry.staging.crypt.Keys;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import javax.crypto.Mac;

/**
 * How a repository names blobs and writes their records: in the clear (the SHA-256 of the raw
 * bytes names a blob, its record is a v1 chunk object), or encrypted (HMAC-SHA256 under the
 * naming key names it, its record is that chunk object sealed by {@link BlobSealer}). Reading
 * takes both kinds of record whatever the configuration, by the record's magic, so a store may
 * hold images of both. Thread-safe.
 */
public final class Blobs {
    /** No key: blobs named by SHA-256, records in the clear. */
    public static final Blobs CLEAR = new Blobs(null);
    private final BlobSealer sealer;
    /** The current key's sealer and those of the previous keys, by key id: what opens a sealed record. */
    private final Map<String, BlobSealer> openers;
    private final ThreadLocal<byte[]> opened = ThreadLocal.withInitial(() -> new byte[0]);
    private final ThreadLocal<byte[]> raws = ThreadLocal.withInitial(() -> new byte[0]);

    private Blobs(BlobSealer sealer) {
        this.sealer = sealer;
        Map<String, BlobSealer> o = new HashMap<>();
        if (sealer != null) {
            o.put(sealer.keys().id(), sealer);
            sealer.keys().previous().forEach(k -> o.put(k.id(), new BlobSealer(k)));
        }
        this.openers = Map.copyOf(o);
    }

    /** Encrypted with {@code keys} if present, else {@link #CLEAR}. */
    public static Blobs of(Optional<Keys> keys) {
        return keys.map(k -> new Blobs(new BlobSealer(k))).orElse(CLEAR);
    }

    /** The configured keys, if any. */
    public Optional<Keys> keys() {
        return Optional.ofNullable(sealer).map(BlobSealer::keys);
    }

    /** What a manifest of a push records: the key id, or empty in the clear. */
    public String keyId() {
        return sealer == null ? "" : sealer.keys().id();
    }

    /** The name of the blob {@code raw[off, off + len)}. */
    public ChunkId name(byte[] raw, int off, int len) {
        return sealer == null ? ChunkId.of(Digests.sha256(raw, off, len)) : sealer.name(raw, off, len);
    }

    /** A blob's name computed as its bytes come, in order: a copy is checked as it is read. Not thread-safe. */
    public interface Namer {
        void update(ByteBuffer bytes);

        /** The name of the bytes fed so far. */
        ChunkId name();
    }

    /** A new {@link Namer}: SHA-256, or HMAC-SHA256 under the naming key. */
    public Namer namer() {
        return namer(keyId());
    }

    /**
     * A new {@link Namer} of the blobs of a manifest that records {@code keyId} (empty: in the
     * clear): the current key's or a previous one's. Fails in one line when no configured key has that id.
     */
    public Namer namer(String keyId) throws IllegalArgumentException {
        if (!keyId.isEmpty()) {
            BlobSealer s = openers.get(keyId);
            if (s == null) {
                throw new IllegalArgumentException(EncryptionKeyException.of("an image", keyId,
                        keys().orElse(null)).getMessage());
            }
            Mac mac = s.newMac();
            return new Namer() {
                public void update(ByteBuffer bytes) {
                    mac.update(bytes);
                }

                public ChunkId name() {
                    return ChunkId.of(mac.doFinal());
                }
            };
        }
        MessageDigest sha = Digests.newSha256();
        return new Namer() {
            public void update(ByteBuffer bytes) {
                sha.update(bytes);
            }

            public ChunkId name() {
                return ChunkId.of(sha.digest());
            }
        };
    }

    /** Size of a buffer that holds the record of any blob of {@code rawLength} bytes. */
    public int maxRecordLength(ChunkFormat format, int rawLength) {
        return format.maxObjectLength(rawLength) + (sealer == null ? 0 : BlobSealer.OVERHEAD);
    }

    /** Writes the record of blob {@code id}, {@code raw[off, off + len)}, into {@code out} at 0; returns its length. */
    public int encode(ChunkFormat format, ChunkId id, byte[] raw, int off, int len, byte[] out) {
        if (sealer == null) {
            return format.encode(raw, off, len, out);
        }
        byte[] plain = buffer(opened, format.maxObjectLength(len));
        return sealer.seal(id, plain, format.encode(raw, off, len, plain), out);
    }

    /**
     * Checks the record {@code rec[off, off + len)} of blob {@code id} and decodes it into {@code rawOut};
     * returns the raw length. Damage is a {@link CorruptChunkException} naming {@code what}; a sealed record
     * with no key or another key configured is an {@link EncryptionKeyException}, which is not damage.
     */
    public int decode(byte[] rec, int off, int len, ChunkId id, byte[] rawOut, String what)
            throws CorruptChunkException, EncryptionKeyException {
        if (!BlobSealer.isSealed(rec, off, len)) {
            return ChunkFormat.decode(rec, off, len, id.bytes(), rawOut, what);
        }
        BlobSealer s = opener(rec, off, what);
        byte[] plain = buffer(opened, len);
        int n = s.open(id, rec, off, len, plain, what);
        return decodeOpened(s, plain, n, id, rawOut, what);
    }

    /** The sealer of the key a sealed record names: the current key or a previous one. */
    private BlobSealer opener(byte[] rec, int off, String what) throws EncryptionKeyException {
        BlobSealer s = openers.get(BlobSealer.keyIdOf(rec, off));
        if (s == null) {
            throw EncryptionKeyException.of(what, BlobSealer.keyIdOf(rec, off), keys().orElse(null));
        }
        return s;
    }

    /**
     * {@link #decode} for a caller that wants only the verdict (a scrub): the raw bytes go to a buffer of this thread.
     */
    public void check(byte[] rec, int off, int len, ChunkId id, String what)
            throws CorruptChunkException, EncryptionKeyException {
        boolean sealed = BlobSealer.isSealed(rec, off, len);
        BlobSealer s = sealed ? opener(rec, off, what) : null;
        byte[] object = rec;
        int at = off;
        int n = len;
        if (sealed) {
            object = buffer(opened, len);
            at = 0;
            n = s.open(id, rec, off, len, object, what);
        }
        ChunkHeader h = ChunkFormat.header(object, at, n, what);
        if (h.rawLength() > BlobPlace.MAX_LENGTH) {
            throw new CorruptChunkException(what, "raw length " + h.rawLength() + " is too large");
        }
        byte[] raw = buffer(raws, h.rawLength());
        if (sealed) {
            decodeOpened(s, object, n, id, raw, what);
        } else {
            ChunkFormat.decode(rec, off, len, id.bytes(), raw, what);
        }
    }

    private static int decodeOpened(BlobSealer s, byte[] plain, int n, ChunkId id, byte[] rawOut, String what)
            throws CorruptChunkException {
        int raw = ChunkFormat.decodeUnnamed(plain, 0, n, rawOut, what);
        ChunkId actual = s.name(rawOut, 0, raw);
        if (!MessageDigest.isEqual(actual.bytes(), id.bytes())) {
            throw new CorruptChunkException(what, "HMAC-SHA256 mismatch: expected " + id + ", computed " + actual);
        }
        return raw;
    }

    /** Whether this configuration opens blobs of a manifest that records {@code keyId} (empty: in the clear). */
    public boolean opens(String keyId) {
        return keyId.isEmpty() || openers.containsKey(keyId);
    }

    /**
     * Fails in one line unless this configuration (its current key or a previous one) can open the blobs of {@code m}.
     */
    public void requireKeyOf(Manifest m, String what) throws EncryptionKeyException {
        if (m.encrypted() && !opens(m.keyId())) {
            throw EncryptionKeyException.of(what, m.keyId(), keys().orElse(null));
        }
    }

    private static byte[] buffer(ThreadLocal<byte[]> held, int length) {
        byte[] b = held.get();
        if (b.length < length) {
            b = new byte[length];
            held.set(b);
        }
        return b;
    }
}
