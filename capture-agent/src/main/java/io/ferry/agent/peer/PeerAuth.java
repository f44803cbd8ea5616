package io.ferry.agent.peer;

import io.ferry.model.OwnerOnly;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The agents' shared secret and the challenge-response that proves it on every peer
 * connection, both ways, before any image moves ({@code docs/formats/peer.md}): the server
 * sends a fresh nonce, the client answers with its own nonce and an HMAC-SHA256 over both, the
 * server answers with its own HMAC over both. Neither side sends the secret, and a recorded
 * exchange does not pass again (each side's nonce is fresh). It authenticates; it does not
 * encrypt: images still cross the network in clear. {@link #NONE}: no secret, no handshake (the
 * protocol as before). Immutable and thread-safe.
 */
public final class PeerAuth {
    /** The configuration key naming the secret's file. */
    public static final String KEY = "peer.secret-file";
    /** No secret: connections are neither challenged nor answer challenges. */
    public static final PeerAuth NONE = new PeerAuth(null);

    static final String MAGIC = "FERRY-PEER-AUTH/1";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final HexFormat HEX = HexFormat.of();
    private final byte[] secret;

    private PeerAuth(byte[] secret) {
        this.secret = secret;
    }

    /**
     * The secret in {@code file} (its content, trimmed): refused when the file is open to group or
     * others, or holds fewer than 16 characters (a secret that short is guessed).
     */
    public static PeerAuth fromFile(Path file) throws IOException {
        OwnerOnly.requirePrivate(file, KEY);
        if (Files.size(file) > 4096) {
            throw new IllegalArgumentException(KEY + " " + file + " is over 4 KiB: it should hold one secret");
        }
        String s = Files.readString(file, StandardCharsets.UTF_8).trim();
        if (s.length() < 16) {
            throw new IllegalArgumentException(KEY + " " + file + " must hold a secret of at least 16 characters"
                    + " (e.g. openssl rand -hex 32)");
        }
        return new PeerAuth(s.getBytes(StandardCharsets.UTF_8));
    }

    /** Whether connections must prove the secret. */
    public boolean required() {
        return secret != null;
    }

    /**
     * The server's side: challenges, checks the client's proof, proves itself; throws (after saying
     * ERR) on a bad proof.
     */
    void serve(InputStream in, OutputStream out) throws IOException {
        String serverNonce = nonce();
        PeerWire.writeLine(out, MAGIC + " CHALLENGE " + serverNonce);
        String line = PeerWire.readLine(in);
        String[] f = line.split(" ");
        if (f.length != 4 || !f[0].equals(MAGIC) || !f[1].equals("PROOF") || !f[2].matches("[0-9a-f]{64}")
                || !MessageDigest.isEqual(mac("client", serverNonce, f[2]).getBytes(StandardCharsets.US_ASCII),
                f[3].getBytes(StandardCharsets.US_ASCII))) {
            PeerWire.writeLine(out, "ERR peer authentication failed: this agent requires " + KEY);
            throw new IOException("refused: "
                    + (line.startsWith(MAGIC) ? "a wrong proof of " + KEY : "no proof of " + KEY));
        }
        PeerWire.writeLine(out, MAGIC + " OK " + mac("server", serverNonce, f[2]));
    }

    /** The client's side: answers the challenge and checks the server's proof, naming {@code peer} in errors. */
    void prove(InputStream in, OutputStream out, String peer) throws IOException {
        String challenge = PeerWire.readLine(in);
        String[] f = challenge.split(" ");
        if (f.length != 3 || !f[0].equals(MAGIC) || !f[1].equals("CHALLENGE") || !f[2].matches("[0-9a-f]{64}")) {
            throw new IOException(peer + " did not challenge this agent (it has no " + KEY + "?): '" + challenge + "'");
        }
        String clientNonce = nonce();
        PeerWire.writeLine(out, MAGIC + " PROOF " + clientNonce + " " + mac("client", f[2], clientNonce));
        String answer = PeerWire.readLine(in);
        String expected = MAGIC + " OK " + mac("server", f[2], clientNonce);
        if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII),
                answer.getBytes(StandardCharsets.US_ASCII))) {
            throw new IOException(peer + " refused this agent or did not prove " + KEY + ": "
                    + (answer.startsWith("ERR") ? answer : "a wrong proof"));
        }
    }

    /**
     * HMAC-SHA256 of "ferry-peer SIDE SERVER_NONCE CLIENT_NONCE": the side keeps one side's proof
     * from serving as the other's.
     */
    private String mac(String side, String serverNonce, String clientNonce) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(new SecretKeySpec(secret, "HmacSHA256"));
            return HEX.formatHex(m.doFinal(("ferry-peer " + side + " " + serverNonce + " " + clientNonce)
                    .getBytes(StandardCharsets.US_ASCII)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    private static String nonce() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return HEX.formatHex(b);
    }

    @Override
    public String toString() {
        return required() ? "PeerAuth[secret]" : "PeerAuth[none]";
    }
}
