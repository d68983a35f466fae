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
        return refusalOf(call("WRITE " + key + " " + token + " " + value + " " + writer), "ACCEPT", "REFUSE");
    }

    /** A write under a semaphore's grant: the refusal's text ({@code REFUSE reason}), or null when accepted. */
    String permitWrite(String key, long token, int permits, String writer) throws IOException {
        return refusalOf(call("PWRITE " + key + " " + token + " " + permits + " " + writer), "ACCEPT", "REFUSE");
    }

    /** Ends the holding of a semaphore's grant: the resource's reason when it was not held ({@code NOTHELD reason}), or null. */
    String permitEnd(String key, long token, int permits, String writer) throws IOException {
        return refusalOf(call("PEND " + key + " " + token + " " + permits + " " + writer), "ENDED", "NOTHELD");
    }

    /** A write by an election's leader with its leadership's token: the refusal's text ({@code REFUSE reason}), or null when accepted. */
    String leaderWrite(String key, long token, String writer) throws IOException {
        return refusalOf(call("LWRITE " + key + " " + token + " " + writer), "ACCEPT", "REFUSE");
    }

    /** Ends the holding of a leadership: the resource's reason when it was not held ({@code NOTHELD reason}), or null. */
    String leaderEnd(String key, long token, String writer) throws IOException {
        return refusalOf(call("LEND " + key + " " + token + " " + writer), "ENDED", "NOTHELD");
    }

    /**
     * A write of {@code [start, end)} of {@code inode} under a grant of lock scopes holding {@code held}
     * ({@code start-end[,...]}) in {@code mode}: the refusal's text ({@code REFUSE reason}), or null when accepted.
     */
    String rangeWrite(long inode, long start, long end, String mode, long token, String writer, String held) throws IOException {
        return refusalOf(call("RWRITE " + inode + " " + start + " " + end + " " + mode + " " + token + " " + writer + " " + held),
                "ACCEPT", "REFUSE");
    }

    /** Ends the holding of a grant of byte ranges: the resource's reason when it was not held ({@code NOTHELD reason}), or null. */
    String rangeEnd(long inode, long start, long end, String mode, long token, String writer, String held) throws IOException {
        return refusalOf(call("REND " + inode + " " + start + " " + end + " " + mode + " " + token + " " + writer + " " + held),
                "ENDED", "NOTHELD");
    }

    private static String refusalOf(String answer, String yes, String no) throws IOException {
        if (answer.equals(yes)) {
            return null;
        }
        if (answer.startsWith(no)) {
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
