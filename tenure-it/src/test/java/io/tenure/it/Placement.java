package io.tenure.it;

import java.util.List;

/**
 * Where a member process runs: the address it binds and is reached at, and the command prefix
 * that puts it there (for example {@code ip netns exec NS}, which execs in place so the pid stays
 * the server's, as kill -9 and SIGSTOP need).
 */
public interface Placement {
    /** Every member on 127.0.0.1 in this machine's own network namespace. */
    Placement LOOPBACK = new Placement() {
        @Override
        public String host(String member) {
            return "127.0.0.1";
        }

        @Override
        public List<String> wrap(String member, List<String> command) {
            return command;
        }
    };

    String host(String member);

    List<String> wrap(String member, List<String> command);
}
