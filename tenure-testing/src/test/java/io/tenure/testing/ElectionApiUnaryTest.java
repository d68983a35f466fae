package io.tenure.testing;

import io.tenure.client.TenureClient;
import org.junit.jupiter.api.AfterEach;

/**
 * {@link ElectionApiTest} with a client made with {@code sessionStream(false)}: every call of the
 * elections goes as its unary RPC, so that path stays covered beside the session stream.
 */
class ElectionApiUnaryTest extends ElectionApiTest {
    private TenureClient unary;

    @Override
    synchronized TenureClient client() {
        if (unary == null) {
            unary = TenureClient.builder().endpoints(tenure.endpoints()).sessionStream(false).build();
        }
        return unary;
    }

    @AfterEach
    void closeClient() {
        if (unary != null) {
            unary.close();
        }
    }
}
