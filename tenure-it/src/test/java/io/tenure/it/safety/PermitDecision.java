package io.tenure.it.safety;

/**
 * One decision of the fenced resource about a semaphore's grant, as it logs it to
 * {@code permits.jsonl} (one JSON object per line, in decision order); {@link PermitFence} says
 * what the decisions mean.
 *
 * @param key      the semaphore (and the resource it protects)
 * @param event    what was decided
 * @param token    the grant's fencing token
 * @param permits  the grant's permits
 * @param writer   the client process and the id of its operation ({@code c3/12345}); for
 *                 {@link Event#DISPLACE}, the writer whose write displaced the grant
 * @param atNanos  when the resource decided, on the shared monotonic clock
 * @param accepted WRITE: whether it was accepted; END: whether the grant was held until then;
 *                 DISPLACE: always true
 * @param reason   why a WRITE was refused, an END found nothing held, or a grant was displaced; null for an accepted WRITE or END
 */
public record PermitDecision(String key, Event event, long token, int permits, String writer, long atNanos, boolean accepted,
                             String reason) {

    public enum Event {
        /** A write under the grant. */
        WRITE,
        /** The holder said its work under the grant is over (it releases next). */
        END,
        /** The grant stopped holding because a write of a newer grant needed its permits. */
        DISPLACE
    }
}
