package io.tenure.bench;

import io.tenure.client.TenureClient;
import java.util.ArrayList;
import java.util.List;

/** A few shared SDK instances (each is one connection per member); client {@code i} uses {@code get(i)}. */
final class SdkClients implements AutoCloseable {
    /** Clients per SDK instance: a real application shares one TenureClient across many threads. */
    static final int CLIENTS_PER_SDK = 16;
    static final int MAX_SDKS = 4;

    private final List<TenureClient> sdks = new ArrayList<>();

    SdkClients(Members members, int clients, String clientId) {
        this(members, clients, clientId, false);
    }

    /** @param unaryLockCalls each lock call a unary RPC, instead of in the SDK's session stream */
    SdkClients(Members members, int clients, String clientId, boolean unaryLockCalls) {
        int n = Math.min(MAX_SDKS, (clients + CLIENTS_PER_SDK - 1) / CLIENTS_PER_SDK);
        for (int i = 0; i < n; i++) {
            sdks.add(members.client(members.endpoints()).clientId(clientId + "-" + i).sessionStream(!unaryLockCalls).build());
        }
    }

    TenureClient get(int client) {
        return sdks.get(client % sdks.size());
    }

    int size() {
        return sdks.size();
    }

    @Override
    public void close() {
        sdks.forEach(TenureClient::close);
    }
}
