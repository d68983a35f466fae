package io.tenure.jraft;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds or a deadline passes. */
final class Await {
  private static final long POLL_MILLIS = 1;

  private Await() {}

  static void until(Duration timeout, String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("not within " + timeout + ": " + what);
      }
      Thread.sleep(POLL_MILLIS);
    }
  }
}
