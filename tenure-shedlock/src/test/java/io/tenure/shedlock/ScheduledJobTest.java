package io.tenure.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.client.TenureClient;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskSchedulingAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * A Spring Boot application with a {@code @Scheduled} job under {@code @SchedulerLock}, run as two
 * nodes (two application contexts, each with its own client and provider) against one member,
 * as a user would write it: the runs never overlap, and each run's fencing token is higher than
 * the one before, whichever node ran it.
 */
class ScheduledJobTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    /** One run of the job: where, when (monotonic clock) and with which token. */
    record Run(String node, long startedAt, long endedAt, long fencingToken) {
    }

    /** What the two nodes' jobs record, shared by both contexts. */
    static final class Runs {
        private final List<Run> runs = new ArrayList<>();
        private final AtomicInteger running = new AtomicInteger();
        private final AtomicInteger overlaps = new AtomicInteger();

        void enter() {
            if (running.incrementAndGet() > 1) {
                overlaps.incrementAndGet();
            }
        }

        void exit(Run run) {
            running.decrementAndGet();
            synchronized (this) {
                runs.add(run);
            }
        }

        synchronized List<Run> snapshot() {
            return new ArrayList<>(runs);
        }

        synchronized long nodes() {
            return runs.stream().map(Run::node).distinct().count();
        }
    }

    /** The application each node runs. */
    @SpringBootConfiguration
    @ImportAutoConfiguration(TaskSchedulingAutoConfiguration.class) // Boot's scheduler, without scanning every auto-configuration
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "10s")
    static class NodeApplication {
        @Bean(destroyMethod = "close")
        TenureClient tenureClient(@Value("${tenure.endpoints}") List<String> endpoints, @Value("${node.name}") String node) {
            return TenureClient.builder().endpoints(endpoints).clientId(node).build();
        }

        @Bean
        LockProvider lockProvider(TenureClient tenureClient) {
            return new TenureLockProvider(tenureClient, "shedlock/");
        }

        @Bean
        ReportJob reportJob(Runs runs, @Value("${node.name}") String node) {
            return new ReportJob(runs, node);
        }
    }

    /**
     * The scheduled job: every 20 ms on each node, at most one run at a time across the nodes. Its
     * work takes 30 ms, longer than its lockAtLeastFor, so that each unlock releases at once.
     */
    static class ReportJob {
        private final Runs runs;
        private final String node;

        ReportJob(Runs runs, String node) {
            this.runs = runs;
            this.node = node;
        }

        @Scheduled(fixedDelay = 20)
        @SchedulerLock(name = "report", lockAtMostFor = "10s", lockAtLeastFor = "20ms")
        public void run() {
            runs.enter();
            long startedAt = System.nanoTime();
            long token = TenureLockProvider.currentFencingToken().orElseThrow();
            Await.untilTime(startedAt + TimeUnit.MILLISECONDS.toNanos(30)); // the job's work: long enough for another node to try
            runs.exit(new Run(node, startedAt, System.nanoTime(), token));
        }
    }

    @Test
    @SuppressWarnings("try") // the contexts run the job; the test only waits while they are open
    void twoNodesRunTheJobOneAtATimeWithIncreasingTokens() {
        Runs runs = new Runs();
        try (ConfigurableApplicationContext nodeA = node("node-a", runs);
             ConfigurableApplicationContext nodeB = node("node-b", runs)) {
            Await.until(() -> "at least 8 runs on both nodes, saw " + runs.snapshot(), Duration.ofSeconds(30),
                    () -> runs.snapshot().size() >= 8 && runs.nodes() == 2);
        }
        List<Run> seen = runs.snapshot();
        assertThat(runs.overlaps.get()).as("runs inside each other").isZero();
        seen.sort(Comparator.comparingLong(Run::startedAt));
        for (int i = 1; i < seen.size(); i++) {
            Run before = seen.get(i - 1);
            Run after = seen.get(i);
            assertThat(after.startedAt()).as("%s starts after %s ended", after, before).isGreaterThan(before.endedAt());
            assertThat(after.fencingToken()).as("%s has a higher token than %s", after, before).isGreaterThan(before.fencingToken());
        }
        assertThat(tenure.client().describe("shedlock/report").held()).as("both nodes stopped: nobody holds it").isFalse();
    }

    private static ConfigurableApplicationContext node(String name, Runs runs) {
        return new SpringApplicationBuilder(NodeApplication.class)
                .web(WebApplicationType.NONE)
                .bannerMode(org.springframework.boot.Banner.Mode.OFF)
                .logStartupInfo(false)
                .properties("tenure.endpoints=" + String.join(",", tenure.endpoints()), "node.name=" + name,
                        // a node that stops lets its run finish (and unlock) before its client closes
                        "spring.task.scheduling.shutdown.await-termination=true",
                        "spring.task.scheduling.shutdown.await-termination-period=5s")
                .initializers(context -> context.getBeanFactory().registerSingleton("runs", runs))
                .run();
    }
}
