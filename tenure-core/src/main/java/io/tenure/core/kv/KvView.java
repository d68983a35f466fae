package io.tenure.core.kv;

/**
 * A key as a read sees it. {@code value} is a copy: the reader may keep or change it.
 *
 * @param createRevision the revision of the put that created it
 * @param modRevision    the revision of its latest put
 * @param version        its puts since it was created (1 after the first)
 * @param leaseId        the lease it is bound to, 0 = none
 * @param ttlMillis      its time to live after its latest put, 0 = none
 */
public record KvView(String key, byte[] value, long createRevision, long modRevision, long version,
                     long leaseId, long ttlMillis) {}
