package io.ferry.cli;

import io.ferry.eventlog.EmbeddedKafka;

import java.nio.file.Path;

/**
 * A Kafka broker alone in its own JVM (the KRaft broker Ferry embeds), standing for a site's
 * separate Kafka in the crash harness: {@code BrokerProcess DATA_DIR HOST:PORT}. Prints
 * "broker serving" once clients can connect; runs until killed.
 */
public final class BrokerProcess {
    private BrokerProcess() {}

    public static void main(String[] args) throws Exception {
        EmbeddedKafka kafka = EmbeddedKafka.start(Path.of(args[0]), EmbeddedKafka.Options.defaults().listen(args[1]));
        System.out.println("broker serving " + kafka.bootstrapServers());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
