package io.tenure.core.signal;

/**
 * Publishes {@code payload} on {@code channel} (a name without wildcards): it goes to every
 * listener without a group whose pattern matches, and to one member of each group with a member
 * whose pattern matches. {@code requestId} (0 = none) names one publish of its client, the same
 * on every retry of it: a retry is answered as the first copy was and delivers nothing.
 */
public record SignalPublish(String channel, byte[] payload, long requestId) implements SignalCommand {
    public SignalPublish {
        payload = payload == null ? new byte[0] : payload;
    }
}
