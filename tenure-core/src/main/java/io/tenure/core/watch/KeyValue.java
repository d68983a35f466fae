package io.tenure.core.watch;

/**
 * A lock key seen as a key-value pair, the form watches deliver: who holds it (client id and
 * metadata), under which lease, and the revisions of its creation and latest grant. For a held
 * lock {@code modRevision} is the holder's fencing token.
 */
public record KeyValue(String key, String holder, byte[] metadata, long leaseId,
                       long createRevision, long modRevision, long version) {

    /** The value of a deleted key: only the key and the revision of the deletion. */
    public static KeyValue deleted(String key, long revision) {
        return new KeyValue(key, "", new byte[0], 0, 0, revision, 0);
    }
}
