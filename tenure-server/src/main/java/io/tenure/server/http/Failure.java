package io.tenure.server.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

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

    /** The error body every route answers: {@code {"error", "message", "field"?}} and the further fields. */
    ObjectNode body(ObjectMapper json) {
        ObjectNode body = json.createObjectNode();
        body.put("error", code.wire);
        body.put("message", getMessage());
        if (field != null) {
            body.put("field", field);
        }
        extra.forEach((name, value) -> body.set(name, json.valueToTree(value)));
        return body;
    }

    static Failure invalid(String field, String message) {
        return new Failure(ErrorCode.INVALID_ARGUMENT, field, message);
    }
}
