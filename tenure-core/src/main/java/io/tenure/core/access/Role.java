package io.tenure.core.access;

import java.util.List;

/** A role: its permissions, sorted by kind and prefix. */
public record Role(String name, List<Permission> permissions) {
    public Role {
        permissions = List.copyOf(permissions);
    }
}
