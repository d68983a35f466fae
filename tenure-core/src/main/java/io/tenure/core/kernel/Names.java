package io.tenure.core.kernel;

import java.util.HashMap;
import java.util.Map;

/**
 * The one namespace of the grant-queue kinds (locks, semaphores, and the kinds to come): a name
 * that exists as one kind refuses a request of another, with a message naming both. Each
 * primitive takes a name when it creates the resource and frees it when the resource goes, and
 * takes its names again when it reads its snapshot section, so this is never written itself.
 * Looked up, never iterated.
 */
public final class Names {
    private final Map<String, String> kinds = new HashMap<>();

    /**
     * Null when {@code name} is free or exists as {@code kind}; otherwise the refusal, naming both
     * kinds (for example "'jobs/a' is a lock, not a semaphore").
     */
    public String mismatch(String name, String kind) {
        String existing = kinds.get(name);
        if (existing == null || existing.equals(kind)) {
            return null;
        }
        return "'" + name + "' is " + article(existing) + existing + ", not " + article(kind) + kind
                + " (a name is of one kind while it is held or waited for)";
    }

    private static String article(String kind) {
        return "aeiou".indexOf(kind.charAt(0)) >= 0 ? "an " : "a ";
    }

    /** {@code name} now exists as {@code kind}; the caller checked {@link #mismatch} first. */
    public void take(String name, String kind) {
        String before = kinds.putIfAbsent(name, kind);
        if (before != null && !before.equals(kind)) {
            throw new IllegalStateException("'" + name + "' is already a " + before + ", not a " + kind);
        }
    }

    /** {@code name} no longer exists as {@code kind}. */
    public void free(String name, String kind) {
        kinds.remove(name, kind);
    }

    /** How many names exist, over every kind. */
    public int size() {
        return kinds.size();
    }
}
