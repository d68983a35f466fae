package io.tenure.core.scope;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The paths held in one tree (seed 003's {@code Path} scope), each shared or exclusive, named by
 * a hold id: which held paths a new claim conflicts with. A path conflicts with itself, its
 * ancestors and its descendants ({@code /a/b} with {@code /a} and {@code /a/b/c}), never with a
 * sibling ({@code /a/c}), when at least one of the two is exclusive. Paths are given
 * {@linkplain #normalize normalized}.
 *
 * <p>A trie of path components; each node counts the holds in its subtree, and the exclusive
 * ones among them. A conflict query walks down the claim's path (the ancestors' holds) and then
 * into the subtree under it only where the counts say a conflicting hold is: O(depth + k) for
 * k answers, however many paths are held elsewhere. Children are kept in name order and a
 * node's holds by hold id, so answers come in the same order on every replica: ancestors from
 * the root down, the path itself, then its descendants depth first in name order.
 *
 * <p>Not thread-safe.
 */
public final class PathIndex {
    /** The longest path accepted, in characters after normalization. */
    public static final int MAX_PATH_LENGTH = 4096;

    private static final class Node {
        final String name;
        final Node parent;
        final TreeMap<String, Node> children = new TreeMap<>();
        /** hold id → exclusive, of the holds on exactly this path. */
        final TreeMap<Long, Boolean> holds = new TreeMap<>();
        int subtreeHolds;
        int subtreeExclusive;

        Node(String name, Node parent) {
            this.name = name;
            this.parent = parent;
        }
    }

    /** A held path as {@link #conflicts} answers it. */
    public record Held(long hold, String path, boolean exclusive) {}

    private final Node root = new Node("", null);
    private final Map<Long, Node> byHold = new HashMap<>();

    /**
     * A path in its one written form: absolute, components separated by one {@code /}, without
     * {@code .} components, with each {@code ..} taking away the component before it, and without
     * a trailing {@code /} (the root is {@code /}).
     *
     * @throws IllegalArgumentException naming what is wrong: null or empty, not starting with
     *         {@code /}, holding a NUL or another control character, a {@code ..} above the
     *         root, or longer than {@value #MAX_PATH_LENGTH} characters
     */
    public static String normalize(String path) {
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException("path must not be empty");
        }
        if (path.charAt(0) != '/') {
            throw new IllegalArgumentException("path must be absolute (start with /), got \"" + printable(path) + "\"");
        }
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                throw new IllegalArgumentException("path must not hold control characters (NUL included), found \\u"
                        + String.format("%04x", (int) c) + " at " + i + " in \"" + printable(path) + "\"");
            }
        }
        List<String> parts = new ArrayList<>();
        for (String part : path.split("/")) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                if (parts.isEmpty()) {
                    throw new IllegalArgumentException("path goes above the root with ..: \"" + printable(path) + "\"");
                }
                parts.remove(parts.size() - 1);
                continue;
            }
            parts.add(part);
        }
        String normal = "/" + String.join("/", parts);
        if (normal.length() > MAX_PATH_LENGTH) {
            throw new IllegalArgumentException("path is longer than " + MAX_PATH_LENGTH + " characters after normalization ("
                    + normal.length() + ")");
        }
        return normal;
    }

    private static String printable(String path) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < path.length() && out.length() < 200; i++) {
            char c = path.charAt(i);
            out.append(c < 0x20 || c == 0x7f ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return out.toString();
    }

    public int size() {
        return byHold.size();
    }

    public boolean isEmpty() {
        return byHold.isEmpty();
    }

    /** Whether hold {@code hold} has a path here. */
    public boolean holds(long hold) {
        return byHold.containsKey(hold);
    }

    /**
     * Records that hold {@code hold} holds {@code path} (normalized here).
     *
     * @throws IllegalArgumentException for a bad path, or a hold that already has one here
     */
    public void add(long hold, String path, boolean exclusive) {
        String normal = normalize(path);
        if (byHold.containsKey(hold)) {
            throw new IllegalArgumentException("hold " + hold + " already holds a path of this tree");
        }
        Node node = root;
        for (String part : components(normal)) {
            Node parent = node;
            node = parent.children.computeIfAbsent(part, name -> new Node(name, parent));
        }
        node.holds.put(hold, exclusive);
        for (Node n = node; n != null; n = n.parent) {
            n.subtreeHolds++;
            if (exclusive) {
                n.subtreeExclusive++;
            }
        }
        byHold.put(hold, node);
    }

    /** Forgets hold {@code hold}'s path; whether it had one. Nodes left with nothing under them go. */
    public boolean remove(long hold) {
        Node node = byHold.remove(hold);
        if (node == null) {
            return false;
        }
        boolean exclusive = node.holds.remove(hold);
        for (Node n = node; n != null; n = n.parent) {
            n.subtreeHolds--;
            if (exclusive) {
                n.subtreeExclusive--;
            }
        }
        for (Node n = node; n != root && n.subtreeHolds == 0; n = n.parent) {
            n.parent.children.remove(n.name);
        }
        return true;
    }

    /**
     * The held paths that conflict with a claim of {@code path} (normalized here): those on the
     * path, its ancestors and its descendants, of any mode when the claim is exclusive, the
     * exclusive ones when it is shared.
     */
    public List<Held> conflicts(String path, boolean exclusive) {
        List<Held> out = new ArrayList<>();
        collect(normalize(path), exclusive, out, Integer.MAX_VALUE);
        return out;
    }

    /** Whether any held path conflicts with a claim of {@code path} (stops at the first). */
    public boolean conflictsWithAny(String path, boolean exclusive) {
        List<Held> out = new ArrayList<>(1);
        collect(normalize(path), exclusive, out, 1);
        return !out.isEmpty();
    }

    private void collect(String normal, boolean exclusive, List<Held> out, int limit) {
        Node node = root;
        StringBuilder walked = new StringBuilder();
        addHolds(node, "/", exclusive, out, limit);
        for (String part : components(normal)) {
            node = node.children.get(part);
            if (node == null) {
                return; // nothing is held at or under the claimed path
            }
            walked.append('/').append(part);
            addHolds(node, walked.toString(), exclusive, out, limit);
        }
        for (Node child : node.children.values()) {
            descend(child, normal.equals("/") ? "/" + child.name : normal + "/" + child.name, exclusive, out, limit);
        }
    }

    private static void descend(Node node, String path, boolean exclusive, List<Held> out, int limit) {
        if (out.size() >= limit || (exclusive ? node.subtreeHolds : node.subtreeExclusive) == 0) {
            return;
        }
        addHolds(node, path, exclusive, out, limit);
        for (Node child : node.children.values()) {
            descend(child, path + "/" + child.name, exclusive, out, limit);
        }
    }

    private static void addHolds(Node node, String path, boolean exclusive, List<Held> out, int limit) {
        for (Map.Entry<Long, Boolean> hold : node.holds.entrySet()) {
            if (out.size() >= limit) {
                return;
            }
            if (exclusive || hold.getValue()) {
                out.add(new Held(hold.getKey(), path, hold.getValue()));
            }
        }
    }

    private static List<String> components(String normal) {
        return normal.equals("/") ? List.of() : List.of(normal.substring(1).split("/"));
    }
}
