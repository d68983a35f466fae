package io.tenure.server;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/** Distinct free ports on 127.0.0.1 for members started by a test. */
public final class FreePorts {
    private FreePorts() {
    }

    /**
     * {@code n} distinct ports. Every socket stays open until all are chosen, so the kernel cannot
     * hand the same port out twice (closing each at once let two members be given one port).
     */
    public static int[] take(int n) throws IOException {
        List<ServerSocket> held = new ArrayList<>();
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(socket);
                ports[i] = socket.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket socket : held) {
                socket.close();
            }
        }
    }
}
