package io.tenure.core.kernel;

import java.util.List;

/**
 * The leader's decision that these names were idle for its idle time: each goes if it is still
 * idle since the same position (one used again in between stays). Proposed by the leader from its
 * own clock, as a lease's expiry is; applied the same everywhere.
 */
public record IdleForget(List<IdleName> names) implements Command {
    public IdleForget {
        names = List.copyOf(names);
    }
}
