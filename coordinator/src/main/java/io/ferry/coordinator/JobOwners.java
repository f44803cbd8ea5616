package io.ferry.coordinator;

import java.util.Optional;

/**
 * Who may control a job, where the log's logins are operators and users ({@link
 * io.ferry.eventlog.RequestTopics}): an operator (a record with no requester) any job; a user the
 * jobs it submitted, and a new job of its own. A job an operator started, or one started before
 * jobs had owners, is the operators' alone. Judged on the fold, so a replay judges alike.
 */
final class JobOwners {
    private JobOwners() {
    }

    /**
     * Why login {@code by} may not do this to job {@code job} ({@code j}, null when unknown):
     * {@code starts} when it runs the job (a {@code JobStarted}). Empty when it may, and always
     * for an operator ({@code by} null).
     */
    static Optional<String> refuses(JobView j, String job, boolean starts, String by) {
        if (by == null) {
            return Optional.empty();
        }
        if (j == null || j.started == null) {
            return starts ? Optional.empty()
                    : Optional.of("login " + by + " asked about job " + job + ", which does not run");
        }
        if (j.owner == null) {
            return Optional.of("job " + job + " was started by an operator: login " + by + " may not control it");
        }
        if (!j.owner.equals(by)) {
            return Optional.of("job " + job + " belongs to login " + j.owner + ": login " + by + " may not control it");
        }
        return Optional.empty();
    }
}
