package io.tenure.client;

/**
 * How a lease holds a lock: {@link #WRITE} alone (exclusive), {@link #READ} beside other readers
 * (shared). A queued writer holds back the readers that come after it, so readers cannot starve
 * it; a writer may {@linkplain LockHandle#downgrade() downgrade} to read without letting go, and a
 * reader is never upgraded to write (two readers upgrading would wait for each other forever).
 */
public enum LockMode {
    /** Exclusive: no other holder. Plain {@link TenureClient#lock(String) locks} are write locks. */
    WRITE,
    /** Shared with other readers, and with no writer. */
    READ;

    boolean shared() {
        return this == READ;
    }

    io.tenure.proto.v1.LockMode wire() {
        return this == READ ? io.tenure.proto.v1.LockMode.LOCK_MODE_READ : io.tenure.proto.v1.LockMode.LOCK_MODE_WRITE;
    }

    static LockMode of(io.tenure.proto.v1.LockMode wire) {
        return wire == io.tenure.proto.v1.LockMode.LOCK_MODE_READ ? READ : WRITE;
    }
}
