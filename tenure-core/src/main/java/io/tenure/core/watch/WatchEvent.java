package io.tenure.core.watch;

/**
 * One change of a lock key: a PUT when a lease is granted the lock (fresh or by hand-off), a
 * DELETE when it is released or its lease ends with nobody waiting.
 *
 * @param revision strictly increasing across all events; equals the grant's fencing token for a PUT
 * @param prevKv   the key before the change, or null when it did not exist
 */
public record WatchEvent(long revision, Type type, KeyValue kv, KeyValue prevKv) {
    public enum Type { PUT, DELETE }

    public String key() {
        return kv.key();
    }
}
