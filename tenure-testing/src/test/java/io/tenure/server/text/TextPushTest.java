package io.tenure.server.text;

import io.tenure.testing.Await;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The text protocol's pushes over raw sockets: pub/sub with patterns and queue groups, watches
 * with dflockd's event names, election observers, barriers, and the subscription limit.
 */
class TextPushTest extends TextMemberTest {
    private static final Duration PUSH = Duration.ofSeconds(10);


    @Test
    void signalsReachTheListenersWhosePatternsMatchInterleavedWithAnswers() throws Exception {
        start(t -> t);
        TextWire one = connect();
        TextWire rest = connect();
        TextWire sender = connect();
        assertThat(one.call("listen", "orders.*", "")).isEqualTo("ok");
        assertThat(rest.call("listen", "orders.>", "")).isEqualTo("ok");
        assertThat(one.call("listen", "orders.*", "")).as("a second listen of the same pattern is one registration").isEqualTo("ok");

        assertThat(sender.call("signal", "orders.eu", "hello world")).isEqualTo("ok 2");
        assertThat(sender.call("signal", "orders.eu.late", "x")).isEqualTo("ok 1");
        assertThat(one.call("ping", "_", "_")).isEqualTo("ok");
        assertThat(one.push(PUSH)).isEqualTo("sig orders.eu hello world");
        assertThat(rest.push(PUSH)).isEqualTo("sig orders.eu hello world");
        assertThat(rest.push(PUSH)).isEqualTo("sig orders.eu.late x");
        assertThat(sender.call("signal", "orders.*", "x")).as("a pattern is no channel").isEqualTo("error");
        assertThat(sender.call("signal", "orders.eu", "")).isEqualTo("error");

        assertThat(one.call("unlisten", "orders.*", "")).isEqualTo("ok");
        assertThat(sender.call("signal", "orders.eu", "again")).isEqualTo("ok 1");
        rest.close();
        Await.until("the closed listener gone", PUSH, () -> {
            try {
                return sender.call("signal", "orders.eu", "nobody").equals("ok 0");
            } catch (IOException e) {
                return false;
            }
        });
    }

    @Test
    void aQueueGroupDeliversEachSignalToOneOfItsListenersInTurn() throws Exception {
        start(t -> t);
        TextWire a = connect();
        TextWire b = connect();
        TextWire sender = connect();
        assertThat(a.call("listen", "jobs", "workers")).isEqualTo("ok");
        assertThat(b.call("listen", "jobs", "workers")).isEqualTo("ok");
        for (int i = 0; i < 4; i++) {
            assertThat(sender.call("signal", "jobs", "job-" + i)).isEqualTo("ok 1");
        }
        List<String> got = new ArrayList<>();
        for (TextWire w : List.of(a, b)) {
            for (int i = 0; i < 2; i++) {
                got.add(w.push(PUSH));
            }
        }
        assertThat(got).containsExactlyInAnyOrder("sig jobs job-0", "sig jobs job-1", "sig jobs job-2", "sig jobs job-3");
    }

    @Test
    void aConnectionHoldsAtMostMaxSubscriptions() throws Exception {
        start(t -> t.withMaxSubscriptions(2));
        TextWire a = connect();
        assertThat(a.call("listen", "x", "")).isEqualTo("ok");
        assertThat(a.call("watch", "y", "")).isEqualTo("ok");
        assertThat(a.call("observe", "z", "")).isEqualTo("error");
        assertThat(a.call("unwatch", "y", "")).isEqualTo("ok");
        assertThat(a.call("observe", "z", "")).isEqualTo("ok");
        assertThat(connect().call("listen", "x", "")).as("per connection").isEqualTo("ok");
    }

    @Test
    void watchesPushDflockdsEventNames() throws Exception {
        start(t -> t);
        TextWire watcher = connect();
        TextWire actor = connect();
        assertThat(watcher.call("watch", "wk.*", "")).isEqualTo("ok");
        String grant = actor.call("l", "wk.a", "0");
        assertThat(watcher.push(PUSH)).isEqualTo("watch acquire wk.a");
        actor.call("r", "wk.a", grant.split(" ")[1]);
        assertThat(watcher.push(PUSH)).isEqualTo("watch release wk.a");
        actor.call("incr", "wk.c", "5");
        assertThat(watcher.push(PUSH)).isEqualTo("watch cset wk.c");
        actor.call("incr", "wk.c", "2");
        assertThat(watcher.push(PUSH)).isEqualTo("watch incr wk.c");
        actor.call("decr", "wk.c", "3");
        assertThat(watcher.push(PUSH)).isEqualTo("watch decr wk.c");
        actor.call("kset", "wk.k", "v");
        assertThat(watcher.push(PUSH)).isEqualTo("watch kset wk.k");
        actor.call("kdel", "wk.k", "");
        assertThat(watcher.push(PUSH)).isEqualTo("watch kdel wk.k");
        actor.call("rpush", "wk.l", "item");
        assertThat(watcher.push(PUSH)).isEqualTo("watch rpush wk.l");
        actor.call("lpop", "wk.l", "");
        assertThat(watcher.push(PUSH)).isEqualTo("watch lpop wk.l");
        actor.call("kset", "other.k", "v");
        assertThat(watcher.call("unwatch", "wk.*", "")).isEqualTo("ok");
        actor.call("kset", "wk.k", "again");
        assertThat(watcher.push(Duration.ofMillis(500))).as("nothing after unwatch, nothing outside the pattern").isNull();
    }

    @Test
    void observersHearElectionsResignationsAndFailovers() throws Exception {
        start(t -> t);
        TextWire observer = connect();
        TextWire first = connect();
        TextWire second = connect();
        assertThat(observer.call("observe", "boss", "")).isEqualTo("ok");
        String won = first.call("elect", "boss", "0");
        assertThat(observer.push(PUSH)).isEqualTo("leader elected boss");
        assertThat(first.call("resign", "boss", won.split(" ")[1])).isEqualTo("ok");
        assertThat(observer.push(PUSH)).isEqualTo("leader resigned boss");

        assertThat(second.call("elect", "boss", "0")).startsWith("ok ");
        assertThat(observer.push(PUSH)).isEqualTo("leader elected boss");
        TextWire late = connect();
        assertThat(late.call("observe", "boss", "")).isEqualTo("ok");
        assertThat(late.push(PUSH)).as("a leader present at observe").isEqualTo("leader elected boss");
        second.close();
        assertThat(observer.push(PUSH)).as("the leader's connection closed: its lease revoked").isEqualTo("leader failover boss");
        assertThat(late.call("unobserve", "boss", "")).isEqualTo("ok");
    }

    @Test
    void barriersReleaseTheirPartiesTimeOutAndRefuseAnotherCount() throws Exception {
        start(t -> t);
        TextWire a = connect();
        TextWire b = connect();
        a.send("bwait", "gate", "2 20");
        Await.until("one party waits", PUSH, () -> cluster.server(0).member().barriers().read(io.tenure.server.security.Principal.NOBODY, "gate").join().barrier() != null);
        assertThat(connect().call("bwait", "gate", "3 1")).isEqualTo("error_barrier_count_mismatch");
        assertThat(b.call("bwait", "gate", "2 20")).isEqualTo("ok");
        assertThat(a.answer()).isEqualTo("ok");
        assertThat(a.call("bwait", "lonely", "2 1")).isEqualTo("timeout");
        assertThat(a.call("bwait", "gate", "0 1")).isEqualTo("error");
        assertThat(a.call("bwait", "gate", "2")).isEqualTo("error");
    }
}
