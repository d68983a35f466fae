package io.tenure.server.raft;

import io.tenure.server.RaftEngine;
import io.tenure.server.ServerConfig;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Tells which Raft engine a running member speaks on its peer port, for a member that joins a
 * cluster without being told ({@code --raft-engine auto}, the default): Ratis serves gRPC, which
 * answers an HTTP/2 connection preface with its SETTINGS frame; JRaft's bolt closes a connection
 * that does not begin with its own protocol code, and with peer TLS it answers with a TLS alert.
 */
public final class EngineProbe {
    /** The client connection preface of HTTP/2 (RFC 9113, 3.4), then an empty SETTINGS frame. */
    private static final byte[] PREFACE;

    static {
        byte[] magic = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        byte[] settings = {0, 0, 0, 4, 0, 0, 0, 0, 0};
        PREFACE = new byte[magic.length + settings.length];
        System.arraycopy(magic, 0, PREFACE, 0, magic.length);
        System.arraycopy(settings, 0, PREFACE, magic.length, settings.length);
    }

    private static final int FRAME_HEADER = 9;
    private static final byte SETTINGS = 4;

    private EngineProbe() {
    }

    /**
     * The engine of the first of {@code addresses} (host:port peer addresses) that answers.
     *
     * @throws IOException naming every address tried when none answered
     */
    public static RaftEngine ofRunningMembers(List<String> addresses, Duration timeout) throws IOException {
        List<String> failures = new ArrayList<>();
        for (String address : addresses) {
            int timeoutMs = (int) timeout.toMillis();
            try (Socket socket = new Socket()) {
                try {
                    socket.connect(new InetSocketAddress(ServerConfig.hostOf(address), ServerConfig.portOf(address)), timeoutMs);
                } catch (IOException e) {
                    failures.add(address + " (" + e.getMessage() + ")");
                    continue;
                }
                socket.setSoTimeout(timeoutMs);
                byte[] head;
                try {
                    OutputStream out = socket.getOutputStream();
                    out.write(PREFACE);
                    out.flush();
                    InputStream in = socket.getInputStream();
                    head = in.readNBytes(FRAME_HEADER);
                } catch (SocketTimeoutException e) {
                    failures.add(address + " (no answer within " + timeoutMs + " ms)");
                    continue;
                } catch (IOException closedOnUs) {
                    // Reset by the peer: not HTTP/2.
                    return RaftEngine.JRAFT;
                }
                return head.length == FRAME_HEADER && head[3] == SETTINGS ? RaftEngine.RATIS : RaftEngine.JRAFT;
            }
        }
        throw new IOException("cannot tell which Raft engine the running members use: none answered on its peer port ("
                + String.join(", ", failures) + "); start this member with --raft-engine ratis or jraft, as they run");
    }
}
