package io.tenure.client;

import io.tenure.proto.v1.LeaseGrantBatchResponse;
import io.tenure.proto.v1.LeaseGrantResponse;
import io.tenure.proto.v1.LeaseRevokeResponse;
import io.tenure.proto.v1.LockCancelResponse;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.proto.v1.UnlockResponse;

/** The leader a member named in an answer's header ({@link Endpoints#leaderNamed}). */
final class LeaderHint {
    private LeaderHint() {
    }

    /** The leader's client endpoint from the header of {@code response}, or "" when it names none. */
    static String of(Object response) {
        if (response instanceof LockResponse r) {
            return r.getHeader().getLeaderEndpoint();
        } else if (response instanceof UnlockResponse r) {
            return r.getHeader().getLeaderEndpoint();
        } else if (response instanceof TryLockResponse r) {
            return r.getHeader().getLeaderEndpoint();
        } else if (response instanceof LockCancelResponse r) {
            return r.getHeader().getLeaderEndpoint();
        } else if (response instanceof LeaseGrantResponse r) {
            return r.getHeader().getLeaderEndpoint();
        } else if (response instanceof LeaseGrantBatchResponse r) {
            return r.getHeader().getLeaderEndpoint();
        } else if (response instanceof LeaseRevokeResponse r) {
            return r.getHeader().getLeaderEndpoint();
        } else if (response instanceof StatusResponse r) {
            return r.getHeader().getLeaderEndpoint();
        }
        return "";
    }
}
