package io.ferry.eventlog;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a login that is not an operator writes: its own topic {@code ferry.requests.<login>},
 * the only topic the broker lets it write (Kafka ACLs, {@link EmbeddedKafka} with operators
 * named). A coordinator relays what such a topic holds to the topic each record was meant for,
 * stamped with {@link #BY}, the login whose topic it came from: the broker vouches for it, since
 * only that login writes there and only operators write Ferry's other topics. A record with no
 * {@link #BY} was written by an operator (an agent, a coordinator, an administrator).
 *
 * <p>Why topics and not a field of the event: Kafka tells a consumer nothing of who wrote a
 * record, so a name in the record's value is whatever its writer chose.
 */
public final class RequestTopics {
    /** The prefix of every login's request topic. */
    public static final String PREFIX = "ferry.requests.";
    /** Every request topic, for a coordinator's subscription. */
    public static final Pattern ALL = Pattern.compile(Pattern.quote(PREFIX) + "[A-Za-z0-9._-]{1,64}");
    /** The header naming the topic a request is meant for ({@link KafkaLog#EVENTS}, ...). */
    public static final String TO = "ferry-to";
    /** The header a relayed record carries: the login that asked for it. */
    public static final String BY = "ferry-by";
    /** The topics a request may be meant for. */
    static final Set<String> RELAYED = Set.of(KafkaLog.EVENTS, KafkaLog.HEARTBEATS, KafkaLog.COMMANDS);

    private static final Pattern USERNAME = Pattern.compile("username=\"([^\"]*)\"");

    private RequestTopics() {
    }

    /** The request topic of {@code login}. */
    public static String of(String login) {
        return PREFIX + login;
    }

    /** The login whose request topic {@code topic} is. */
    public static String loginOf(String topic) {
        return topic.substring(PREFIX.length());
    }

    /**
     * The request topic this client must write through: its login's, when the log has one for it
     * (a login that is not an operator); null when it writes Ferry's topics itself.
     */
    static String routeFor(Set<String> topics, KafkaClientSettings client) {
        String jaas = client.settings().get("sasl.jaas.config");
        Matcher m = jaas == null ? null : USERNAME.matcher(jaas);
        if (m == null || !m.find()) {
            return null;
        }
        String topic = of(m.group(1));
        return topics.contains(topic) ? topic : null;
    }

    /** {@code r}, or the same record addressed to {@code requests} when the client writes through one. */
    static ProducerRecord<byte[], byte[]> route(ProducerRecord<byte[], byte[]> r, String requests) {
        if (requests == null || !RELAYED.contains(r.topic())) {
            return r;
        }
        ProducerRecord<byte[], byte[]> routed = new ProducerRecord<>(requests, r.key(), r.value());
        r.headers().forEach(h -> routed.headers().add(h));
        routed.headers().add(TO, r.topic().getBytes(StandardCharsets.UTF_8));
        return routed;
    }

    /** The topic a request is meant for, or null when it names none Ferry relays. */
    public static String to(ConsumerRecord<byte[], byte[]> r) {
        String to = text(r.headers().lastHeader(TO));
        return to != null && RELAYED.contains(to) ? to : null;
    }

    /** The login that asked for a relayed record; null for one an operator wrote itself. */
    public static String by(ConsumerRecord<byte[], byte[]> r) {
        return text(r.headers().lastHeader(BY));
    }

    /** A relayed record: {@code key} and {@code value} as asked, to {@code topic}, stamped with {@code login}. */
    static ProducerRecord<byte[], byte[]> relayed(String topic, byte[] key, byte[] value, String login) {
        ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, key, value);
        r.headers().add(BY, login.getBytes(StandardCharsets.UTF_8));
        return r;
    }

    private static String text(Header h) {
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
