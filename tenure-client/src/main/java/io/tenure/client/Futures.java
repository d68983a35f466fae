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

    /**
     * {@code first.thenCompose(next)}, except that {@code next} is not started when the result
     * was cancelled meanwhile, cancelling the result also cancels the stage {@code next} returned
     * (so a lock wait started after a lease grant is withdrawn), and a value that arrives after the
     * result was cancelled goes to {@code orphaned} (so a grant nobody will use is released).
     */
    static <A, B> CompletableFuture<B> thenCompose(CompletableFuture<A> first,
            java.util.function.Function<A, CompletableFuture<B>> next, java.util.function.Consumer<B> orphaned) {
        CompletableFuture<B> result = new CompletableFuture<>();
        first.whenComplete((value, failure) -> {
            if (result.isDone()) {
                return; // cancelled while waiting: nothing to start
            }
            if (failure != null) {
                result.completeExceptionally(rethrowable(failure));
                return;
            }
            CompletableFuture<B> second;
            try {
                second = next.apply(value);
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
                return;
            }
            result.whenComplete((ignored, f) -> {
                if (result.isCancelled()) {
                    second.cancel(false);
                }
            });
            second.whenComplete((v, f) -> {
                if (f != null) {
                    result.completeExceptionally(rethrowable(f));
                } else if (!result.complete(v) && v != null) {
                    orphaned.accept(v);
                }
            });
        });
        return result;
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
