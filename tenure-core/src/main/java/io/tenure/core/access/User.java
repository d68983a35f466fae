package io.tenure.core.access;

import java.util.SortedMap;
import java.util.SortedSet;

/**
 * A user: the stored form of its password (the server's hash; the core never sees a password),
 * its roles, and its bearer tokens by the token's hash, each with when it stops working
 * (milliseconds since the epoch on the issuing member's clock; 0: never).
 */
public record User(String name, String passwordHash, SortedSet<String> roles, SortedMap<String, Long> tokens) {
    public User {
        roles = java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(roles));
        tokens = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(tokens));
    }
}
