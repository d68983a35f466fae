package io.tenure.client;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Blocking forms of the client's asynchronous calls. */
final class Futures {
    private Futures() {
    }

    /**
     * Waits for a call and returns its result, rethrowing its {@link TenureException} unwrapped.
     * An interrupt cancels the call (so a lock wait is withdrawn) and keeps the interrupt flag.
     */
    static <T> T await(CompletableFuture<T> future, String what) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new TenureException("interrupted while waiting for " + what, e);
        } catch (ExecutionException e) {
            throw rethrowable(e.getCause());
        } catch (CancellationException e) {
            throw new TenureException(what + " was cancelled", e);
        }
    }

    /** The exception a completion stage failed with, without CompletableFuture's wrapping. */
    static RuntimeException rethrowable(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof RuntimeException runtime) {
            return runtime;
        }
        if (cause instanceof Error error) {
            throw error;
        }
        return new TenureException(String.valueOf(cause.getMessage()), cause);
    }
}
