package io.tenure.core.watch;

/**
 * One change of a name: for a lock, a PUT when a lease is granted it (fresh or by hand-off), a
 * DELETE when it is released or its lease ends with nobody waiting; each other kind says in its
 * own table what its PUTs and DELETEs are.
 *
 * @param revision strictly increasing across all events; equals the grant's fencing token for a PUT
 * @param prevKv   the key before the change, or null when it did not exist
 * @param kind     the kind of the resource changed ("lock", "semaphore", "election", "barrier", ...):
 *                 names of some kinds live in namespaces of their own (a barrier may share its name
 *                 with a lock), so a watch on a name tells them apart by this
 */
public record WatchEvent(long revision, Type type, KeyValue kv, KeyValue prevKv, String kind) {
    public enum Type { PUT, DELETE }

    public String key() {
        return kv.key();
    }
}
