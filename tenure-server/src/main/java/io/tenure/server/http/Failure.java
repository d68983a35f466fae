package io.tenure.server.http;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A request answered with an error body: its code, the request field at fault (or null), a
 * message, and any further fields of the body (the 409 {@code held} answer's holder and retry hint).
 */
final class Failure extends RuntimeException {
    final ErrorCode code;
    final String field;
    final Map<String, Object> extra;

    Failure(ErrorCode code, String field, String message) {
        this(code, field, message, Map.of());
    }

    Failure(ErrorCode code, String field, String message, Map<String, Object> extra) {
        super(message, null, false, false);
        this.code = code;
        this.field = field;
        this.extra = Collections.unmodifiableMap(new LinkedHashMap<>(extra));
    }

    static Failure invalid(String field, String message) {
        return new Failure(ErrorCode.INVALID_ARGUMENT, field, message);
    }
}
