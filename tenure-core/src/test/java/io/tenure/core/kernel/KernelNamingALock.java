package io.tenure.core.kernel;

import io.tenure.core.lock.LockTable;

/** What CorePurityTest's shape rule forbids, to prove the rule bites: a kernel class naming a primitive. */
public final class KernelNamingALock {
    private KernelNamingALock() {
    }

    static Object lockTable(Leases leases) {
        return new LockTable(leases);
    }
}
