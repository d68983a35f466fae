package io.tenure.server.text;

import io.tenure.core.list.ListTable;
import io.tenure.core.list.ListView;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The data commands of dflockd's {@code redis-feats} line over the text port of one in-process
 * member: counters, keys and lists with dflockd's answer lines and statuses, {@code --max-keys}
 * and {@code --max-list-length}, key TTLs, and blocking pops: served in arrival order by a push
 * from another connection, ended by their timeout, and withdrawn when their connection closes
 * (is reset) without losing the item of a later push.
 */
class TextDataTest {
    static final Duration LIMIT = Duration.ofSeconds(15);
    static final int MAX_KEYS = 3;
    static final int MAX_LIST_LENGTH = 2;

    @TempDir
    static Path dir;
    static TenureCluster cluster;
    static TenureCluster limited;

    @BeforeAll
    static void start() {
        cluster = TenureCluster.builder().members(1).dataDir(dir.resolve("plain")).start();
        limited = TenureCluster.builder().members(1).dataDir(dir.resolve("limited"))
                .config(c -> c.withText(c.text().withMaxKeys(MAX_KEYS).withMaxListLength(MAX_LIST_LENGTH))).start();
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
        if (limited != null) {
            limited.close();
        }
    }

    static TextWire open() throws IOException {
        return TextWire.open(cluster.textPort(0));
    }

    /** The leases waiting to pop from list {@code name}, on the member's applied state. */
    static int waiting(String name) {
        ListView list = cluster.server(0).member().stateMachine().read(s -> s.primitive(ListTable.class).list(name));
        return list == null ? 0 : list.waiting().size();
    }

    @Test
    void countersAnswerTheirValues() throws IOException {
        try (TextWire wire = open()) {
            assertThat(wire.call("get", "c/a", "")).isEqualTo("ok 0");
            assertThat(wire.call("incr", "c/a", "5")).isEqualTo("ok 5");
            assertThat(wire.call("decr", "c/a", "2")).isEqualTo("ok 3");
            assertThat(wire.call("incr", "c/a", "-4")).isEqualTo("ok -1");
            assertThat(wire.call("decr", "c/a", "-1")).isEqualTo("ok 0");
            assertThat(wire.call("incr", "c/a", " +7 ")).isEqualTo("ok 7");
            assertThat(wire.call("get", "c/a", "")).isEqualTo("ok 7");
            assertThat(wire.call("cset", "c/a", "-42")).isEqualTo("ok");
            assertThat(wire.call("get", "c/a", "")).isEqualTo("ok -42");
            assertThat(wire.call("decr", "c/fresh", "3")).isEqualTo("ok -3");
        }
    }

    @Test
    void badIntegersAndOverflowsAnswerError() throws IOException {
        try (TextWire wire = open()) {
            assertThat(wire.call("incr", "c/bad", "")).isEqualTo("error");
            assertThat(wire.call("incr", "c/bad", "one")).isEqualTo("error");
            assertThat(wire.call("incr", "c/bad", "1 2")).isEqualTo("error");
            assertThat(wire.call("incr", "c/bad", "1.5")).isEqualTo("error");
            assertThat(wire.call("incr", "c/bad", "9223372036854775808")).isEqualTo("error");
            assertThat(wire.call("decr", "c/bad", "-9223372036854775808")).isEqualTo("error");
            assertThat(wire.call("cset", "c/bad", "")).isEqualTo("error");
            assertThat(wire.call("cset", "c/bad", "x")).isEqualTo("error");
            assertThat(wire.call("get", "c/bad", "")).as("nothing was created").isEqualTo("ok 0");

            assertThat(wire.call("cset", "c/max", "9223372036854775807")).isEqualTo("ok");
            assertThat(wire.call("incr", "c/max", "1")).isEqualTo("error");
            assertThat(wire.call("decr", "c/max", "-1")).isEqualTo("error");
            assertThat(wire.call("get", "c/max", "")).isEqualTo("ok 9223372036854775807");
            assertThat(wire.call("cset", "c/min", "-9223372036854775808")).isEqualTo("ok");
            assertThat(wire.call("decr", "c/min", "1")).isEqualTo("error");
            assertThat(wire.call("get", "c/min", "")).isEqualTo("ok -9223372036854775808");

            assertThat(wire.call("incr", "bad key", "1")).as("dflockd's key rule").isEqualTo("error");
            assertThat(wire.call("incr", "c/bad", "1")).as("the connection is still usable").isEqualTo("ok 1");
        }
    }

    @Test
    void keysAreSetReadAndDeleted() throws IOException {
        try (TextWire wire = open()) {
            assertThat(wire.call("kget", "k/a", "")).isEqualTo("nil");
            assertThat(wire.call("kset", "k/a", "hello  wide world ")).isEqualTo("ok");
            assertThat(wire.call("kget", "k/a", "")).isEqualTo("ok hello  wide world ");
            assertThat(wire.call("kset", "k/a", "ünïcødé\t0")).as("ttl 0: none").isEqualTo("ok");
            assertThat(wire.call("kget", "k/a", "")).isEqualTo("ok ünïcødé");
            assertThat(wire.call("kdel", "k/a", "")).isEqualTo("ok");
            assertThat(wire.call("kget", "k/a", "")).isEqualTo("nil");
            assertThat(wire.call("kdel", "k/a", "")).as("deleting an absent key").isEqualTo("ok");

            assertThat(wire.call("kset", "k/b", "")).isEqualTo("error");
            assertThat(wire.call("kset", "k/b", "\t5")).isEqualTo("error");
            assertThat(wire.call("kset", "k/b", "v\t")).isEqualTo("error");
            assertThat(wire.call("kset", "k/b", "v\tx")).isEqualTo("error");
            assertThat(wire.call("kset", "k/b", "v\t-1")).isEqualTo("error");
            assertThat(wire.call("kset", "k/b", "v\t1\t2")).isEqualTo("error");
            assertThat(wire.call("kset", "k/b", "v\t86401")).as("over Tenure's longest TTL (24 h)").isEqualTo("error");
            assertThat(wire.call("kget", "k/b", "")).isEqualTo("nil");
        }
    }

    @Test
    void kcasCreatesIfAbsentAndAnswersConflicts() throws IOException {
        try (TextWire wire = open()) {
            assertThat(wire.call("kcas", "k/cas", "\tfirst\t0")).isEqualTo("ok");
            assertThat(wire.call("kcas", "k/cas", "\tagain\t0")).as("create-if-absent of a key that exists").isEqualTo("cas_conflict");
            assertThat(wire.call("kcas", "k/cas", "first\tsecond value\t")).as("an empty ttl is none").isEqualTo("ok");
            assertThat(wire.call("kcas", "k/cas", "first\tthird\t0")).isEqualTo("cas_conflict");
            assertThat(wire.call("kget", "k/cas", "")).isEqualTo("ok second value");
            assertThat(wire.call("kcas", "k/none", "old\tnew\t0")).as("an absent key is not 'old'").isEqualTo("cas_conflict");
            assertThat(wire.call("kget", "k/none", "")).isEqualTo("nil");

            assertThat(wire.call("kcas", "k/cas", "")).isEqualTo("error");
            assertThat(wire.call("kcas", "k/cas", "second value\tthird")).as("one tab").isEqualTo("error");
            assertThat(wire.call("kcas", "k/cas", "a\tb\tc\t0")).as("three tabs").isEqualTo("error");
            assertThat(wire.call("kcas", "k/cas", "second value\t\t0")).as("empty new value").isEqualTo("error");
            assertThat(wire.call("kcas", "k/cas", "second value\tthird\tsoon")).isEqualTo("error");
            assertThat(wire.call("kget", "k/cas", "")).isEqualTo("ok second value");
        }
    }

    @Test
    void aKeyWithATtlGoesAfterIt() throws IOException {
        try (TextWire wire = open()) {
            assertThat(wire.call("kset", "k/ttl", "brief\t1")).isEqualTo("ok");
            assertThat(wire.call("kcas", "k/ttl2", "\tbrief too\t1")).isEqualTo("ok");
            assertThat(wire.call("kset", "k/kept", "kept")).isEqualTo("ok");
            Await.until("k/ttl and k/ttl2 expired", LIMIT, () -> {
                try {
                    return wire.call("kget", "k/ttl", "").equals("nil") && wire.call("kget", "k/ttl2", "").equals("nil");
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(wire.call("kget", "k/kept", "")).isEqualTo("ok kept");
        }
    }

    @Test
    void listsPushPopAndRange() throws IOException {
        try (TextWire wire = open()) {
            assertThat(wire.call("llen", "l/a", "")).isEqualTo("ok 0");
            assertThat(wire.call("lrange", "l/a", "0 -1")).isEqualTo("ok []");
            assertThat(wire.call("lpop", "l/a", "")).isEqualTo("nil");
            assertThat(wire.call("rpop", "l/a", "")).isEqualTo("nil");
            assertThat(wire.call("rpush", "l/a", "a")).isEqualTo("ok 1");
            assertThat(wire.call("rpush", "l/a", "b c")).isEqualTo("ok 2");
            assertThat(wire.call("lpush", "l/a", "z")).isEqualTo("ok 3");
            assertThat(wire.call("rpush", "l/a", "d")).isEqualTo("ok 4");
            assertThat(wire.call("llen", "l/a", "")).isEqualTo("ok 4");
            assertThat(wire.call("lrange", "l/a", "0 -1")).isEqualTo("ok [\"z\",\"a\",\"b c\",\"d\"]");
            assertThat(wire.call("lrange", "l/a", "-3 -2")).isEqualTo("ok [\"a\",\"b c\"]");
            assertThat(wire.call("lrange", "l/a", "-100 0")).isEqualTo("ok [\"z\"]");
            assertThat(wire.call("lrange", "l/a", "2 100")).isEqualTo("ok [\"b c\",\"d\"]");
            assertThat(wire.call("lrange", "l/a", "3 1")).isEqualTo("ok []");
            assertThat(wire.call("lrange", "l/a", "-1 -1")).isEqualTo("ok [\"d\"]");
            assertThat(wire.call("lrange", "l/a", "0")).isEqualTo("error");
            assertThat(wire.call("lrange", "l/a", "0 x")).isEqualTo("error");
            assertThat(wire.call("lrange", "l/a", "0 1 2")).isEqualTo("error");
            assertThat(wire.call("lpush", "l/a", "")).isEqualTo("error");

            assertThat(wire.call("lpop", "l/a", "")).isEqualTo("ok z");
            assertThat(wire.call("rpop", "l/a", "")).isEqualTo("ok d");
            assertThat(wire.call("rpop", "l/a", "")).isEqualTo("ok b c");
            assertThat(wire.call("lpop", "l/a", "")).isEqualTo("ok a");
            assertThat(wire.call("lpop", "l/a", "")).isEqualTo("nil");
            assertThat(wire.call("llen", "l/a", "")).isEqualTo("ok 0");
        }
    }

    @Test
    void lrangeWritesJsonAsDflockdDoes() throws IOException {
        try (TextWire wire = open()) {
            assertThat(wire.call("rpush", "l/json", "say \"hi\" <&> \\")).isEqualTo("ok 1");
            assertThat(wire.call("rpush", "l/json", "tab\there")).isEqualTo("ok 2");
            assertThat(wire.call("rpush", "l/json", "ünï\u2028")).isEqualTo("ok 3");
            assertThat(wire.call("lrange", "l/json", "0 -1"))
                    .isEqualTo("ok [\"say \\\"hi\\\" \\u003c\\u0026\\u003e \\\\\",\"tab\\there\",\"ünï\\u2028\"]");
        }
    }

    @Test
    void oneNameMayBeACounterAKeyAListAndALock() throws IOException {
        try (TextWire wire = open()) {
            assertThat(wire.call("l", "shared", "0")).startsWith("ok ");
            assertThat(wire.call("incr", "shared", "1")).isEqualTo("ok 1");
            assertThat(wire.call("kset", "shared", "v")).isEqualTo("ok");
            assertThat(wire.call("rpush", "shared", "item")).isEqualTo("ok 1");
            assertThat(wire.call("get", "shared", "")).isEqualTo("ok 1");
            assertThat(wire.call("kget", "shared", "")).isEqualTo("ok v");
            assertThat(wire.call("lpop", "shared", "")).isEqualTo("ok item");
        }
    }

    @Test
    void blockingPopsWithoutWaiting() throws IOException {
        try (TextWire wire = open()) {
            assertThat(wire.call("blpop", "l/now", "0")).as("timeout 0 tries once").isEqualTo("nil");
            assertThat(wire.call("rpush", "l/now", "x")).isEqualTo("ok 1");
            assertThat(wire.call("rpush", "l/now", "y")).isEqualTo("ok 2");
            assertThat(wire.call("brpop", "l/now", "0")).isEqualTo("ok y");
            assertThat(wire.call("blpop", "l/now", "5")).as("an item there already").isEqualTo("ok x");
            assertThat(wire.call("blpop", "l/now", "")).isEqualTo("error");
            assertThat(wire.call("blpop", "l/now", "-1")).isEqualTo("error");
            assertThat(wire.call("blpop", "l/now", "soon")).isEqualTo("error");
        }
    }

    @Test
    void aBlockingPopAnswersNilAtItsTimeout() throws IOException {
        try (TextWire wire = open()) {
            long sent = System.nanoTime();
            assertThat(wire.call("brpop", "l/timeout", "1")).isEqualTo("nil");
            assertThat(Await.millisSince(sent)).as("waited its timeout").isGreaterThanOrEqualTo(1_000);
            assertThat(waiting("l/timeout")).as("the wait was withdrawn").isZero();
            assertThat(wire.call("rpush", "l/timeout", "later")).as("stored, handed to nobody").isEqualTo("ok 1");
            assertThat(wire.call("lpop", "l/timeout", "")).isEqualTo("ok later");
        }
    }

    @Test
    void blockedPopsAreServedByPushesInArrivalOrder() throws IOException {
        try (TextWire first = open(); TextWire second = open(); TextWire pusher = open()) {
            first.send("blpop", "l/fifo", "20");
            Await.until("the first pop waits", LIMIT, () -> waiting("l/fifo") == 1);
            second.send("brpop", "l/fifo", "20");
            Await.until("the second pop waits", LIMIT, () -> waiting("l/fifo") == 2);

            assertThat(pusher.call("rpush", "l/fifo", "one")).as("handed to a waiter: nothing stored").isEqualTo("ok 0");
            assertThat(first.answer()).isEqualTo("ok one");
            assertThat(pusher.call("lpush", "l/fifo", "two")).isEqualTo("ok 0");
            assertThat(second.answer()).isEqualTo("ok two");
            assertThat(pusher.call("llen", "l/fifo", "")).isEqualTo("ok 0");
            assertThat(first.call("get", "c/after", "")).as("the connection serves requests again").isEqualTo("ok 0");
        }
    }

    @Test
    void aBlockedPopWhoseConnectionIsResetLosesNoItem() throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", cluster.textPort(0)), 5_000);
        socket.setSoLinger(true, 0); // close() resets the connection
        TextWire gone = new TextWire(socket);
        gone.send("blpop", "l/reset", "30");
        Await.until("the pop waits", LIMIT, () -> waiting("l/reset") == 1);
        gone.close();
        Await.until("the closed connection's wait withdrawn", LIMIT, () -> waiting("l/reset") == 0);
        try (TextWire pusher = open(); TextWire other = open()) {
            assertThat(pusher.call("rpush", "l/reset", "kept")).as("stored, handed to nobody").isEqualTo("ok 1");
            assertThat(other.call("blpop", "l/reset", "5")).isEqualTo("ok kept");
        }
    }

    /**
     * A client that closes its socket normally (a FIN, not a reset) while its pop waits is gone:
     * its wait is withdrawn, and the item of the next push stays for another connection.
     */
    @Test
    void aBlockedPopWhoseClientClosesLosesNoItem() throws IOException {
        TextWire gone = open();
        gone.send("blpop", "l/gone", "30");
        Await.until("the pop waits", LIMIT, () -> waiting("l/gone") == 1);
        gone.close();
        Await.until("the closed connection's wait withdrawn", LIMIT, () -> waiting("l/gone") == 0);
        try (TextWire pusher = open(); TextWire other = open()) {
            assertThat(pusher.call("rpush", "l/gone", "kept")).as("stored, handed to nobody").isEqualTo("ok 1");
            assertThat(other.call("blpop", "l/gone", "5")).isEqualTo("ok kept");
        }
    }

    @Test
    void limitsOfKeysAndListLength() throws IOException {
        try (TextWire wire = TextWire.open(limited.textPort(0))) {
            assertThat(wire.call("incr", "a", "1")).isEqualTo("ok 1");
            assertThat(wire.call("kset", "b", "v")).isEqualTo("ok");
            assertThat(wire.call("rpush", "c", "x")).isEqualTo("ok 1");

            assertThat(wire.call("incr", "d", "1")).isEqualTo("error_max_keys");
            assertThat(wire.call("decr", "d", "1")).isEqualTo("error_max_keys");
            assertThat(wire.call("cset", "d", "1")).isEqualTo("error_max_keys");
            assertThat(wire.call("kset", "d", "v")).isEqualTo("error_max_keys");
            assertThat(wire.call("kcas", "d", "\tv\t0")).isEqualTo("error_max_keys");
            assertThat(wire.call("lpush", "d", "v")).isEqualTo("error_max_keys");
            assertThat(wire.call("rpush", "d", "v")).isEqualTo("error_max_keys");
            assertThat(wire.call("blpop", "d", "1")).isEqualTo("error_max_keys");
            assertThat(wire.call("get", "d", "")).as("reads create nothing").isEqualTo("ok 0");
            assertThat(wire.call("kget", "d", "")).isEqualTo("nil");
            assertThat(wire.call("llen", "d", "")).isEqualTo("ok 0");
            assertThat(wire.call("kcas", "d", "old\tv\t0")).as("cannot create: a conflict, not a limit").isEqualTo("cas_conflict");

            assertThat(wire.call("incr", "a", "1")).as("existing names are not refused").isEqualTo("ok 2");
            assertThat(wire.call("cset", "a", "7")).isEqualTo("ok");
            assertThat(wire.call("kset", "b", "w")).isEqualTo("ok");
            assertThat(wire.call("kcas", "b", "w\tz\t0")).isEqualTo("ok");
            assertThat(wire.call("rpush", "c", "y")).isEqualTo("ok 2");
            assertThat(wire.call("rpush", "c", "z")).isEqualTo("error_list_full");
            assertThat(wire.call("lpush", "c", "z")).isEqualTo("error_list_full");
            assertThat(wire.call("lrange", "c", "0 -1")).isEqualTo("ok [\"x\",\"y\"]");
            assertThat(wire.call("lpop", "c", "")).isEqualTo("ok x");
            assertThat(wire.call("lpush", "c", "w")).isEqualTo("ok 2");

            assertThat(wire.call("kdel", "b", "")).isEqualTo("ok");
            assertThat(wire.call("kset", "d", "now")).as("a key was freed").isEqualTo("ok");
            assertThat(wire.call("kget", "d", "")).isEqualTo("ok now");
        }
    }
}
