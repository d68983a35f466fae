package io.tenure.server.raft;

import com.alipay.sofa.jraft.util.NamedThreadFactory;
import com.alipay.sofa.jraft.util.SPI;
import com.alipay.sofa.jraft.util.timer.DefaultRaftTimerFactory;
import com.alipay.sofa.jraft.util.timer.HashedWheelTimer;
import com.alipay.sofa.jraft.util.timer.Timer;

import java.util.concurrent.TimeUnit;

/**
 * JRaft's timers (election, vote, step-down, snapshot, read-index timeouts) on a wheel that
 * ticks every {@value #TICK_MS} ms instead of JRaft's 1 ms. Each of those timers is a thread
 * that wakes at every tick whether or not anything is due: at 1 ms, a member's four timers woke
 * 4,000 times a second, and on two shared cores a profile of three members under load found a
 * quarter of a core spent in those wake-ups (docs/benchmarks.md). The timeouts they run are
 * hundreds of milliseconds (an election timeout of 300 ms at least), so a few milliseconds late
 * changes nothing. JRaft picks this factory over its own by its higher {@link SPI} priority
 * ({@code META-INF/services/com.alipay.sofa.jraft.util.timer.RaftTimerFactory}).
 */
@SPI(priority = 100)
public final class JRaftTimers extends DefaultRaftTimerFactory {
    /** The wheel's tick: how late at most a timeout runs, and how often each timer thread wakes. */
    static final long TICK_MS = 10;

    @Override
    public Timer createTimer(String name) {
        return new HashedWheelTimer(new NamedThreadFactory(name, true), TICK_MS, TimeUnit.MILLISECONDS, 512);
    }
}
