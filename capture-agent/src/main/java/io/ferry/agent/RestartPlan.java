package io.ferry.agent;

import io.ferry.agent.peer.PeerAuth;
import io.ferry.model.Command;
import io.ferry.model.Event;
import io.ferry.model.ImageRef;
import io.ferry.model.PeerAddresses;
import io.ferry.model.RankSet;
import io.ferry.staging.CommittedDigests;
import io.ferry.staging.LocalCache;
import io.ferry.staging.OpenedStore;
import io.ferry.staging.Staging;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/** A dry run of a restart on one node: the tier each of its ranks would come from, nothing copied. */
final class RestartPlan {
    private RestartPlan() {}

    /**
     * The plan {@code p} asks for, of the node {@code node} whose cache is {@code cacheDir}, the store opened with
     * the job's settings and the agent's {@code secrets}; a problem (no commit marker, the store away) in the event.
     */
    static Event.RestartPlanned of(Command.PlanRestart p, String node, Path cacheDir, Map<String, String> secrets,
                                   PeerAuth peerAuth) {
        Map<Integer, String> sources = new TreeMap<>();
        String problem = "";
        Map<String, String> settings = OpenedStore.withSecrets(p.store(), p.settings(), secrets);
        try (OpenedStore store = OpenedStore.open(p.store(), settings)) {
            LocalCache cache = Staging.localCache(cacheDir);
            CommittedDigests committed = store.pipeline().repository()
                    .committed(p.job(), p.generation())
                    .orElseThrow(() -> new IOException("generation " + p.generation() + " of " + p.job()
                            + " has no commit marker on " + p.store()));
            for (int r : RankSet.parse(p.ranks()).toList()) {
                sources.put(r, RestartSource.tier(store.pipeline(), cache,
                        new ImageRef(p.job(), p.generation(), r),
                        PeerAddresses.parse(p.peers().getOrDefault(r, "")), committed.manifestSha256(r),
                        peerAuth));
            }
        } catch (IOException | RuntimeException e) {
            problem = String.valueOf(e.getMessage());
        }
        return new Event.RestartPlanned(p.job(), p.generation(), node, p.request(), sources, problem);
    }
}
