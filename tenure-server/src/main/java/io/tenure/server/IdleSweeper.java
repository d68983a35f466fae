package io.tenure.server;

import io.tenure.core.Limits;
import io.tenure.core.TenureState;
import io.tenure.core.idle.IdleDeadlines;
import io.tenure.core.kernel.IdleForget;
import io.tenure.core.kernel.IdleName;
import io.tenure.core.kernel.Result;
import io.tenure.server.raft.Proposer;
import io.tenure.server.raft.TenureStateMachine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * Forgets idle resources (a semaphore nobody holds or waits for keeps its limit until then) after
 * the member's idle time, through the log. Every member notes, once a sweep, the names that became
 * idle since the last sweep and when it first saw each ({@link IdleDeadlines}); the ready leader
 * proposes one {@link IdleForget} for those idle long enough, each conditional on its being idle
 * since the same position, as a lease's expiry is conditional on its renewal. One forget at a time.
 */
public final class IdleSweeper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(IdleSweeper.class);
    /** How often idle names are noted and forgotten: an idle resource goes at most this late. */
    static final long SWEEP_MILLIS = 1_000;
    /** Idle names read from the state at once, so that a sweep holds the state's read lock briefly. */
    private static final int READ_BATCH = 10_000;

    private final Proposer proposer;
    private final TenureStateMachine stateMachine;
    private final BooleanSupplier leading;
    private final LongSupplier nanoClock;
    private final IdleDeadlines deadlines;
    private final ScheduledFuture<?> loop;
    /** The state last swept: another one means a snapshot was installed. Only the sweep thread touches these. */
    private TenureState swept;
    private volatile boolean forgetting;

    public IdleSweeper(Proposer proposer, TenureStateMachine stateMachine, BooleanSupplier leading, LongSupplier nanoClock,
                       Duration idleTime, ScheduledExecutorService timer) {
        this.proposer = proposer;
        this.stateMachine = stateMachine;
        this.leading = leading;
        this.nanoClock = nanoClock;
        this.deadlines = new IdleDeadlines(idleTime.toNanos());
        this.loop = timer.scheduleWithFixedDelay(this::sweep, SWEEP_MILLIS, SWEEP_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void sweep() {
        try {
            long now = nanoClock.getAsLong();
            List<IdleName> idle = new ArrayList<>();
            stateMachine.read(state -> {
                if (state != swept) {
                    swept = state;
                    deadlines.rescan();
                }
                List<IdleName> newer;
                do {
                    newer = state.idleAfter(deadlines.lastSince(), READ_BATCH);
                    deadlines.saw(newer, now);
                } while (newer.size() == READ_BATCH);
                List<IdleName> due = deadlines.due(now, Limits.MAX_BATCH);
                List<IdleName> used = new ArrayList<>();
                for (IdleName name : due) {
                    (state.stillIdle(name) ? idle : used).add(name);
                }
                deadlines.drop(used);
                return null;
            });
            if (idle.isEmpty() || forgetting || !leading.getAsBoolean()) {
                return;
            }
            forgetting = true;
            proposer.propose(new IdleForget(idle)).whenComplete((applied, error) -> {
                forgetting = false;
                if (error != null) {
                    LOG.debug("event=idle_forget_not_committed names={} reason=\"{}\"", idle.size(), error.getMessage());
                } else if (applied.result() instanceof Result.Forgotten forgotten) {
                    LOG.debug("event=idle_forgotten forgotten={} used_again={}", forgotten.forgotten(), forgotten.stayed());
                }
            });
        } catch (RuntimeException e) {
            forgetting = false;
            LOG.warn("event=idle_sweep_error reason=\"{}\"", e.toString());
        }
    }

    /** Idle names this member knows of, forgotten or not yet. */
    public int known() {
        return deadlines.size();
    }

    @Override
    public void close() {
        loop.cancel(false);
    }
}
