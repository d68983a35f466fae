package io.tenure.client;

/**
 * The member refused the call for its credential ({@code UNAUTHENTICATED}): authentication is on
 * and the client showed no bearer token ({@link TenureClient.Builder#token}) or client certificate,
 * or its token is wrong or expired, or a password was wrong. Not retryable with the same credential.
 */
public class UnauthenticatedException extends TenureException {
    public UnauthenticatedException(String message, Throwable cause) {
        super(message, cause);
    }
}
