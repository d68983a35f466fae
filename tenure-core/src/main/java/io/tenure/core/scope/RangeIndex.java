package io.tenure.core.scope;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The byte ranges held on one inode (seed 003's {@code ByteRange}), each half-open
 * {@code [start, end)}, shared or exclusive, named by a hold id: which held ranges a new claim
 * conflicts with. Two ranges conflict when they overlap and at least one is exclusive
 * (POSIX-style); ranges that only touch ({@code [0,100)} and {@code [100,200)}) do not overlap.
 *
 * <p>An interval tree: a treap ordered by (start, hold id), each node knowing the largest end in
 * its subtree, and the largest end of an exclusive range there. A conflict query visits only
 * subtrees that can hold an overlapping (and, for a shared claim, exclusive) range, so it costs
 * O(log n + k) for k answers; adding and removing cost O(log n). The shape depends only on what
 * is held (a node's priority is a hash of its hold id), and answers come in (start, hold id)
 * order: replicas that applied the same commands answer alike.
 *
 * <p>Not thread-safe.
 */
public final class RangeIndex {
    private static final long NONE = Long.MIN_VALUE;

    private static final class Node {
        final long start;
        final long end;
        final long hold;
        final boolean exclusive;
        final long priority;
        Node left;
        Node right;
        long maxEnd;
        long maxExclusiveEnd;

        Node(long start, long end, long hold, boolean exclusive) {
            this.start = start;
            this.end = end;
            this.hold = hold;
            this.exclusive = exclusive;
            this.priority = mix(hold);
        }

        void update() {
            long max = end;
            long maxExclusive = exclusive ? end : NONE;
            if (left != null) {
                max = Math.max(max, left.maxEnd);
                maxExclusive = Math.max(maxExclusive, left.maxExclusiveEnd);
            }
            if (right != null) {
                max = Math.max(max, right.maxEnd);
                maxExclusive = Math.max(maxExclusive, right.maxExclusiveEnd);
            }
            maxEnd = max;
            maxExclusiveEnd = maxExclusive;
        }

        boolean before(long otherStart, long otherHold) {
            return start < otherStart || (start == otherStart && hold < otherHold);
        }
    }

    /** A held range as {@link #conflicts} answers it. */
    public record Held(long hold, long start, long end, boolean exclusive) {}

    private Node root;
    private final Map<Long, Node> byHold = new HashMap<>();

    /**
     * Checks a range as a claim would give it: {@code 0 <= start < end}.
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static void check(long start, long end) {
        if (start < 0) {
            throw new IllegalArgumentException("range start must not be negative, got " + start);
        }
        if (end <= start) {
            throw new IllegalArgumentException("range end must be above its start (ranges are half-open [start, end)), got ["
                    + start + ", " + end + ")");
        }
    }

    public int size() {
        return byHold.size();
    }

    public boolean isEmpty() {
        return byHold.isEmpty();
    }

    /** Whether hold {@code hold} has a range here. */
    public boolean holds(long hold) {
        return byHold.containsKey(hold);
    }

    /**
     * Records that hold {@code hold} holds {@code [start, end)}.
     *
     * @throws IllegalArgumentException for a bad range, or a hold that already has one here
     */
    public void add(long hold, long start, long end, boolean exclusive) {
        check(start, end);
        if (byHold.containsKey(hold)) {
            throw new IllegalArgumentException("hold " + hold + " already holds a range of this inode");
        }
        Node node = new Node(start, end, hold, exclusive);
        node.update();
        Node[] parts = split(root, start, hold);
        root = merge(merge(parts[0], node), parts[1]);
        byHold.put(hold, node);
    }

    /** Forgets hold {@code hold}'s range; whether it had one. */
    public boolean remove(long hold) {
        Node node = byHold.remove(hold);
        if (node == null) {
            return false;
        }
        root = removeExact(root, node);
        return true;
    }

    /** {@code tree} without {@code node}, found by its key: O(depth). */
    private static Node removeExact(Node tree, Node node) {
        if (tree == null) {
            return null;
        }
        if (tree == node) {
            return merge(tree.left, tree.right);
        }
        if (node.before(tree.start, tree.hold)) {
            tree.left = removeExact(tree.left, node);
        } else {
            tree.right = removeExact(tree.right, node);
        }
        tree.update();
        return tree;
    }

    /**
     * The held ranges that conflict with a claim of {@code [start, end)}: those overlapping it,
     * of any mode when the claim is exclusive, the exclusive ones when it is shared; in
     * (start, hold) order.
     */
    public List<Held> conflicts(long start, long end, boolean exclusive) {
        check(start, end);
        List<Held> out = new ArrayList<>();
        collect(root, start, end, exclusive, out, Integer.MAX_VALUE);
        return out;
    }

    /** Whether any held range conflicts with a claim of {@code [start, end)} (stops at the first). */
    public boolean conflictsWithAny(long start, long end, boolean exclusive) {
        check(start, end);
        List<Held> out = new ArrayList<>(1);
        collect(root, start, end, exclusive, out, 1);
        return !out.isEmpty();
    }

    private static void collect(Node node, long start, long end, boolean exclusive, List<Held> out, int limit) {
        if (node == null || out.size() >= limit) {
            return;
        }
        long reach = exclusive ? node.maxEnd : node.maxExclusiveEnd;
        if (reach <= start) {
            return; // nothing in this subtree (of the mode that matters) ends after the claim starts
        }
        collect(node.left, start, end, exclusive, out, limit);
        if (node.start >= end || out.size() >= limit) {
            return; // this node and everything to its right starts at or after the claim's end
        }
        if (node.end > start && (exclusive || node.exclusive)) {
            out.add(new Held(node.hold, node.start, node.end, node.exclusive));
        }
        collect(node.right, start, end, exclusive, out, limit);
    }

    /** Splits {@code tree} into the nodes before (start, hold) and those at or after it. */
    private static Node[] split(Node tree, long start, long hold) {
        if (tree == null) {
            return new Node[2];
        }
        if (tree.before(start, hold)) {
            Node[] parts = split(tree.right, start, hold);
            tree.right = parts[0];
            tree.update();
            return new Node[] {tree, parts[1]};
        }
        Node[] parts = split(tree.left, start, hold);
        tree.left = parts[1];
        tree.update();
        return new Node[] {parts[0], tree};
    }

    /** Joins two treaps, every node of {@code a} before every node of {@code b}. */
    private static Node merge(Node a, Node b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        if (a.priority > b.priority) {
            a.right = merge(a.right, b);
            a.update();
            return a;
        }
        b.left = merge(a, b.left);
        b.update();
        return b;
    }

    /** SplitMix64's finalizer: a hold id's priority, the same on every replica. */
    private static long mix(long x) {
        x = (x ^ (x >>> 30)) * 0xbf58476d1ce4e5b9L;
        x = (x ^ (x >>> 27)) * 0x94d049bb133111ebL;
        return x ^ (x >>> 31);
    }
}
