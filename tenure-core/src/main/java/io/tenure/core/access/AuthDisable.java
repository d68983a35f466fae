package io.tenure.core.access;

/** Switches authentication off. */
public record AuthDisable() implements AccessCommand {
    public static final AuthDisable INSTANCE = new AuthDisable();
}
