package io.tenure.jraft;

import static org.assertj.core.api.Assertions.assertThat;

import com.alipay.sofa.jraft.JRaftServiceFactory;
import com.alipay.sofa.jraft.core.DefaultJRaftServiceFactory;
import com.alipay.sofa.jraft.rpc.ProtobufMsgFactory;
import com.alipay.sofa.jraft.rpc.RpcRequests.PingRequest;
import com.alipay.sofa.jraft.rpc.impl.BoltRaftRpcFactory;
import com.alipay.sofa.jraft.util.JRaftServiceLoader;
import com.alipay.sofa.jraft.util.RpcFactoryHelper;
import org.junit.jupiter.api.Test;

/** JRaft runs on its own, relocated protobuf-java; com.google.protobuf is protobuf-java 4. */
class RelocationTest {

  @Test
  void jraftMessagesAreBuiltOnTheRelocatedProtobuf() {
    assertThat(io.tenure.jraft.protobuf.Message.class).isAssignableFrom(PingRequest.class);
    assertThat(com.google.protobuf.Message.class.isAssignableFrom(PingRequest.class)).isFalse();
    ClassLoader loader = getClass().getClassLoader();
    assertThat(loader.getResource("io/tenure/jraft/protobuf/ZeroByteStringHelper.class")).isNotNull();
    assertThat(loader.getResource("com/google/protobuf/ZeroByteStringHelper.class")).isNull();
  }

  @Test
  void theMessagesOfRaftDescParseByTheirProtoNames() {
    PingRequest ping = PingRequest.newBuilder().setSendTimestamp(42).build();
    PingRequest parsed = ProtobufMsgFactory.newMessageByProtoClassName("jraft.PingRequest", ping.toByteArray());
    assertThat(parsed).isEqualTo(ping);
  }

  @Test
  void theServiceProvidersAreFound() {
    assertThat(RpcFactoryHelper.rpcFactory()).isInstanceOf(BoltRaftRpcFactory.class);
    assertThat(JRaftServiceLoader.load(JRaftServiceFactory.class).first()).isInstanceOf(DefaultJRaftServiceFactory.class);
  }
}
