package io.ferry.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;

/**
 * A test cluster's secrets for hosts beyond loopback: an owner-only users file for the embedded
 * broker's SASL/PLAIN, the agents' peer secret, and a configuration file ({@code FERRY_CONFIG})
 * naming both with the client login of one user. Every ferry process given {@link #config()}
 * serves or reaches that broker, and its agents serve and reach each other.
 */
record KafkaLogin(Path config, Path users, String user, String password) {
    static KafkaLogin create(Path dir) throws IOException {
        Files.createDirectories(dir);
        String password = "pw-" + Long.toHexString(new SecureRandom().nextLong());
        Path users = dir.resolve("kafka-users");
        Files.writeString(users, "# NAME:PASSWORD\nagent:" + password + "\n");
        Files.setPosixFilePermissions(users, PosixFilePermissions.fromString("rw-------"));
        Path peerSecret = dir.resolve("peer-secret");
        Files.writeString(peerSecret, Long.toHexString(new SecureRandom().nextLong())
                + Long.toHexString(new SecureRandom().nextLong()) + "\n");
        Files.setPosixFilePermissions(peerSecret, PosixFilePermissions.fromString("rw-------"));
        Path config = dir.resolve("ferry.conf");
        Files.writeString(config, "peer.secret-file = " + peerSecret + "\n"
                + "kafka.embedded.users-file = " + users + "\n"
                + "kafka.security.protocol = SASL_PLAINTEXT\nkafka.sasl.mechanism = PLAIN\n"
                + "kafka.sasl.jaas.config = " + jaas("agent", password) + "\n");
        Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-------"));
        return new KafkaLogin(config, users, "agent", password);
    }

    static String jaas(String user, String password) {
        return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user
                + "\" password=\"" + password + "\";";
    }

    /** {@code pb} with this setup's configuration file. */
    ProcessBuilder applyTo(ProcessBuilder pb) {
        pb.environment().put(Configuration.FILE_VARIABLE, config.toString());
        return pb;
    }
}
