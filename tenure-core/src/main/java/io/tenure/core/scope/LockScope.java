package io.tenure.core.scope;

import java.util.Objects;

/**
 * What a scoped lock covers (seed 003's {@code LockScope}): a name (today's locks), an inode, a
 * path, or a half-open byte range of an inode. Each is held shared or exclusive; two holds
 * {@linkplain #overlaps overlap} as the seed says, and conflict when they overlap and at least one
 * is exclusive.
 */
public sealed interface LockScope {

    /** A named lock, as today's: it overlaps the same name only. */
    record Named(String name) implements LockScope {
        public Named {
            Objects.requireNonNull(name, "name");
            if (name.isEmpty()) {
                throw new IllegalArgumentException("scope name must not be empty");
            }
        }

        @Override
        public String toString() {
            return "name " + name;
        }
    }

    /** A whole inode (file or directory): it overlaps the inode and every byte range of it. */
    record Inode(long inode) implements LockScope {
        public Inode {
            checkInode(inode);
        }

        @Override
        public String toString() {
            return "inode " + inode;
        }
    }

    /** A path, {@linkplain PathIndex#normalize normalized}: it overlaps itself, its ancestors and its descendants. */
    record Path(String path) implements LockScope {
        public Path {
            path = PathIndex.normalize(path);
        }

        @Override
        public String toString() {
            return "path " + path;
        }
    }

    /** Bytes {@code [start, end)} of an inode: it overlaps the inode and the ranges of it that share a byte. */
    record ByteRange(long inode, long start, long end) implements LockScope {
        public ByteRange {
            checkInode(inode);
            RangeIndex.check(start, end);
        }

        @Override
        public String toString() {
            return "range " + inode + ":" + start + "-" + end;
        }
    }

    /** Whether holding {@code a} and {@code b} at once would cover a common part (whatever the modes). */
    static boolean overlaps(LockScope a, LockScope b) {
        if (a instanceof Named x && b instanceof Named y) {
            return x.name().equals(y.name());
        }
        if (a instanceof Path x && b instanceof Path y) {
            return related(x.path(), y.path());
        }
        long inodeA = inodeOf(a);
        long inodeB = inodeOf(b);
        if (inodeA < 0 || inodeB < 0 || inodeA != inodeB) {
            return false;
        }
        if (a instanceof ByteRange x && b instanceof ByteRange y) {
            return x.start() < y.end() && y.start() < x.end();
        }
        return true; // the whole inode against the inode or a range of it
    }

    /** Whether holding {@code a} in mode {@code exclusiveA} keeps {@code b} in mode {@code exclusiveB} from being held. */
    static boolean conflicts(LockScope a, boolean exclusiveA, LockScope b, boolean exclusiveB) {
        return (exclusiveA || exclusiveB) && overlaps(a, b);
    }

    private static long inodeOf(LockScope scope) {
        if (scope instanceof Inode i) {
            return i.inode();
        }
        if (scope instanceof ByteRange r) {
            return r.inode();
        }
        return -1;
    }

    private static boolean related(String a, String b) {
        return a.equals(b) || a.equals("/") || b.equals("/") || a.startsWith(b + "/") || b.startsWith(a + "/");
    }

    private static void checkInode(long inode) {
        if (inode < 0) {
            throw new IllegalArgumentException("inode must not be negative, got " + inode);
        }
    }
}
