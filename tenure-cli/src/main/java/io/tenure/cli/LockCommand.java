package io.tenure.cli;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.LockMode;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureLock;
import io.tenure.client.TenureReadWriteLock;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code tenure lock NAME [--read|--write] -- COMMAND}: runs a command while holding a lock. */
@Command(name = "lock",
        description = {
            "Runs COMMAND while holding lock NAME, alone (--write, the default) or beside other readers (--read).",
            "Grants a lease, waits for the lock, runs COMMAND with the terminal's input and output, keeps the "
                    + "lease alive while it runs, then releases the lock and revokes the lease. COMMAND sees "
                    + "TENURE_LOCK_KEY, TENURE_LEASE_ID, TENURE_FENCING_TOKEN and TENURE_LOCK_MODE ('read' or 'write') "
                    + "in its environment; pass the fencing token to any storage it writes, so writes of an older "
                    + "holder can be refused.",
            "Readers hold NAME together; a writer holds it alone. Waiters are granted in the order they asked: a "
                    + "waiting writer holds back the readers that ask after it, and the readers queued right behind a "
                    + "writer are granted together when it releases.",
            LeaseBoundCommand.LOST_LEASE_HELP + "the lock to anyone else.",
            LeaseBoundCommand.DOUBLE_DASH_HELP
        })
final class LockCommand extends LeaseBoundCommand {
    /** The variable that tells COMMAND the mode it holds NAME in: {@code read} or {@code write}. */
    static final String MODE_VARIABLE = "TENURE_LOCK_MODE";

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock to hold.")
    String name;

    @Option(names = "--metadata", paramLabel = "TEXT", description = "Shown to others with the holder.")
    String metadata;

    @ArgGroup(exclusive = true)
    Mode mode = new Mode();

    /** {@code --read} or {@code --write}, at most one of them. */
    static final class Mode {
        @Option(names = "--read", description = "Hold NAME in read mode, shared with other readers.")
        boolean read;

        @Option(names = "--write", description = "Hold NAME in write mode, alone (the default).")
        boolean write;

        LockMode lockMode() {
            return read ? LockMode.READ : LockMode.WRITE;
        }
    }

    @Override
    String name() {
        return name;
    }

    @Override
    Grant acquire(TenureClient client, Lease lease) throws NotAcquired {
        LockMode lockMode = mode.lockMode();
        TenureReadWriteLock readWrite = client.readWriteLock(name, lease);
        TenureLock lock = (lockMode == LockMode.READ ? readWrite.readLock() : readWrite.writeLock()).withMetadata(metadata);
        LockHandle handle;
        try {
            handle = timeout == null ? lock.acquire() : lock.acquire(timeout);
        } catch (LockNotAcquiredException e) {
            throw new NotAcquired("'" + name + "' was not acquired" + (lockMode == LockMode.READ ? " in read mode" : "")
                    + " within " + timeout.toMillis() + " ms" + (e.holder().isEmpty() ? "" : "; held by '" + e.holder() + "'"));
        }
        return new Grant(handle.key(), handle.fencingToken(),
                Map.of(MODE_VARIABLE, Formats.mode(handle.mode())), handle::release);
    }
}
