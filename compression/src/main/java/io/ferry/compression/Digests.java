package io.ferry.compression;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** SHA-256 helpers; one {@link MessageDigest} per thread. */
public final class Digests {
    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(Digests::newSha256);

    private Digests() {}

    public static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    public static byte[] sha256(byte[] b, int off, int len) {
        MessageDigest md = SHA256.get();
        md.reset();
        md.update(b, off, len);
        return md.digest();
    }

    public static String sha256Hex(byte[] b) {
        return hex(sha256(b, 0, b.length));
    }

    public static String hex(byte[] digest) {
        return HexFormat.of().formatHex(digest);
    }
}
