package io.tenure.it.safety;

import io.tenure.it.FaultProxy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every client process reaches the cluster through links of its own ({@link FaultProxy}), one per
 * member slot, so that the nemesis can cut one client off (F7) without touching the members.
 * There is one slot more than the cluster has members, for a member that joins (F9); a removed
 * member's slot goes to the next one that joins. Clients are given the links' endpoints once, at
 * start, like an operator's endpoint list.
 */
final class ClientLinks implements AutoCloseable {
    private final int slotCount;
    private final Map<String, List<FaultProxy>> byClient = new LinkedHashMap<>();
    /** Which member each slot leads to (null: none). */
    private final String[] slotMember;
    /** The client port of each member ever assigned. */
    private final Map<String, Integer> portOf = new LinkedHashMap<>();
    /** The client address of each member ever assigned. */
    private final Map<String, String> hostOf = new LinkedHashMap<>();

    ClientLinks(int slotCount) {
        this.slotCount = slotCount;
        this.slotMember = new String[slotCount];
    }

    /** Creates the links of one client; returns the endpoints it should use. */
    synchronized List<String> add(String client) throws IOException {
        List<FaultProxy> links = new ArrayList<>();
        for (int i = 0; i < slotCount; i++) {
            FaultProxy link = new FaultProxy(client + "-" + i);
            String member = slotMember[i];
            link.upstream(member == null ? "127.0.0.1" : hostOf.get(member), member == null ? 0 : portOf.getOrDefault(member, 0));
            links.add(link);
        }
        byClient.put(client, links);
        return links.stream().map(FaultProxy::endpoint).toList();
    }

    /** Points a free slot (or the member's own) of every client at {@code member}'s client port. */
    synchronized void assign(String member, String host, int clientPort) {
        int slot = slotOf(member);
        if (slot < 0) {
            for (int i = 0; i < slotCount && slot < 0; i++) {
                if (slotMember[i] == null) {
                    slot = i;
                }
            }
        }
        if (slot < 0) {
            throw new IllegalStateException("no free link slot for " + member + " (slots: " + List.of(slotMember) + ")");
        }
        slotMember[slot] = member;
        portOf.put(member, clientPort);
        hostOf.put(member, host);
        for (List<FaultProxy> links : byClient.values()) {
            links.get(slot).upstream(host, clientPort);
        }
    }

    /** Frees {@code member}'s slot (it left the cluster); its links lead nowhere until another member takes it. */
    synchronized void unassign(String member) {
        int slot = slotOf(member);
        if (slot >= 0) {
            slotMember[slot] = null;
            for (List<FaultProxy> links : byClient.values()) {
                links.get(slot).upstream(0);
            }
        }
    }

    private int slotOf(String member) {
        for (int i = 0; i < slotCount; i++) {
            if (member.equals(slotMember[i])) {
                return i;
            }
        }
        return -1;
    }

    /** Cuts {@code client} off from every member: its connections stay open and carry nothing. */
    synchronized void blackhole(String client) {
        byClient.get(client).forEach(FaultProxy::blackhole);
    }

    synchronized void heal(String client) {
        byClient.get(client).forEach(FaultProxy::heal);
    }

    synchronized void healAll() {
        byClient.values().forEach(links -> links.forEach(FaultProxy::heal));
    }

    @Override
    public synchronized void close() {
        byClient.values().forEach(links -> links.forEach(FaultProxy::close));
    }
}
