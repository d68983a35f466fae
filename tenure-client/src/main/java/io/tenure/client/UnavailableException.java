package io.tenure.client;

/**
 * No endpoint could serve the request ({@code UNAVAILABLE}, or no answer within the request
 * deadline): the member was not ready, there was no leader, or it was unreachable. The client
 * has already retried on every endpoint, with backoff, until the call's time was up. Retryable:
 * lock and lease calls are idempotent on the server, so repeating one does not take a second
 * place in a queue or grant a second lease.
 */
public class UnavailableException extends TenureException {
    public UnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
