package io.tenure.core.kernel;

/** The commands of the lease table, which every primitive binds its holds and waits to. */
public sealed interface LeaseCommand extends Command permits LeaseGrant, LeaseRenew, LeaseRevoke, LeaseExpire, LeaseRetime {
}
