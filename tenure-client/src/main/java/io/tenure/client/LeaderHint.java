package io.tenure.client;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.UnlockResponse;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The leader a member named in an answer's header ({@link Endpoints#leaderNamed}): every response
 * of every kind that carries a {@link ResponseHeader} in its {@code header} field, so that calls
 * of every kind (counters and keys as well as locks) move to the leader rather than be forwarded
 * to it by a follower.
 */
final class LeaderHint {
    /** Each response type's {@code header} field, or empty when it has none of type ResponseHeader. */
    private static final Map<Descriptor, Optional<FieldDescriptor>> HEADERS = new ConcurrentHashMap<>();

    private LeaderHint() {
    }

    /** The leader's client endpoint from the header of {@code response}, or "" when it names none. */
    static String of(Object response) {
        // The two most frequent answers without a descriptor lookup.
        if (response instanceof LockResponse r) {
            return r.getHeader().getLeaderEndpoint();
        } else if (response instanceof UnlockResponse r) {
            return r.getHeader().getLeaderEndpoint();
        }
        if (!(response instanceof Message message)) {
            return "";
        }
        Optional<FieldDescriptor> header = HEADERS.computeIfAbsent(message.getDescriptorForType(), LeaderHint::headerField);
        if (header.isEmpty() || !message.hasField(header.get())) {
            return "";
        }
        return ((ResponseHeader) message.getField(header.get())).getLeaderEndpoint();
    }

    private static Optional<FieldDescriptor> headerField(Descriptor type) {
        FieldDescriptor field = type.findFieldByName("header");
        return field != null && field.getJavaType() == FieldDescriptor.JavaType.MESSAGE && !field.isRepeated()
                && field.getMessageType().equals(ResponseHeader.getDescriptor()) ? Optional.of(field) : Optional.empty();
    }
}
