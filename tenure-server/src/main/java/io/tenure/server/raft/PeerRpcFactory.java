package io.tenure.server.raft;

import com.alipay.remoting.config.BoltClientOption;
import com.alipay.remoting.config.BoltServerOption;
import com.alipay.sofa.jraft.option.CliOptions;
import com.alipay.sofa.jraft.option.NodeOptions;
import com.alipay.sofa.jraft.option.RpcOptions;
import com.alipay.sofa.jraft.rpc.RpcClient;
import com.alipay.sofa.jraft.rpc.impl.BoltRaftRpcFactory;
import com.alipay.sofa.jraft.rpc.impl.BoltRpcClient;
import com.alipay.sofa.jraft.util.SPI;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;
import java.nio.file.Path;

/**
 * JRaft's bolt transport, with mutual TLS on the connections of a member whose options carry a
 * peer key store ({@link TlsNodeOptions}, {@link TlsCliOptions}). JRaft makes the clients of a
 * node (votes, replication) and of its CLI service (membership) itself, through the one factory
 * it finds as a service (this one: its priority is above bolt's own); the options a client is made
 * with say whether it speaks TLS, so members with and without TLS can share a JVM (the in-process
 * test clusters do). Without a key store, the clients are bolt's, unchanged.
 */
@SPI(priority = 1)
public final class PeerRpcFactory extends BoltRaftRpcFactory {

    /** Where a member's PKCS#12 peer key store is, and its password: read by bolt when a server or client starts. */
    public record KeyStoreFile(Path path, char[] password) {}

    /** Options that carry a peer key store; {@code null}: plain TCP. */
    interface Secured {
        KeyStoreFile peerKeyStore();
    }

    /** A node's options with the key store its replication and vote clients present. */
    static final class TlsNodeOptions extends NodeOptions implements Secured {
        private final KeyStoreFile keyStore;

        TlsNodeOptions(KeyStoreFile keyStore) {
            this.keyStore = keyStore;
        }

        @Override
        public KeyStoreFile peerKeyStore() {
            return keyStore;
        }
    }

    /** A CLI service's options (membership changes, leadership transfer) with the same key store. */
    static final class TlsCliOptions extends CliOptions implements Secured {
        private final KeyStoreFile keyStore;

        TlsCliOptions(KeyStoreFile keyStore) {
            this.keyStore = keyStore;
        }

        @Override
        public KeyStoreFile peerKeyStore() {
            return keyStore;
        }
    }

    @Override
    public ConfigHelper<RpcClient> defaultJRaftClientConfigHelper(RpcOptions options) {
        ConfigHelper<RpcClient> base = super.defaultJRaftClientConfigHelper(options);
        if (!(options instanceof Secured secured) || secured.peerKeyStore() == null) {
            return base;
        }
        return client -> {
            if (base != null) {
                base.config(client);
            }
            secure(((BoltRpcClient) client).getRpcClient(), secured.peerKeyStore());
        };
    }

    /** Makes a bolt client present the member's certificate and trust only the peer CA (before it starts). */
    static void secure(com.alipay.remoting.rpc.RpcClient client, KeyStoreFile keyStore) {
        client.option(BoltClientOption.CLI_SSL_ENABLE, true);
        client.option(BoltClientOption.CLI_SSL_KEYSTORE_TYPE, "PKCS12");
        client.option(BoltClientOption.CLI_SSL_KEYSTORE, keyStore.path().toString());
        client.option(BoltClientOption.CLI_SSL_KEYSTORE_PASS, new String(keyStore.password()));
        client.option(BoltClientOption.CLI_SSL_TMF_ALGO, TrustManagerFactory.getDefaultAlgorithm());
        // bolt's client reads its key manager's algorithm from the server option.
        client.option(BoltServerOption.SRV_SSL_KMF_ALGO, KeyManagerFactory.getDefaultAlgorithm());
    }

    /** Makes a bolt server speak TLS only, with the member's certificate, and ask every peer for one the CA signed. */
    static void secure(com.alipay.remoting.rpc.RpcServer server, KeyStoreFile keyStore) {
        server.option(BoltServerOption.SRV_SSL_ENABLE, true);
        server.option(BoltServerOption.SRV_SSL_NEED_CLIENT_AUTH, true);
        server.option(BoltServerOption.SRV_SSL_KEYSTORE_TYPE, "PKCS12");
        server.option(BoltServerOption.SRV_SSL_KEYSTORE, keyStore.path().toString());
        server.option(BoltServerOption.SRV_SSL_KEYSTORE_PASS, new String(keyStore.password()));
        server.option(BoltServerOption.SRV_SSL_KMF_ALGO, KeyManagerFactory.getDefaultAlgorithm());
    }
}
