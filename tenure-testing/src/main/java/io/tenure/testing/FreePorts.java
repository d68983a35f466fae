package io.tenure.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Distinct free ports on 127.0.0.1 for members a test starts, in this JVM ({@link TenureCluster})
 * or as child processes ({@link MemberProcess}).
 *
 * <p>The ports come from below the kernel's ephemeral range ({@code ip_local_port_range}, 32768
 * and up by default), handed out in turn from a random start. A port the kernel picked for us
 * (bind to port 0) lies in that range, and so does the local port of every outgoing connection:
 * between this call and the member's bind, a member already running could connect out from the
 * very port chosen for the next one (a CI run once lost a member's start to "Address already in
 * use" that way). Below the range only a socket bound to that port by name can take it, and this
 * JVM hands a port out again only after going through the whole span (12,768 ports by default).
 * Where the range starts too low to leave {@value #SPAN_WANTED} ports above {@value #LOWEST}, it
 * falls back to ports the kernel picks.
 *
 * <p>Every port is checked by binding it, and every socket stays open until all the ports of one
 * call are chosen. The ports are free when this returns, not reserved: a member should bind them
 * soon after.
 */
public final class FreePorts {
    /** The lowest port handed out. */
    static final int LOWEST = 20_000;
    /** Fewer ports than this below the ephemeral range and the kernel picks instead. */
    private static final int SPAN_WANTED = 4_000;
    /** The highest port handed out, or 0 to let the kernel pick. */
    static final int HIGHEST = highestBelowEphemeralRange();
    private static final AtomicInteger NEXT =
            new AtomicInteger(HIGHEST == 0 ? 0 : ThreadLocalRandom.current().nextInt(HIGHEST - LOWEST + 1));

    private FreePorts() {
    }

    /** {@code n} distinct free ports. */
    public static int[] take(int n) {
        return take(n, Set.of());
    }

    /** {@code n} distinct free ports, none of them in {@code besides} (ports chosen earlier for the same member). */
    public static int[] take(int n, Set<Integer> besides) {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[n];
            int chosen = 0;
            int tries = 0;
            while (chosen < n) {
                if (++tries > 10_000) {
                    throw new UncheckedIOException(new BindException("no free port on 127.0.0.1 between " + LOWEST + " and " + HIGHEST
                            + " after " + (tries - 1) + " tries"));
                }
                ServerSocket socket = bind(candidate());
                if (socket == null) {
                    continue; // taken by someone else: try the next
                }
                held.add(socket);
                if (!besides.contains(socket.getLocalPort())) {
                    ports[chosen++] = socket.getLocalPort();
                }
            }
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on 127.0.0.1: " + e.getMessage(), e);
        } finally {
            for (ServerSocket socket : held) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing a listening socket that accepted nothing does not fail in practice
                }
            }
        }
    }

    /** One free port. */
    public static int one() {
        return take(1)[0];
    }

    /** The next port to try: the next in turn below the ephemeral range, or 0 (the kernel picks). */
    private static int candidate() {
        if (HIGHEST == 0) {
            return 0;
        }
        return LOWEST + Math.floorMod(NEXT.getAndIncrement(), HIGHEST - LOWEST + 1);
    }

    /** A socket listening on {@code port} of 127.0.0.1, or null when the port is in use. */
    private static ServerSocket bind(int port) throws IOException {
        try {
            return new ServerSocket(port, 1, InetAddress.getLoopbackAddress());
        } catch (BindException inUse) {
            if (port == 0) {
                throw inUse;
            }
            return null;
        }
    }

    /** One below the start of the kernel's ephemeral range, or 0 when that leaves too little room above {@link #LOWEST}. */
    private static int highestBelowEphemeralRange() {
        int ephemeralStart = 32_768; // Linux's default, where the range cannot be read
        try {
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
            ephemeralStart = Integer.parseInt(range.split("\\s+")[0]);
        } catch (IOException | RuntimeException unreadable) {
            // not Linux, or no /proc: keep the default
        }
        int highest = Math.min(ephemeralStart - 1, 65_535);
        return highest - LOWEST + 1 >= SPAN_WANTED ? highest : 0;
    }
}
