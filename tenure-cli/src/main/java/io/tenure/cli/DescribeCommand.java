package io.tenure.cli;

import io.tenure.client.LockDescription;
import io.tenure.client.TenureClient;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenure describe NAME}: who holds a lock and who waits for it. */
@Command(name = "describe", mixinStandardHelpOptions = true,
        description = {
            "Prints who holds lock NAME and who waits for it.",
            "Read linearizably, one 'name: value' per line: "
                    + "held, holder, lease, fencing_token, metadata, held_since_revision, grants, holder_ttl_remaining "
                    + "(on the serving member's clock; 'unknown' right after it restarted), revision (of the state "
                    + "read: watch from revision + 1 to see every later change), waiters, then one 'waiter:' line "
                    + "per waiter in the order they will be granted.",
            "A free lock prints 'held: false' and the revision, and exits 0."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success (held or free)", "1:no member answered, or the cluster refused the request",
            "2:usage error"})
final class DescribeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock.")
    String name;

    @Mixin
    EndpointsOption endpoints;

    @Override
    public Integer call() {
        try (TenureClient client = endpoints.connect()) {
            LockDescription lock;
            try {
                lock = client.describe(name);
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                        "Invalid value for positional parameter NAME: " + e.getMessage());
            }
            print(lock, spec.commandLine().getOut());
        }
        return TenureCli.EXIT_OK;
    }

    static void print(LockDescription lock, PrintWriter out) {
        out.println("lock: " + lock.key());
        out.println("held: " + lock.held());
        if (lock.held()) {
            out.println("holder: " + lock.holder());
            out.println("lease: " + lock.leaseId());
            out.println("fencing_token: " + lock.fencingToken());
            out.println("metadata: " + Formats.metadata(lock.metadata()));
            out.println("held_since_revision: " + lock.heldSinceRevision());
            out.println("grants: " + lock.grants());
            out.println("holder_ttl_remaining: " + lock.holderTtlRemaining().map(Duration::toMillis).map(Formats::millis)
                    .orElse("unknown"));
        }
        out.println("revision: " + lock.revision());
        out.println("waiters: " + lock.waiters().size());
        int position = 1;
        for (LockDescription.Waiter waiter : lock.waiters()) {
            out.println("waiter: " + position++ + " lease=" + waiter.leaseId() + " client_id=" + waiter.clientId()
                    + " joined_revision=" + waiter.joinedRevision());
        }
        out.flush();
    }
}
