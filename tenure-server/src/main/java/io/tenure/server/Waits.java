package io.tenure.server;

import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.WaitKey;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The one parking place of the member's calls that wait for the log to decide: a lock grant
 * today; a semaphore permit, a barrier or a blocking pop with the primitives to come. A call
 * parks under its {@link WaitKey} (resource and lease, not call: a client that re-sends its
 * request to another member finds the same wait in the replicated state), and is answered by:
 *
 * <ul>
 *   <li>an applied {@link Effect.Wake} for its key, and nothing else: the state decides, in log
 *       order, on the apply thread ({@link #applied});</li>
 *   <li>its primitive's acquire path ({@link Acquires}), which withdraws it through the log when
 *       its timeout passes (the withdrawal's own wake-up answers it) and forgets it when its
 *       caller goes away;</li>
 *   <li>{@link #handBack}: the member stops serving it (shutting down, or its state was replaced
 *       by an installed snapshot whose entries woke nobody here). The call gets UNAVAILABLE and
 *       its client re-sends it, keeping the wait's place in the queue.</li>
 * </ul>
 *
 * <p>A call is parked on the apply thread, by the answer of the command that queued it, before
 * any later command is applied: a wake-up cannot pass it by.
 */
public final class Waits {

    /** A parked call. Each method is called at most once per wake-up; a call completes once. */
    public interface Parked {
        /** The log decided: a grant, a withdrawal, or a refusal (the lease ended). */
        void woken(Result result);

        /** This member stops serving the call; the client should re-send it (another member, or later). */
        void handedBack(NotServingException reason);
    }

    private final Map<WaitKey, List<Parked>> parked = new ConcurrentHashMap<>();
    /** Set once the member shuts down: nothing parks any more. */
    private volatile String closedBecause;

    /**
     * Parks {@code call} under {@code key}. Once the member is shutting down the call is handed
     * back at once instead.
     *
     * @return false when it was handed back
     */
    public boolean park(WaitKey key, Parked call) {
        parked.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(call);
        String reason = closedBecause;
        if (reason != null && unpark(key, call)) {
            // Parked while handBackAll swept, or after: hand it back the same way.
            call.handedBack(new NotServingException(reason));
            return false;
        }
        return true;
    }

    /** Forgets a parked call (answered elsewhere, or its caller went away); false when it was not parked. */
    public boolean unpark(WaitKey key, Parked call) {
        boolean[] removed = new boolean[1];
        parked.computeIfPresent(key, (k, list) -> {
            removed[0] = list.remove(call);
            return list.isEmpty() ? null : list;
        });
        return removed[0];
    }

    /** Answers the calls that the effects of one applied command wake; on the apply thread. */
    public void applied(List<Effect> effects) {
        for (Effect effect : effects) {
            if (effect instanceof Effect.Wake wake) {
                List<Parked> calls = parked.remove(wake.key());
                if (calls != null) {
                    calls.forEach(call -> call.woken(wake.result()));
                }
            }
        }
    }

    /** Hands every parked call back with UNAVAILABLE; calls parked later still park. */
    public int handBack(String reason) {
        int answered = 0;
        NotServingException retryElsewhere = new NotServingException(reason);
        for (WaitKey key : List.copyOf(parked.keySet())) {
            List<Parked> calls = parked.remove(key);
            if (calls != null) {
                for (Parked call : calls) {
                    call.handedBack(retryElsewhere);
                    answered++;
                }
            }
        }
        return answered;
    }

    /**
     * The member is shutting down: hands back every parked call, and every call that would park
     * from now on, <em>without</em> withdrawing any wait from its queue. A grant applied here
     * afterwards finds no call and stays with its lease: the client receives it by re-sending.
     *
     * @return how many parked calls were answered
     */
    public int close(String reason) {
        closedBecause = reason;
        return handBack(reason);
    }

    /** How many calls are parked on this member. */
    public int count() {
        return parked.values().stream().mapToInt(List::size).sum();
    }
}
