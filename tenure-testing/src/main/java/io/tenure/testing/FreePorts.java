package io.tenure.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Distinct free ports on 127.0.0.1 for members a test starts, in this JVM ({@link TenureCluster})
 * or as child processes ({@link MemberProcess}).
 *
 * <p>Every socket stays open until all the ports of one call are chosen, so the kernel cannot hand
 * the same port out twice (closing each at once let two members be given one port). The ports are
 * free when this returns, not reserved: a member should bind them soon after.
 */
public final class FreePorts {
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
            while (chosen < n) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
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
}
