package io.tenure.it.safety;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A client process's connection to the {@link FencedResource}; reconnects after a failure. Not thread-safe. */
final class ResourceClient implements AutoCloseable {
    /** A local server that is never faulted answers at once; this only bounds a broken connection. */
    private static final int TIMEOUT_MILLIS = 30_000;

    /** What a READ answered. */
    record Read(long value, long highest) {
    }

    private final String host;
    private final int port;
    private Socket socket;
    private BufferedReader in;
    private Writer out;

    ResourceClient(String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        this.host = endpoint.substring(0, colon);
        this.port = Integer.parseInt(endpoint.substring(colon + 1));
    }

    Read read(String key, String process, long token, long leaseId, long pauseMillis) throws IOException {
        String[] answer = call("READ " + key + " " + process + " " + token + " " + leaseId + " " + pauseMillis).split(" ");
        if (!answer[0].equals("VALUE")) {
            throw new IOException("resource answered " + String.join(" ", answer));
        }
        return new Read(Long.parseLong(answer[1]), Long.parseLong(answer[2]));
    }

    /** The refusal's text ({@code REFUSE highest}), or null when accepted. */
    String write(String key, long token, long value, String writer) throws IOException {
        String answer = call("WRITE " + key + " " + token + " " + value + " " + writer);
        if (answer.equals("ACCEPT")) {
            return null;
        }
        if (answer.startsWith("REFUSE")) {
            return answer;
        }
        throw new IOException("resource answered " + answer);
    }

    private String call(String request) throws IOException {
        try {
            if (socket == null) {
                socket = new Socket();
                socket.connect(new InetSocketAddress(host, port), TIMEOUT_MILLIS);
                socket.setSoTimeout(TIMEOUT_MILLIS);
                in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
                out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
            }
            out.write(request);
            out.write('\n');
            out.flush();
            String answer = in.readLine();
            if (answer == null) {
                throw new IOException("the resource closed the connection");
            }
            return answer;
        } catch (IOException e) {
            close();
            throw e;
        }
    }

    @Override
    public void close() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // reconnecting or ending anyway
            }
            socket = null;
        }
    }
}
