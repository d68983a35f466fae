package io.tenure.core.barrier;

import java.util.List;

/**
 * A double barrier: how many parties enter together, who waits to enter (in arrival order), who
 * is inside, and who of the generation inside has left, waiting for the rest or not.
 *
 * @param entering       leases waiting to enter, in arrival order; {@code at} is the position of their enter
 * @param inside         the parties of the generation inside that have not left; {@code at} is {@code revision}
 * @param leaving        parties that have left and wait for the others; {@code at} is the position of their leave
 * @param left           parties that have left and do not wait; {@code at} is the position of their leave
 * @param revision       the revision at which the generation inside entered; 0 when none is
 * @param createRevision the revision of the enter that created it
 */
public record DoubleBarrierView(String key, int parties, List<Party> entering, List<Party> inside, List<Party> leaving, List<Party> left,
                                long revision, long createRevision) {

    /** A lease at the double barrier. */
    public record Party(long leaseId, String clientId, long at) {}
}
