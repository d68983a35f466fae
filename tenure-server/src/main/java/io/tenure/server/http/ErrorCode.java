package io.tenure.server.http;

/**
 * The {@code error} codes of the HTTP API, each with its one status. Every 4xx and 5xx body is
 * {@code {"error": code, "message": text, "field": name}} ({@code field} only when one request
 * field is at fault).
 */
enum ErrorCode {
    /** Jetty refused the request before routing it: a malformed escape in the path, bad framing or headers. */
    MALFORMED_REQUEST(400, "malformed_request"),
    /** The body is not one JSON object (malformed, empty, trailing data, a duplicate key). */
    INVALID_JSON(400, "invalid_json"),
    /** A field is missing, of the wrong type or out of range; {@code field} names it. */
    INVALID_ARGUMENT(400, "invalid_argument"),
    /** A GET of a lock that is free, of a semaphore that does not exist (nobody holds or waits), of an election nobody leads, of a barrier nobody waits at, or of a latch whose count is zero; a pop of a list still empty when its wait ends. */
    NOT_FOUND(404, "not_found"),
    /** The lease was never granted, has expired or was revoked (a two-phase wait's, a withdrawal's, a double barrier leave's). */
    LEASE_NOT_FOUND(404, "lease_not_found"),
    /** Authentication is on and the request showed no valid credential ({@code Authorization: Bearer}, or a client certificate). */
    UNAUTHENTICATED(401, "unauthenticated"),
    /** The request's principal may not make it (a management request by a user without the role root). */
    PERMISSION_DENIED(403, "permission_denied"),
    /** No endpoint has this path. */
    UNKNOWN_ROUTE(404, "unknown_route"),
    /** The path exists, with other methods (listed in {@code Allow}). */
    METHOD_NOT_ALLOWED(405, "method_not_allowed"),
    /**
     * An acquire found the lock still held, or too few of the semaphore's permits free, or a
     * campaign found the election led by another, when its wait ended; a two-phase acquire's wait
     * that ended before the grant (the place is kept).
     */
    HELD(409, "held"),
    /** A barrier's await whose wait ended before the barrier released (the party left it), or a latch's before its count reached zero. */
    NOT_RELEASED(409, "not_released"),
    /** A double barrier's enter whose wait ended before the party was let in: its entry was withdrawn. */
    NOT_ENTERED(409, "not_entered"),
    /** A double barrier's leave whose wait ended before every party had left: the party has left all the same. */
    NOT_LEFT(409, "not_left"),
    /**
     * A renew by a lease, token or owner that does not hold the lock or the semaphore's grant, or
     * does not lead the election; a two-phase wait, a withdrawal or a double barrier leave naming
     * another owner's lease ({@code field} is {@code owner_id}).
     */
    NOT_HOLDER(409, "not_holder"),
    /**
     * A two-phase acquire's wait by a lease that neither waits for nor holds the lock or the
     * semaphore (it never enqueued there, or its place was withdrawn or its grant released);
     * {@code field} is {@code lease_id}.
     */
    NOT_QUEUED(409, "not_queued"),
    /** A renew of a lease that has ended. */
    EXPIRED(409, "expired"),
    /**
     * A release, a lock's downgrade, or an election's proclaim or resign that cannot apply: a stale
     * token, another owner's lease, or a lease that ended (seed 002 S3).
     */
    STALE(409, "stale"),
    /**
     * An acquire that contradicts what the name is now or what the owner holds: for a semaphore,
     * another limit than the live semaphore's, a lock's name, or other permits than the owner
     * already holds; for a lock, a semaphore's name, or the other mode than the owner holds it
     * in; for an election, a lock's or a semaphore's name; for a barrier, another kind's name,
     * other parties than the live barrier's, or an owner already waiting at it; {@code field} names it.
     */
    CONFLICT(409, "conflict"),
    /** A lease id taken by another client or TTL. */
    ALREADY_EXISTS(409, "already_exists"),
    PAYLOAD_TOO_LARGE(413, "payload_too_large"),
    /** Over one of the member's limits (leases or locks per client, waiters per lock, connections, request rate); the message names it. */
    LIMIT_EXCEEDED(429, "limit_exceeded"),
    /** The member is behind and sheds new work; retry after {@code Retry-After} (its {@code retry_after_ms} in the body). */
    OVERLOADED(429, "overloaded"),
    URI_TOO_LONG(414, "uri_too_long"),
    HEADERS_TOO_LARGE(431, "headers_too_large"),
    /** A bug: the message says what failed. */
    INTERNAL(500, "internal"),
    /** No leader, shutting down, or a write whose outcome is unknown; retry (see {@code Retry-After}). */
    UNAVAILABLE(503, "unavailable");

    final int status;
    final String wire;

    ErrorCode(int status, String wire) {
        this.status = status;
        this.wire = wire;
    }
}
