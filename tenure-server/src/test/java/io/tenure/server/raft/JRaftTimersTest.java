package io.tenure.server.raft;

import static org.assertj.core.api.Assertions.assertThat;

import com.alipay.sofa.jraft.JRaftUtils;
import com.alipay.sofa.jraft.util.timer.Timer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** JRaft's nodes take their timers from Tenure's factory, whose wheel ticks every 10 ms, and its timeouts still run. */
class JRaftTimersTest {
    @Test
    void jraftUsesTenuresTimerFactory() {
        assertThat(JRaftUtils.raftTimerFactory()).isInstanceOf(JRaftTimers.class);
        assertThat(com.alipay.sofa.jraft.core.NodeImpl.TIMER_FACTORY).isInstanceOf(JRaftTimers.class);
    }

    @Test
    void aTimeoutRunsNoSoonerThanAskedOnTheCoarseWheel() throws InterruptedException {
        Timer timer = new JRaftTimers().createTimer("tenure-test-timer");
        try {
            CountDownLatch ran = new CountDownLatch(1);
            long[] ranAfterNanos = new long[1];
            long start = System.nanoTime();
            timer.newTimeout(timeout -> {
                ranAfterNanos[0] = System.nanoTime() - start;
                ran.countDown();
            }, 30, TimeUnit.MILLISECONDS);
            assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(ranAfterNanos[0]).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(30));
        } finally {
            timer.stop();
        }
    }
}
