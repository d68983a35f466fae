package io.tenure.core.access;

/** Takes role {@code role} from user {@code user}. */
public record UserRevokeRole(String user, String role) implements AccessCommand {}
