package io.tenure.server;

import io.tenure.client.SignalListener;
import io.tenure.client.Subscription;
import io.tenure.client.TenureClient;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Signals in a cluster of three: a listener on any member receives what is published on any
 * member, in publish order; a queue group spread over members gets each signal once; and a
 * listener whose member stops listens again on another one, without being counted twice.
 */
class SignalClusterTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @RegisterExtension
    final TenureExtension tenure = TenureExtension.of(TenureCluster.builder().members(3).electionTimeout(ServerConfig.DEFAULT_ELECTION_TIMEOUT));

    private static final class Received implements SignalListener {
        final List<String> payloads = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void onSignal(String channel, byte[] payload) {
            payloads.add(new String(payload, StandardCharsets.UTF_8));
        }
    }

    /** A client whose preferred member is {@code index} (the others follow, for failover). */
    private TenureClient clientOf(int index) {
        TenureCluster cluster = tenure.cluster();
        List<String> endpoints = new ArrayList<>();
        for (int i = 0; i < cluster.size(); i++) {
            endpoints.add(cluster.endpoint((index + i) % cluster.size()));
        }
        return cluster.newClient(endpoints);
    }

    @Test
    void listenersOnEveryMemberReceiveWhatAnyMemberPublishesInOrder() throws Exception {
        TenureCluster cluster = tenure.cluster();
        List<Received> listeners = new ArrayList<>();
        for (int m = 0; m < 3; m++) {
            Received r = new Received();
            clientOf(m).topic().listen("deploys.>", r).started().get(20, TimeUnit.SECONDS);
            listeners.add(r);
        }
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            TenureClient publisher = clientOf(i % 3); // publishes through every member in turn
            assertThat(publisher.topic().publish("deploys.web", "d" + i)).isEqualTo(3);
            sent.add("d" + i);
        }
        Await.until("every listener got all 60", WAIT, () -> listeners.stream().allMatch(r -> r.payloads.size() >= 60));
        for (Received r : listeners) {
            assertThat(r.payloads).as("in publish order, once each").containsExactlyElementsOf(sent);
        }
        assertThat(cluster.size()).isEqualTo(3);
    }

    @Test
    void aGroupOverSeveralMembersGetsEachSignalOnceAndAMovedListenerIsNotCountedTwice() throws Exception {
        TenureCluster cluster = tenure.cluster();
        int leader = cluster.leader();
        int follower = (leader + 1) % 3;
        Received onFollower = new Received();
        Received onLeader = new Received();
        Subscription moving = clientOf(follower).topic().listen("tasks.*", "pool", onFollower);
        moving.started().get(20, TimeUnit.SECONDS);
        clientOf(leader).topic().listen("tasks.*", "pool", onLeader).started().get(20, TimeUnit.SECONDS);
        TenureClient publisher = clientOf(leader);
        for (int i = 0; i < 20; i++) {
            assertThat(publisher.topic().publish("tasks.t", "t" + i)).as("one of the pool").isEqualTo(1);
        }
        Await.until("20 tasks handed out", WAIT, () -> onFollower.payloads.size() + onLeader.payloads.size() == 20);
        assertThat(onFollower.payloads).hasSize(10);
        assertThat(onLeader.payloads).hasSize(10);

        cluster.stop(follower); // the first listener's member: it listens again on another one
        Await.until("the moved listener takes its turns again", WAIT, () -> {
            int before = onFollower.payloads.size();
            publisher.topic().publish("tasks.t", "probe");
            publisher.topic().publish("tasks.t", "probe");
            return onFollower.payloads.size() > before || onFollower.payloads.size() > 10;
        });
        assertThat(moving.isOpen()).isTrue();
        // Two listeners in the pool, not three: the registration on the stopped member was replaced.
        // Counted by payload: a probe still on its way must not count as one of these ten.
        for (int i = 0; i < 10; i++) {
            publisher.topic().publish("tasks.t", "after" + i);
        }
        Await.until("10 more handed out", WAIT, () -> after(onFollower) + after(onLeader) == 10);
        assertThat(after(onFollower)).isEqualTo(5);
        assertThat(after(onLeader)).isEqualTo(5);
    }

    /** How many of the last ten signals ({@code after0} to {@code after9}) {@code received} got. */
    private static long after(Received received) {
        synchronized (received.payloads) {
            return received.payloads.stream().filter(p -> p.startsWith("after")).count();
        }
    }
}
