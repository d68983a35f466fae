package io.tenure.core.kv;

import java.util.List;

/**
 * One page of a listing by prefix, in key order; {@code more} when keys with the prefix remain
 * after the last one here: ask again with it as {@code afterKey}.
 */
public record KvPage(List<KvView> entries, boolean more) {
    public KvPage {
        entries = List.copyOf(entries);
    }

    /** The key to continue after, or "" when the page is empty. */
    public String lastKey() {
        return entries.isEmpty() ? "" : entries.get(entries.size() - 1).key();
    }
}
