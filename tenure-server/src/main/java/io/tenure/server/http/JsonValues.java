package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Bytes in JSON, as the routes that store them (key-value, lists, signals' payloads) send
 * and answer them: a request sends {@code "<field>"}, a string stored as UTF-8, or
 * {@code "<field>_base64"}, any bytes in standard base64, never both; an answer carries
 * {@code "value"} when the bytes are valid UTF-8 and {@code "value_base64"} otherwise.
 */
final class JsonValues {
    private JsonValues() {}

    /** The bytes sent as {@code field} or {@code field_base64}; null when neither is sent and they are optional. */
    static byte[] read(JsonBody body, String field, boolean required) {
        String text = body.optionalString(field);
        String base64 = body.optionalString(field + "_base64");
        String named = body.named(field);
        if (text != null && base64 != null) {
            throw Failure.invalid(named, "send " + named + " (a UTF-8 string) or " + named + "_base64 (any bytes), not both");
        }
        if (text != null) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        if (base64 != null) {
            try {
                return Base64.getDecoder().decode(base64);
            } catch (IllegalArgumentException e) {
                throw Failure.invalid(named + "_base64", named + "_base64 must be standard base64: " + e.getMessage());
            }
        }
        if (required) {
            throw Failure.invalid(named, named + " is required (a UTF-8 string), or " + named + "_base64 (any bytes in base64)");
        }
        return null;
    }

    /** Puts {@code "value"} when the bytes are valid UTF-8, {@code "value_base64"} otherwise. */
    static void put(ObjectNode json, byte[] value) {
        try {
            String text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(value)).toString();
            json.put("value", text);
        } catch (CharacterCodingException e) {
            json.put("value_base64", Base64.getEncoder().encodeToString(value));
        }
    }
}
