package io.tenure.server.text;

import java.util.concurrent.CompletableFuture;

/**
 * One command of the text protocol: answers a request of its connection with exactly one line
 * (without the LF). It must not block: what waits, waits in the future it returns. A request it
 * refuses with a status of its own completes with (or throws) a {@link TextRefusal}.
 */
@FunctionalInterface
public interface TextCommand {
    CompletableFuture<String> run(TextSession session, TextRequest request);
}
