package io.tenure.server;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** The failure a future reports, without the wrappers that completion stages add around it. */
public final class Causes {
    private Causes() {
    }

    /** {@code error} without its {@link CompletionException} and {@link ExecutionException} wrappers. */
    public static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
