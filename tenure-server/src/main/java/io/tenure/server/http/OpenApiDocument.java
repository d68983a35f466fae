package io.tenure.server.http;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The OpenAPI 3.1 document of the HTTP API, served at {@value #PATH} without a credential, for
 * users who generate clients. It is a resource kept by hand beside the routes ({@code openapi.json}
 * next to this class), read once; {@code OpenApiContractTest} (tenure-testing) fails when a route
 * {@link HttpFront} serves is not in it, or a path in it is not served, and runs it through a
 * standard validator. Change the document with the route.
 */
final class OpenApiDocument {
    /** Where the document is served. */
    static final String PATH = "/v1/openapi.json";
    private static final byte[] JSON = load();

    private OpenApiDocument() {}

    /** The document, a fresh stream over the bytes read once. */
    static InputStream open() {
        return new ByteArrayInputStream(JSON);
    }

    private static byte[] load() {
        try (InputStream in = OpenApiDocument.class.getResourceAsStream("openapi.json")) {
            if (in == null) {
                throw new IllegalStateException("openapi.json is missing beside " + OpenApiDocument.class.getName() + " in the jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read openapi.json from the jar", e);
        }
    }
}
