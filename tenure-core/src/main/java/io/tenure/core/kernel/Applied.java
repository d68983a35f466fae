package io.tenure.core.kernel;

import java.util.List;

/** The outcome of applying one command: its result for the proposer, and its effects for others. */
public record Applied(Result result, List<Effect> effects) {
    public Applied {
        effects = List.copyOf(effects);
    }

    public static Applied of(Result result) {
        return new Applied(result, List.of());
    }
}
