package io.ferry.eventlog;

import org.apache.kafka.clients.admin.Admin;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Checks a topic Ferry found already there (a site's, or made by hand) against what the
 * coordinator needs of it: the coordinator's state is a fold over the whole events topic, so a
 * finite retention or compaction loses events for good. Each problem comes with the
 * {@code kafka-configs} command that fixes it.
 */
final class TopicRetention {
    private TopicRetention() {}

    /**
     * What about {@code topic}'s configuration would drop events the coordinator folds: a finite
     * retention (by time or size), or compaction (which keeps one event per job). Empty: none.
     */
    static List<String> problems(Admin admin, String topic, String bootstrap) throws ExecutionException, InterruptedException,
            TimeoutException {
        org.apache.kafka.common.config.ConfigResource r = new org.apache.kafka.common.config.ConfigResource(
                org.apache.kafka.common.config.ConfigResource.Type.TOPIC, topic);
        org.apache.kafka.clients.admin.Config c = admin.describeConfigs(List.of(r)).all().get(30, TimeUnit.SECONDS).get(r);
        List<String> out = new ArrayList<>();
        String fix = " (kafka-configs.sh --bootstrap-server " + bootstrap + " --alter --entity-type topics --entity-name "
                + topic + " --add-config ";
        for (String key : List.of("retention.ms", "retention.bytes")) {
            var e = c.get(key);
            if (e != null && !"-1".equals(e.value())) {
                out.add("topic " + topic + " has " + key + "=" + e.value() + ": the coordinator's state is a fold over"
                        + " the whole topic, so what it drops is lost for good; set " + key + "=-1" + fix + key + "=-1)");
            }
        }
        var policy = c.get("cleanup.policy");
        if (policy != null && policy.value().contains("compact")) {
            out.add("topic " + topic + " has cleanup.policy=" + policy.value() + ": compaction keeps one event per job;"
                    + " set cleanup.policy=delete" + fix + "cleanup.policy=delete)");
        }
        return List.copyOf(out);
    }
}
