package io.tenure.core.kernel;

import io.tenure.core.watch.EventLog;
import io.tenure.core.watch.WatchEvent;

import java.util.ArrayList;
import java.util.List;

/**
 * What a primitive may use while it applies a command: the command's log position, stamps for
 * fencing tokens and revisions, the watch event log, the wake-ups of parked waits, and the lease
 * table. One per state, reset for every command.
 *
 * <p><b>Stamps.</b> Every grant and every watch event gets a stamp: the log position of the
 * command that caused it, or, when one command causes several (a lease that ends holding three
 * locks hands all three over), the next number after the previous stamp. Log positions of
 * consecutive commands are far apart (the server packs the Raft index with the command's slot in
 * its entry), so stamps are unique, strictly increasing, and equal to the log position in the
 * common case. A fencing token is the stamp of its grant, also after a hand-off or an expiry (I2).
 */
public final class ApplyContext {
    private final Leases leases;
    private final EventLog events;
    private long position;
    private long lastStamp;
    private List<Effect> effects;

    ApplyContext(Leases leases, EventLog events) {
        this.leases = leases;
        this.events = events;
    }

    /** The log position of the command being applied. */
    public long position() {
        return position;
    }

    /** A new stamp: a fencing token or a revision, larger than every one before. */
    public long stamp() {
        lastStamp = Math.max(position, lastStamp + 1);
        return lastStamp;
    }

    /** Appends a change to the event log and delivers it to the watches. */
    public void emit(WatchEvent event) {
        events.append(event);
        effects.add(new Effect.Watched(event));
    }

    /** Answers the calls parked on {@code wait} with {@code result} (see {@link Effect.Wake}). */
    public void wake(WaitKey wait, Result result) {
        effects.add(new Effect.Wake(wait, result));
    }

    /** The lease table, to check a lease is alive and to name its client. */
    public Leases leases() {
        return leases;
    }

    // ---- driven by the state ---------------------------------------------------------------

    void begin(long position) {
        this.position = position;
        this.effects = new ArrayList<>(0);
    }

    List<Effect> end() {
        List<Effect> out = effects;
        effects = null;
        return out;
    }

    long lastStamp() {
        return lastStamp;
    }

    void restoreLastStamp(long lastStamp) {
        this.lastStamp = lastStamp;
    }
}
