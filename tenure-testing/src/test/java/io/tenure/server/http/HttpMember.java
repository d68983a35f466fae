package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tenure.core.kernel.LeaseView;
import io.tenure.server.ServerConfig;
import io.tenure.server.TenureServer;
import io.tenure.testing.TenureCluster;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * An HTTP client for the JSON API of a real member: member 0 of a {@link TenureCluster}, either one
 * started here and closed with this ({@link #start}) or one a {@link io.tenure.testing.TenureExtension}
 * runs for the test class ({@link #of}).
 */
final class HttpMember implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();

    private final Supplier<TenureCluster> cluster;
    private final boolean owned;
    final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    private HttpMember(Supplier<TenureCluster> cluster, boolean owned) {
        this.cluster = cluster;
        this.owned = owned;
    }

    /** A client of the member that {@code members} runs (looked up at each use, so it may start later). */
    static HttpMember of(Supplier<TenureCluster> members) {
        return new HttpMember(members, false);
    }

    /** Starts one member keeping its data under {@code dataDir}; {@link #close()} stops it. */
    static HttpMember start(Path dataDir) {
        return start(dataDir, c -> c);
    }

    /** As {@link #start(Path)}, with the member's settings changed by {@code config}. */
    static HttpMember start(Path dataDir, UnaryOperator<ServerConfig> config) {
        return start(TenureCluster.builder().dataDir(dataDir).config(config));
    }

    /** Starts what {@code members} describes and talks to its first member; {@link #close()} stops them. */
    static HttpMember start(TenureCluster.Builder members) {
        TenureCluster started = members.start();
        return new HttpMember(() -> started, true);
    }

    /** The member's server, to look at it from the inside. */
    TenureServer server() {
        return cluster.get().server(0);
    }

    /** One answer: status, headers and body (parsed when it is JSON). */
    record Reply(int status, HttpResponse<String> raw) {
        String body() {
            return raw.body();
        }

        JsonNode json() {
            try {
                return JSON.readTree(raw.body());
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + raw.body(), e);
            }
        }

        String header(String name) {
            return raw.headers().firstValue(name).orElse(null);
        }

        @Override
        public String toString() {
            return status + " " + raw.body();
        }
    }

    URI uri(String path) {
        return URI.create(cluster.get().httpEndpoint(0) + path);
    }

    Reply get(String path) {
        return send(HttpRequest.newBuilder(uri(path)).GET());
    }

    Reply post(String path, String body) {
        return send(HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json"));
    }

    CompletableFuture<Reply> postAsync(String path, String body) {
        HttpRequest request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(120))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofString()).thenApply(r -> new Reply(r.statusCode(), r));
    }

    Reply send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> r = client.send(request.timeout(Duration.ofSeconds(120)).build(), HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r);
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Sends one request line as written, for paths {@link URI} refuses to build (a malformed
     * escape); answers the raw status line, headers and body.
     */
    String raw(String method, String path) {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server().httpPort())) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write((method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
                    + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** A lock's path segment with everything but unreserved characters percent-encoded (so {@code /} is %2F). */
    static String encoded(String lock) {
        return URLEncoder.encode(lock, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** GET /v1/{collection}/{name} (locks, semaphores), asserting it answers 200; the name is sent encoded. */
    JsonNode state(String collection, String name) {
        Reply r = get("/v1/" + collection + "/" + encoded(name));
        if (r.status() != 200) {
            throw new AssertionError("GET " + collection + "/" + name + ": " + r);
        }
        return r.json();
    }

    /** The owners waiting for the lock or semaphore, in queue order; none when it does not exist. */
    List<String> waiters(String collection, String name) {
        return owners(collection, name, "waiters");
    }

    /** The owners in the lock's or semaphore's {@code list} ("holders", "waiters"), in order; none when it does not exist. */
    List<String> owners(String collection, String name, String list) {
        Reply r = get("/v1/" + collection + "/" + encoded(name));
        List<String> owners = new ArrayList<>();
        if (r.status() == 200) {
            r.json().get(list).forEach(w -> owners.add(w.get("owner_id").asText()));
        }
        return owners;
    }

    /**
     * The lease of {@code owner} in the {@code list} of GET /v1/{collection}/{name} (a candidate, a
     * party waiting at a barrier): how a caller finds the lease of a call still waiting, to withdraw it.
     */
    long leaseIn(String collection, String name, String list, String owner) {
        for (JsonNode entry : state(collection, name).get(list)) {
            if (entry.get("owner_id").asText().equals(owner)) {
                return entry.get("lease_id").asLong();
            }
        }
        throw new AssertionError(owner + " is not in the " + list + " of " + collection + "/" + name);
    }

    /** The ids of the live leases whose client id is one of {@code owners}, as the member has applied them. */
    Set<Long> leasesOf(String... owners) {
        Set<String> wanted = Set.of(owners);
        return server().member().stateMachine().read(s -> s.leases()).stream()
                .filter(l -> wanted.contains(l.clientId())).map(LeaseView::leaseId).collect(Collectors.toSet());
    }

    /** The answer of a request sent with {@link #postAsync} (say an acquire that waits), within a minute. */
    static Reply await(CompletableFuture<Reply> reply) throws Exception {
        return reply.get(60, TimeUnit.SECONDS);
    }

    /** POST /v1/locks/{lock}/acquire for owner with ttl and wait; the name is sent encoded. */
    Reply acquire(String lock, String owner, long ttlMs, long waitMs) {
        return post("/v1/locks/" + encoded(lock) + "/acquire", acquireBody(owner, ttlMs, waitMs));
    }

    CompletableFuture<Reply> acquireAsync(String lock, String owner, long ttlMs, long waitMs) {
        return postAsync("/v1/locks/" + encoded(lock) + "/acquire", acquireBody(owner, ttlMs, waitMs));
    }

    static String acquireBody(String owner, long ttlMs, long waitMs) {
        return body("owner_id", owner, "ttl_ms", ttlMs, "wait_ms", waitMs);
    }

    /** A JSON object from name, value pairs, in order. */
    static String body(Object... namesAndValues) {
        java.util.Map<String, Object> fields = new java.util.LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            fields.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        try {
            return JSON.writeValueAsString(fields);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** The renew and release body for a grant answered by acquire. */
    static String claim(JsonNode grant) {
        return body("owner_id", grant.get("owner_id").asText(), "lease_id", grant.get("lease_id").asLong(),
                "fencing_token", grant.get("fencing_token").asLong());
    }

    Reply release(JsonNode grant) {
        return post("/v1/locks/" + encoded(grant.get("lock").asText()) + "/release", claim(grant));
    }

    /** Releases the grant (asserting it was released) and returns the next waiter's pending answer. */
    CompletableFuture<Reply> releaseAnd(JsonNode grant, CompletableFuture<Reply> next) {
        Reply released = release(grant);
        if (released.status() != 200) {
            throw new AssertionError("release failed: " + released);
        }
        return next;
    }

    Reply renew(JsonNode grant) {
        return post("/v1/locks/" + encoded(grant.get("lock").asText()) + "/renew", claim(grant));
    }

    @Override
    public void close() {
        if (owned) {
            cluster.get().close();
        }
    }
}
