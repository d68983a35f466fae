package io.tenure.core.member;

import io.tenure.core.kernel.Command;

/**
 * Records where a member serves clients, so any member can name the leader's endpoint. Each
 * member announces its own once it has a leader, and again when it changes.
 */
public record MemberEndpoint(String member, String clientEndpoint) implements Command {}
