package io.tenure.server.security;

import io.tenure.testing.TenureCluster;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** The text protocol as a test speaks it: a connection to a member, and one request answered by one line. */
final class TextLines {
    private TextLines() {}

    /** A connection to member {@code index}'s text port, reads timing out after 10 s. */
    static Socket open(TenureCluster cluster, int index) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", cluster.textPort(index)), 5_000);
        socket.setSoTimeout(10_000);
        return socket;
    }

    /** Sends one request (three lines) and reads its answer line; empty when the member closed the connection. */
    static String call(Socket socket, String command, String key, String arg) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write((command + "\n" + key + "\n" + arg + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = socket.getInputStream().read()) != -1 && c != '\n') {
            line.append((char) c);
        }
        return line.toString();
    }
}
