package io.tenure.cli;

import io.tenure.client.ElectionDescription;
import io.tenure.client.ElectionObserver;
import io.tenure.client.LeaderInfo;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureElection;
import io.tenure.client.TenureException;
import io.tenure.client.Watch;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code tenure leader NAME [--watch]}: who leads an election, once or as it changes. */
@Command(name = "leader", mixinStandardHelpOptions = true,
        description = {
            "Prints who leads election NAME: its value, client id, lease and fencing token.",
            "Read linearizably, one 'name: value' per line: value, client_id, lease, fencing_token, revision (of the "
                    + "state read: watch from revision + 1 to see every later change). The value prints as text when it "
                    + "is UTF-8 without control characters, else as 0x and its bytes in hex.",
            "When nobody leads, prints nothing and exits 5.",
            "With --watch: the leader now, then one line per change until interrupted (Ctrl-C), in revision order, "
                    + "with no gap and no duplicate across member failures:",
            "  leader: client_id=ID lease=L fencing_token=T revision=R value=V",
            "  leader: none",
            "A new leader has a new fencing token; a value it proclaims keeps it. R is the revision of the change. "
                    + "'leader: none' when nobody leads."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:a leader was printed; with --watch: interrupted",
            "1:no member answered, or the cluster refused the request; with --watch: the watch ended",
            "2:usage error",
            "5:nobody leads NAME (nothing was printed)"
        })
final class LeaderCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "The election.")
    String name;

    @Option(names = "--watch", description = "Print a line for the leader now and for every change, until interrupted.")
    boolean watch;

    @Mixin
    EndpointsOption endpoints;

    @Override
    public Integer call() throws ExecutionException {
        try (TenureClient client = endpoints.connect()) {
            TenureElection election;
            try {
                election = client.election(name);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "Invalid value for positional parameter NAME: " + e.getMessage());
            }
            return watch ? follow(election) : printOnce(election);
        }
    }

    private int printOnce(TenureElection election) {
        ElectionDescription read = election.describe();
        if (read.leader().isEmpty()) {
            return TenureCli.EXIT_NO_LEADER;
        }
        LeaderInfo leader = read.leader().get();
        PrintWriter out = spec.commandLine().getOut();
        out.println("value: " + Formats.metadata(leader.value()));
        out.println("client_id: " + leader.clientId());
        out.println("lease: " + leader.leaseId());
        out.println("fencing_token: " + leader.fencingToken());
        out.println("revision: " + read.revision());
        out.flush();
        return TenureCli.EXIT_OK;
    }

    private int follow(TenureElection election) throws ExecutionException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        CompletableFuture<Integer> ended = new CompletableFuture<>();
        ElectionObserver observer = new ElectionObserver() {
            @Override
            public void leaderChanged(Optional<LeaderInfo> leader) {
                out.println(line(leader));
                out.flush();
            }

            @Override
            public void onError(TenureException error) {
                err.println(spec.qualifiedName() + ": " + error.getMessage());
                err.flush();
                ended.complete(TenureCli.EXIT_ERROR);
            }
        };
        try (Watch following = election.observe(observer)) {
            return ended.get();
        } catch (InterruptedException e) {
            // Interrupted (the watch is closed above): the normal end of a watch.
            Thread.currentThread().interrupt();
            return TenureCli.EXIT_OK;
        }
    }

    /** A change as one line: the leader's client id, lease, token, the change's revision and the value, or {@code none}. */
    static String line(Optional<LeaderInfo> leader) {
        return leader.map(l -> "leader: client_id=" + l.clientId() + " lease=" + l.leaseId() + " fencing_token=" + l.fencingToken()
                + " revision=" + l.revision() + " value=" + Formats.metadata(l.value())).orElse("leader: none");
    }
}
