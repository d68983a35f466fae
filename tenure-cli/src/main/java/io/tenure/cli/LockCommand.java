package io.tenure.cli;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.TenureClient;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code tenure lock NAME -- COMMAND}: runs a command while holding a lock. */
@Command(name = "lock",
        description = {
            "Runs COMMAND while holding lock NAME.",
            "Grants a lease, waits for the lock, runs COMMAND with the terminal's input and output, keeps the "
                    + "lease alive while it runs, then releases the lock and revokes the lease. COMMAND sees "
                    + "TENURE_LOCK_KEY, TENURE_LEASE_ID and TENURE_FENCING_TOKEN in its environment; pass the "
                    + "fencing token to any storage it writes, so writes of an older holder can be refused.",
            LeaseBoundCommand.LOST_LEASE_HELP + "the lock to anyone else.",
            LeaseBoundCommand.DOUBLE_DASH_HELP
        })
final class LockCommand extends LeaseBoundCommand {
    @Parameters(index = "0", paramLabel = "NAME", description = "The lock to hold.")
    String name;

    @Option(names = "--metadata", paramLabel = "TEXT", description = "Shown to others with the holder.")
    String metadata;

    @Override
    String name() {
        return name;
    }

    @Override
    Grant acquire(TenureClient client, Lease lease) throws NotAcquired {
        byte[] metadataBytes = metadata == null ? null : metadata.getBytes(StandardCharsets.UTF_8);
        LockHandle handle;
        try {
            handle = client.acquire(name, lease, timeout, metadataBytes);
        } catch (LockNotAcquiredException e) {
            throw new NotAcquired("'" + name + "' was not acquired within " + timeout.toMillis() + " ms"
                    + (e.holder().isEmpty() ? "" : "; held by '" + e.holder() + "'"));
        }
        return new Grant(handle.key(), handle.fencingToken(), Map.of(), handle::release);
    }
}
