package io.tenure.jraft;

import com.alipay.sofa.jraft.Node;
import com.alipay.sofa.jraft.RaftGroupService;
import com.alipay.sofa.jraft.conf.Configuration;
import com.alipay.sofa.jraft.entity.PeerId;
import com.alipay.sofa.jraft.option.NodeOptions;
import com.alipay.sofa.jraft.option.RaftOptions;
import com.alipay.sofa.jraft.rpc.RaftRpcServerFactory;
import com.alipay.sofa.jraft.rpc.RpcServer;
import com.alipay.sofa.jraft.rpc.impl.BoltRpcServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One JRaft member on 127.0.0.1: its own bolt server bound to that address only, fsync on every log
 * write, and its log, meta and snapshots under {@code dir}.
 */
final class RaftMember {
  static final String HOST = "127.0.0.1";
  static final int ELECTION_TIMEOUT_MS = 1000;

  final PeerId id;
  final RecordingStateMachine stateMachine;
  /** System.nanoTime() just before and just after RaftGroupService.start(). */
  final long startNanos;
  final long startedNanos;
  private final RaftGroupService service;
  private final Node node;

  private RaftMember(PeerId id, RecordingStateMachine stateMachine, long startNanos, long startedNanos,
      RaftGroupService service, Node node) {
    this.id = id;
    this.stateMachine = stateMachine;
    this.startNanos = startNanos;
    this.startedNanos = startedNanos;
    this.service = service;
    this.node = node;
  }

  static RaftMember start(String group, PeerId id, Configuration conf, Path dir) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    RecordingStateMachine stateMachine = new RecordingStateMachine();
    RaftOptions raftOptions = new RaftOptions();
    raftOptions.setSync(true);
    NodeOptions options = new NodeOptions();
    options.setFsm(stateMachine);
    options.setInitialConf(conf);
    options.setElectionTimeoutMs(ELECTION_TIMEOUT_MS);
    options.setRaftOptions(raftOptions);
    options.setLogUri(dir.resolve("log").toString());
    options.setRaftMetaUri(dir.resolve("meta").toString());
    options.setSnapshotUri(dir.resolve("snapshot").toString());

    RpcServer rpcServer = new BoltRpcServer(new com.alipay.remoting.rpc.RpcServer(HOST, id.getPort(), true));
    RaftRpcServerFactory.addRaftRequestProcessors(rpcServer);
    // not shared: start() starts the RPC server and shutdown() stops it
    RaftGroupService service = new RaftGroupService(group, id, options, rpcServer, false);
    long startNanos = System.nanoTime();
    Node node = service.start();
    long startedNanos = System.nanoTime();
    if (node == null) {
      throw new IllegalStateException("member " + id + " did not start");
    }
    return new RaftMember(id, stateMachine, startNanos, startedNanos, service, node);
  }

  static PeerId freePeer() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
      return new PeerId(HOST, socket.getLocalPort());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Node node() {
    return node;
  }

  boolean isLeader() {
    return node.isLeader();
  }

  /** Stops the member and waits until its log and state machine are closed. */
  void stop() throws InterruptedException {
    service.shutdown();
    service.join();
  }
}
