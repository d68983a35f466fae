package io.tenure.core.access;

/** Switches authentication on; refused until a user with the role root exists. */
public record AuthEnable() implements AccessCommand {
    public static final AuthEnable INSTANCE = new AuthEnable();
}
