package io.ferry.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ranks do not inherit the store credentials of the agent that starts them unless their job
 * passes some ({@code rank.pass-env}): a real {@code ferry run} (its agent in a child JVM whose
 * environment holds AWS_SECRET_ACCESS_KEY and KRB5CCNAME) starts a real rank, a shell script
 * that writes down its environment.
 */
class RankCredentialsIT {
    @TempDir
    Path tmp;

    /** The environment rank 0 of a job saw, as {@code env} printed it. */
    private List<String> rankEnvironment(String job, String... settings) throws Exception {
        Path script = tmp.resolve("rank.sh");
        if (!Files.exists(script)) {
            Files.writeString(script, "#!/bin/sh\nenv > \"$1/$FERRY_JOB.$FERRY_RANK.env\"\n");
            Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        }
        Path out = Files.createDirectories(tmp.resolve("out"));
        List<String> args = new ArrayList<>(List.of("run", "--job", job, "--ranks", "1", "--interval", "0",
                "--home", tmp.resolve("home").toString(), "--store", tmp.resolve("store").toString(), "--http", "off"));
        for (String s : settings) {
            args.addAll(List.of("--set", s));
        }
        args.addAll(List.of("--", script.toString(), out.toString()));
        ProcessBuilder pb = FerryProcess.builder(List.of("-Xmx256m"), args.toArray(String[]::new));
        pb.environment().put("AWS_SECRET_ACCESS_KEY", "the-agents-secret");
        pb.environment().put("KRB5CCNAME", "FILE:/tmp/krb5cc_the_agents");
        pb.environment().put("FERRY_S3_SECRET_ACCESS_KEY", "ferrys-own");
        FerryProcess.Result r = FerryProcess.run(pb);
        assertEquals(0, r.exit(), r.out() + r.err());
        return Files.readAllLines(out.resolve(job + ".0.env"));
    }

    @Test
    void ranksInheritNoStoreCredentialsUnlessTheJobPassesThem() throws Exception {
        List<String> plain = rankEnvironment("plain");
        assertTrue(plain.contains("FERRY_JOB=plain"), "the rank's environment was written: " + plain);
        assertFalse(plain.stream().anyMatch(l -> l.startsWith("AWS_SECRET_ACCESS_KEY=")), plain.toString());
        assertFalse(plain.stream().anyMatch(l -> l.startsWith("KRB5CCNAME=")), plain.toString());
        assertFalse(plain.stream().anyMatch(l -> l.startsWith("FERRY_S3_SECRET_ACCESS_KEY=")), plain.toString());

        List<String> asked = rankEnvironment("asked", "rank.pass-env=KRB5CCNAME");
        assertTrue(asked.contains("KRB5CCNAME=FILE:/tmp/krb5cc_the_agents"), asked.toString());
        assertFalse(asked.stream().anyMatch(l -> l.startsWith("AWS_SECRET_ACCESS_KEY=")),
                "only what the job names: " + asked);
        assertFalse(asked.stream().anyMatch(l -> l.startsWith("FERRY_S3_SECRET_ACCESS_KEY=")), asked.toString());
    }

    @Test
    void aJobPassingAVariableThatIsNotAStoreCredentialIsRefusedNamingIt() throws Exception {
        FerryProcess.Result r = FerryProcess.run("run", "--job", "typo", "--ranks", "1", "--interval", "0",
                "--home", tmp.resolve("home").toString(), "--store", tmp.resolve("store").toString(), "--http", "off",
                "--set", "rank.pass-env=KRB5CNAME", "--", "true");
        assertEquals(1, r.exit(), r.out() + r.err());
        assertTrue(r.err().contains("rank.pass-env") && r.err().contains("'KRB5CNAME' is not a store credential"),
                r.err());
    }
}
