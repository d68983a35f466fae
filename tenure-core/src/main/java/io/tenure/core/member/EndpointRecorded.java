package io.tenure.core.member;

import io.tenure.core.kernel.Result;

/** A member's client endpoint was recorded. */
public record EndpointRecorded(String member, String clientEndpoint) implements Result {}
