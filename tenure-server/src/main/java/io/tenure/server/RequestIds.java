package io.tenure.server;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.MDC;

/**
 * The request id that ties the log lines of one client request together. A front end puts it
 * in the SLF4J MDC under {@value #MDC_KEY} while it calls into the member (taken from the
 * client's {@code x-request-id}, or made here); the member's parts read it when the request
 * arrives, since its outcome is logged later, on another thread.
 */
public final class RequestIds {
    public static final String MDC_KEY = "request_id";
    /** The gRPC metadata key and HTTP header a client may set. */
    public static final String HEADER = "x-request-id";
    private static final int MAX_LENGTH = 128;

    private RequestIds() {
    }

    /** The current request's id, or {@code -} outside a request (the leader's own expiries). */
    public static String current() {
        String id = MDC.get(MDC_KEY);
        return id == null ? "-" : id;
    }

    /** The client's id if it is usable in a log line (printable ASCII without spaces or quotes, at most 128), else a fresh one. */
    public static String accept(String fromClient) {
        if (fromClient != null && !fromClient.isEmpty() && fromClient.length() <= MAX_LENGTH
                && fromClient.chars().allMatch(c -> c > 32 && c < 127 && c != '"')) {
            return fromClient;
        }
        return fresh();
    }

    /** Runs {@code call} with {@code requestId} in the MDC, restoring what was there before. */
    public static <T> T traced(String requestId, java.util.function.Supplier<T> call) {
        String before = MDC.get(MDC_KEY);
        MDC.put(MDC_KEY, requestId);
        try {
            return call.get();
        } finally {
            if (before == null) {
                MDC.remove(MDC_KEY);
            } else {
                MDC.put(MDC_KEY, before);
            }
        }
    }

    /** 16 random hex digits. */
    public static String fresh() {
        return HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    }
}
