package io.tenure.client.fence;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The highest token accepted for written paths, in a trie of path components. A path overlaps
 * itself, its ancestors and its descendants, so a write to a path is checked against the tokens
 * of its ancestors (walking down to it) and the highest in its subtree (kept on every node).
 *
 * <p>Only what can still refuse a write is kept: accepting {@code token} for a path drops its
 * whole subtree (no token there is higher, and any write that overlapped one of them overlaps the
 * path too), and a path under an ancestor already holding {@code token} is not stored at all. So
 * every stored token is above its ancestors' (the trie holds at most one entry per path written
 * and not since covered by an ancestor's write, and the nodes on the way to them), and a check or
 * a write walks one path: {@code O(depth)}. Not thread-safe: the guard orders calls.
 */
final class PathFence {
    private final Node root = new Node();

    /** The highest token accepted for {@code path}, an ancestor or a descendant of it, or {@code 0}. */
    long highest(String path) {
        long highest = 0;
        Node node = root;
        for (String name : components(path)) {
            highest = Math.max(highest, node.own);
            node = node.children.get(name);
            if (node == null) {
                return highest; // nothing stored at or under the path
            }
        }
        return Math.max(highest, node.subtreeHighest);
    }

    /** Accepts {@code token} for {@code path}; the caller has checked that it is at least {@link #highest}. */
    void assign(String path, long token) {
        List<String> names = components(path);
        Node node = root;
        for (String name : names) {
            if (node.own >= token) {
                return; // an ancestor accepted this token, which fences the path already
            }
            node = node.children.get(name);
            if (node == null) {
                break;
            }
        }
        node = root;
        for (String name : names) {
            node.subtreeHighest = Math.max(node.subtreeHighest, token);
            node = node.children.computeIfAbsent(name, n -> new Node());
        }
        node.children.clear();
        node.own = token;
        node.subtreeHighest = token;
    }

    /** The paths stored with a token, for tests of the bound. */
    int size() {
        return count(root);
    }

    private static int count(Node node) {
        int count = node.own > 0 ? 1 : 0;
        for (Node child : node.children.values()) {
            count += count(child);
        }
        return count;
    }

    /** Whether {@code path} is {@code ancestor} or lies under it; both normalized. */
    static boolean isAncestorOrSelf(String ancestor, String path) {
        return ancestor.equals(path) || ancestor.equals("/") || path.startsWith(ancestor + "/");
    }

    /** The ancestors of a normalized path, root first, without the path itself: {@code /a/b} gives {@code /}, {@code /a}. */
    static List<String> strictAncestors(String path) {
        List<String> ancestors = new ArrayList<>();
        if (path.equals("/")) {
            return ancestors;
        }
        ancestors.add("/");
        for (int slash = path.indexOf('/', 1); slash > 0; slash = path.indexOf('/', slash + 1)) {
            ancestors.add(path.substring(0, slash));
        }
        return ancestors;
    }

    /** The names of a normalized path: none for {@code /}. */
    private static List<String> components(String path) {
        return path.equals("/") ? List.of() : List.of(path.substring(1).split("/"));
    }

    private static final class Node {
        private final Map<String, Node> children = new HashMap<>();
        private long own;            // the token accepted for this path itself, 0 if none
        private long subtreeHighest; // the highest own of this node and its descendants
    }
}
