package io.tenure.core.lock;

import io.tenure.core.kernel.Command;

/** The commands of locks (write and read modes); {@link LockTable} applies them. */
public sealed interface LockCommand extends Command permits LockAcquire, LockRelease, LockCancel, LockDowngrade {
}
