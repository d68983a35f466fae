package io.tenure.it.safety;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * F8's clock skew: the environment that starts a member under libfaketime (Debian package
 * {@code faketime}) with its clock offset by minutes to hours.
 *
 * <p>The library is preloaded into the member's own JVM ({@code LD_PRELOAD}, {@code FAKETIME})
 * rather than through the {@code faketime} wrapper command, which forks and would leave the
 * harness holding the wrapper's pid instead of the JVM's.
 *
 * <p>Both the wall clock and CLOCK_MONOTONIC are offset. Only the wall clock was wanted, but with
 * {@code FAKETIME_DONT_FAKE_MONOTONIC=1} libfaketime 0.9.10 shifts the deadlines of the JVM's
 * monotonic timed waits (measured on this machine: {@code LockSupport.parkNanos(200 ms)} and
 * {@code Object.wait(200)} return at once with a forward offset, so every timer thread spins).
 * With both clocks offset timed waits are exact, and the member's monotonic readings are its own
 * (only differences of them matter to it). So while skewed, the member's {@code System.nanoTime()}
 * is <em>not</em> on the run's shared clock: a checker must not compare nanos the member wrote
 * between F8's start and end with other processes' (nemesis.jsonl says which member and when).
 */
final class ClockSkew {
    /** Where Debian and others put the library; {@code -Dtenure.safety.libfaketime=PATH} overrides. */
    private static final List<String> LIBRARY_PATHS = List.of(
            "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
            "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
            "/usr/lib/faketime/libfaketime.so.1",
            "/usr/local/lib/faketime/libfaketime.so.1");
    /** Offsets from minutes to hours, both ways. */
    static final List<String> OFFSETS = List.of("+7m", "-25m", "+2h", "-3h", "+9h", "+45m");

    private ClockSkew() {
    }

    static Optional<Path> library() {
        String configured = System.getProperty("tenure.safety.libfaketime");
        if (configured != null) {
            return Optional.of(Path.of(configured)).filter(Files::isRegularFile);
        }
        return LIBRARY_PATHS.stream().map(Path::of).filter(Files::isRegularFile).findFirst();
    }

    /** The environment of a member whose clocks run {@code offset} (libfaketime's syntax, e.g. {@code +2h}) off. */
    static Map<String, String> environment(Path library, String offset) {
        return Map.of("LD_PRELOAD", library.toString(), "FAKETIME", offset, "FAKETIME_NO_CACHE", "0");
    }
}
