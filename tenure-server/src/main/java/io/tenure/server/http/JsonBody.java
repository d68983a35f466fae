package io.tenure.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.InputStream;

/**
 * A request body: one JSON object, read with a size bound, whose fields are taken with their
 * types checked. A missing or mistyped field fails with {@code invalid_argument} naming it;
 * a JSON {@code null} counts as missing. Unknown fields are ignored, so newer clients can send more.
 */
final class JsonBody {
    private final ObjectNode fields;
    /** Where this object sits in the request ("" for the body itself, "success[2].put." for a nested one): failures name fields with it. */
    private final String at;

    private JsonBody(ObjectNode fields) {
        this(fields, "");
    }

    private JsonBody(ObjectNode fields, String at) {
        this.fields = fields;
        this.at = at;
    }

    /** The field's name as a failure names it: with where this object sits in the request. */
    String named(String field) {
        return at + field;
    }

    /**
     * The objects of array {@code field}, in order; none when it is absent. Each is a body whose
     * failures name its fields as {@code field[i].name}.
     */
    java.util.List<JsonBody> optionalObjects(String field) {
        JsonNode node = present(field);
        if (node == null) {
            return java.util.List.of();
        }
        if (!node.isArray()) {
            throw Failure.invalid(named(field), named(field) + " must be an array of objects, got " + describe(node));
        }
        java.util.List<JsonBody> objects = new java.util.ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            if (!(node.get(i) instanceof ObjectNode object)) {
                throw Failure.invalid(named(field) + "[" + i + "]", named(field) + "[" + i + "] must be an object, got "
                        + describe(node.get(i)));
            }
            objects.add(new JsonBody(object, named(field) + "[" + i + "]."));
        }
        return objects;
    }

    /** The object {@code field}, or null when it is absent; its failures name its fields as {@code field.name}. */
    JsonBody optionalObject(String field) {
        JsonNode node = present(field);
        if (node == null) {
            return null;
        }
        if (!(node instanceof ObjectNode object)) {
            throw Failure.invalid(named(field), named(field) + " must be an object, got " + describe(node));
        }
        return new JsonBody(object, named(field) + ".");
    }

    /**
     * Reads at most {@code maxBytes}, refusing a larger body (by its Content-Length, before
     * reading, or while reading one sent in chunks) with {@code payload_too_large}.
     */
    static byte[] read(InputStream in, long contentLength, int maxBytes) throws IOException {
        if (contentLength > maxBytes) {
            throw tooLarge(contentLength + " bytes", maxBytes);
        }
        byte[] body = in.readNBytes(maxBytes + 1);
        if (body.length > maxBytes) {
            throw tooLarge("over " + maxBytes + " bytes", maxBytes);
        }
        return body;
    }

    private static Failure tooLarge(String size, int maxBytes) {
        return new Failure(ErrorCode.PAYLOAD_TOO_LARGE, null,
                "the request body is " + size + ", over this member's limit of " + maxBytes + " bytes");
    }

    static JsonBody parse(ObjectMapper json, byte[] body) {
        if (body.length == 0) {
            throw new Failure(ErrorCode.INVALID_JSON, null, "the request body is empty; send a JSON object");
        }
        JsonNode tree;
        try {
            tree = json.readTree(body);
        } catch (JsonProcessingException e) {
            throw new Failure(ErrorCode.INVALID_JSON, null, "the request body is not valid JSON: " + e.getOriginalMessage()
                    + " (line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ")");
        } catch (IOException e) {
            throw new Failure(ErrorCode.INVALID_JSON, null, "the request body could not be read: " + e.getMessage());
        }
        if (!(tree instanceof ObjectNode object)) {
            throw new Failure(ErrorCode.INVALID_JSON, null, "the request body must be a JSON object, got "
                    + (tree == null ? "nothing" : tree.getNodeType().toString().toLowerCase(java.util.Locale.ROOT)));
        }
        return new JsonBody(object);
    }

    String requiredString(String field) {
        String value = optionalString(field);
        if (value == null) {
            throw Failure.invalid(named(field), named(field) + " is required (a string)");
        }
        return value;
    }

    /** The string, or null when absent. */
    String optionalString(String field) {
        JsonNode node = present(field);
        if (node == null) {
            return null;
        }
        if (!node.isTextual()) {
            throw Failure.invalid(named(field), named(field) + " must be a string, got " + describe(node));
        }
        return node.textValue();
    }

    /**
     * The string when it is one of {@code choices}, {@code absent} when the field is missing;
     * anything else (another string, another type) is refused naming the field and the choices.
     */
    String optionalChoice(String field, String absent, String... choices) {
        JsonNode node = present(field);
        if (node == null) {
            return absent;
        }
        if (node.isTextual() && java.util.List.of(choices).contains(node.textValue())) {
            return node.textValue();
        }
        throw Failure.invalid(named(field), named(field) + " must be \"" + String.join("\" or \"", choices) + "\" (default \"" + absent
                + "\"), got " + describe(node));
    }

    boolean optionalBoolean(String field, boolean absent) {
        JsonNode node = present(field);
        if (node == null) {
            return absent;
        }
        if (!node.isBoolean()) {
            throw Failure.invalid(named(field), named(field) + " must be true or false, got " + describe(node));
        }
        return node.booleanValue();
    }

    long requiredLong(String field) {
        if (present(field) == null) {
            throw Failure.invalid(named(field), named(field) + " is required (an integer)");
        }
        return optionalLong(field, 0);
    }

    long optionalLong(String field, long absent) {
        JsonNode node = present(field);
        if (node == null) {
            return absent;
        }
        if (!node.isIntegralNumber() || !node.canConvertToLong()) {
            throw Failure.invalid(named(field), named(field) + " must be an integer, got " + describe(node));
        }
        return node.longValue();
    }

    /** A required integer that must be positive (a TTL, a lease id, a fencing token). */
    long requiredPositive(String field) {
        long value = requiredLong(field);
        if (value <= 0) {
            throw Failure.invalid(named(field), named(field) + " must be positive, got " + value);
        }
        return value;
    }

    /** An integer that must fit in 32 bits (a count the services take as an {@code int}); see {@link #requiredLong}. */
    int requiredInt(String field) {
        return fitted(field, requiredLong(field));
    }

    int optionalInt(String field, int absent) {
        return fitted(field, optionalLong(field, absent));
    }

    private int fitted(String field, long value) {
        if (value != (int) value) {
            throw Failure.invalid(named(field), named(field) + " must be an integer between " + Integer.MIN_VALUE + " and " + Integer.MAX_VALUE
                    + ", got " + value);
        }
        return (int) value;
    }

    /** Whether the field is sent (a JSON {@code null} counts as missing). */
    boolean has(String field) {
        return present(field) != null;
    }

    private JsonNode present(String field) {
        JsonNode node = fields.get(field);
        return node == null || node.isNull() ? null : node;
    }

    private static String describe(JsonNode node) {
        String text = node.toString();
        return node.getNodeType().toString().toLowerCase(java.util.Locale.ROOT) + " "
                + (text.length() > 40 ? text.substring(0, 40) + "..." : text);
    }
}
