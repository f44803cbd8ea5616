package io.ferry.model;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LaunchSpecTest {
    private static Map<String, String> agentEnvironment() {
        Map<String, String> env = new HashMap<>();
        for (String k : List.of("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                "AWS_SHARED_CREDENTIALS_FILE", "AZURE_STORAGE_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "KRB5CCNAME",
                "KRB5_KTNAME", "KRB5_CLIENT_KTNAME", "HADOOP_TOKEN_FILE_LOCATION", "HADOOP_TOKEN",
                "FERRY_S3_SECRET_ACCESS_KEY", "FERRY_KAFKA_SASL_JAAS_CONFIG", "PATH", "HOME", "FERRY_HOME",
                "KRB5_CONFIG")) {
            env.put(k, "v-" + k);
        }
        return env;
    }

    @Test
    void ranksGetNoStoreCredentialsByDefault() {
        Map<String, String> env = agentEnvironment();
        LaunchSpec.removeSecrets(env);
        assertEquals(Set.of("PATH", "HOME", "FERRY_HOME", "KRB5_CONFIG"), env.keySet());
    }

    @Test
    void aJobPassesOnlyTheStoreCredentialsItNamesAndNeverFerrysOwn() {
        Map<String, String> env = agentEnvironment();
        LaunchSpec.removeSecrets(env, LaunchSpec.parsePassEnv(" AWS_PROFILE, KRB5CCNAME ,"));
        assertEquals(Set.of("PATH", "HOME", "FERRY_HOME", "KRB5_CONFIG", "AWS_PROFILE", "KRB5CCNAME"), env.keySet());
    }

    @Test
    void aNameThatIsNotAWithheldCredentialIsRefusedNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LaunchSpec.parsePassEnv("AWS_PROFILE,FERRY_S3_SECRET_ACCESS_KEY"));
        assertTrue(e.getMessage().contains("'FERRY_S3_SECRET_ACCESS_KEY' is not a store credential"), e.getMessage());
        assertEquals(List.of(), LaunchSpec.parsePassEnv(""));
    }
}
