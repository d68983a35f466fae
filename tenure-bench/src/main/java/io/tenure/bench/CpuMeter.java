package io.tenure.bench;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * The CPU time the members and the driver (this JVM: the SDK clients and the workload) spent in
 * the measured window, read from the operating system at its start and end. On two shared cores
 * a rate alone hides where the time went; CPU per operation shows it.
 */
final class CpuMeter {
    private final Members members;
    private final Thread meter;
    private volatile long membersAtStart = -1;
    private volatile long driverAtStart = -1;
    private volatile long membersAtEnd = -1;
    private volatile long driverAtEnd = -1;

    private CpuMeter(Members members, Window window) {
        this.members = members;
        this.meter = new Thread(() -> {
            waitUntil(window.start);
            membersAtStart = membersNanos();
            driverAtStart = driverNanos();
            waitUntil(window.end);
            membersAtEnd = membersNanos();
            driverAtEnd = driverNanos();
        }, "bench-cpu-meter");
        meter.setDaemon(true);
    }

    /** Reads the CPU times at the window's start and end, on a thread of its own. */
    static CpuMeter during(Members members, Window window) {
        CpuMeter cpu = new CpuMeter(members, window);
        cpu.meter.start();
        return cpu;
    }

    /**
     * Adds {@code member_cpu_us_per_op}, {@code driver_cpu_us_per_op}, {@code member_cores} and
     * {@code driver_cores} (CPU seconds per second of the window) to {@code extra}; nothing when
     * the window was not measured to its end.
     */
    void report(long ops, double seconds, Map<String, Object> extra) throws InterruptedException {
        meter.join(Duration.ofSeconds(5).toMillis());
        if (membersAtEnd < 0 || membersAtStart < 0 || ops <= 0) {
            return;
        }
        double memberNanos = membersAtEnd - membersAtStart;
        double driverNanos = driverAtEnd - driverAtStart;
        extra.put("member_cpu_us_per_op", round(memberNanos / 1e3 / ops));
        extra.put("driver_cpu_us_per_op", round(driverNanos / 1e3 / ops));
        extra.put("member_cores", round(memberNanos / 1e9 / seconds));
        extra.put("driver_cores", round(driverNanos / 1e9 / seconds));
    }

    private long membersNanos() {
        long sum = 0;
        for (int i = 0; i < members.size(); i++) {
            sum += cpuNanos(ProcessHandle.of(members.pid(i)).orElse(null));
        }
        return sum;
    }

    private static long driverNanos() {
        return cpuNanos(ProcessHandle.current());
    }

    private static long cpuNanos(ProcessHandle process) {
        if (process == null) {
            return 0;
        }
        return process.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
    }

    private static void waitUntil(long nanoTime) {
        for (long left = nanoTime - System.nanoTime(); left > 0; left = nanoTime - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    private static double round(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
