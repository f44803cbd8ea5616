package io.ferry.eventlog;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What each login of the embedded broker may do, where jobs have owners ({@link
 * EmbeddedAuth#owners()}): operators (and the broker's internal user) are Kafka super users; every
 * other login may read and describe Ferry's topics and write its own request topic
 * ({@link RequestTopics}), nothing else. Written at every start from the users file, in place of
 * what the log held before, so removing a login from the file removes its rights.
 */
final class BrokerAcls {
    /** Kafka's authorizer for KRaft: ACLs kept in the cluster's metadata. */
    static final String AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    /** How long a request topic keeps a request a coordinator has not relayed: a week. */
    private static final long REQUEST_RETENTION_MS = TimeUnit.DAYS.toMillis(7);

    private BrokerAcls() {
    }

    /** The broker settings that turn the authorizer on, {@code supers} (and {@code internal}) passing every check. */
    static void configure(Map<String, Object> props, String internal, Set<String> supers) {
        props.put("authorizer.class.name", AUTHORIZER);
        StringBuilder s = new StringBuilder("User:" + internal);
        supers.stream().sorted().forEach(u -> s.append(";User:").append(u));
        props.put("super.users", s.toString());
        props.put("allow.everyone.if.no.acl.found", "false");
    }

    /**
     * Makes each restricted login's request topic and its rights, through the broker's internal
     * listener, and removes the request topics of logins that are operators now, or gone: a client
     * whose login has one writes through it ({@link RequestTopics}). Without owners, only the latter.
     */
    static void apply(String localBootstrap, KafkaClientSettings internal, EmbeddedAuth auth) throws IOException {
        Set<String> restricted = auth.restricted();
        Map<String, Object> config = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, localBootstrap);
        try (Admin admin = Admin.create(internal.admin(config))) {
            if (auth.owners()) { // the authorizer runs only then
                admin.deleteAcls(List.of(AclBindingFilter.ANY)).all().get(30, TimeUnit.SECONDS);
            }
            Set<String> topics = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            List<String> stale = topics.stream().filter(t -> RequestTopics.ALL.matcher(t).matches()
                    && !restricted.contains(RequestTopics.loginOf(t))).toList();
            if (!stale.isEmpty()) {
                admin.deleteTopics(stale).all().get(30, TimeUnit.SECONDS);
            }
            List<NewTopic> missing = new ArrayList<>();
            List<AclBinding> acls = new ArrayList<>();
            for (String login : restricted) {
                String mine = RequestTopics.of(login);
                if (!topics.contains(mine)) {
                    // fsynced at each write, as the topics decisions rest on: an acknowledged request is relayed
                    missing.add(new NewTopic(mine, 1, (short) 1).configs(Map.of("retention.ms",
                            Long.toString(REQUEST_RETENTION_MS), "max.message.bytes",
                            Integer.toString(KafkaLog.MAX_RECORD_BYTES), "flush.messages", "1")));
                }
                ResourcePattern ferry = new ResourcePattern(ResourceType.TOPIC, "ferry.", PatternType.PREFIXED);
                for (AclOperation op : List.of(AclOperation.READ, AclOperation.DESCRIBE,
                        AclOperation.DESCRIBE_CONFIGS)) {
                    acls.add(allow(ferry, login, op));
                }
                acls.add(allow(new ResourcePattern(ResourceType.TOPIC, mine, PatternType.LITERAL), login,
                        AclOperation.WRITE));
                // a reader that resumes (committed offsets) names a group of its own login's prefix
                acls.add(allow(new ResourcePattern(ResourceType.GROUP, login + "-", PatternType.PREFIXED), login,
                        AclOperation.READ));
            }
            if (!missing.isEmpty()) {
                admin.createTopics(missing).all().get(30, TimeUnit.SECONDS);
            }
            // The broker's metadata follows the controller's a moment later: a client connecting once the broker
            // is started must find the request topics as they are now (it writes through its own if it has one).
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                Set<String> now = admin.listTopics().names().get(30, TimeUnit.SECONDS);
                if (now.stream().noneMatch(stale::contains)
                        && restricted.stream().allMatch(l -> now.contains(RequestTopics.of(l)))) {
                    break;
                }
                Thread.sleep(50);
            }
            if (!acls.isEmpty()) {
                admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
            }
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("cannot set the embedded broker's rights for " + restricted + ": "
                    + (e.getCause() != null ? e.getCause().getMessage() : e.toString()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted setting the embedded broker's rights", e);
        }
    }

    private static AclBinding allow(ResourcePattern on, String login, AclOperation op) {
        return new AclBinding(on, new AccessControlEntry("User:" + login, "*", op, AclPermissionType.ALLOW));
    }
}
