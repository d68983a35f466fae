package io.tenure.server;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline, re-checking it every few milliseconds. */
public final class Await {
    private Await() {}

    public static void until(Duration limit, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not true within " + limit + ": " + what);
            }
            LockSupport.parkNanos(5_000_000);
        }
    }
}
