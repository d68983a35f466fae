package io.tenure.client;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;

/**
 * What a lock covers (seed 003's lock scopes): a {@linkplain #named name} (a plain lock), an
 * {@linkplain #inode inode}, a {@linkplain #path path}, or a {@linkplain #byteRange byte range}
 * of an inode. Two scopes {@linkplain #overlaps overlap} when they cover a common part: a path its
 * ancestors and descendants (not its siblings), an inode every range of it, two ranges of one
 * inode when they share a byte. Held shared or exclusive, they conflict when they overlap and one
 * is exclusive.
 *
 * <p>Made only through the factories, which check the arguments and normalize a path as the
 * member does ({@code //}, {@code .}, {@code ..}, a trailing {@code /}), so equal scopes are equal
 * objects.
 */
public sealed interface Scope {
    /** The longest path, after normalization, in characters. */
    int MAX_PATH_LENGTH = 4096;

    /** A plain lock's name. */
    static Scope named(String name) {
        return new Named(name);
    }

    /** A whole inode (file or directory), {@code inode >= 0}. */
    static Scope inode(long inode) {
        return new Inode(inode);
    }

    /** An absolute path, normalized; refused when empty, relative, above the root, with a control character, or too long. */
    static Scope path(String path) {
        return new Path(normalize(path));
    }

    /** Bytes {@code [start, end)} of {@code inode}: {@code 0 <= start < end}. */
    static Scope byteRange(long inode, long start, long end) {
        return new ByteRange(inode, start, end);
    }

    /** Whether this scope and {@code other} cover a common part. */
    boolean overlaps(Scope other);

    /** A plain lock's name. */
    record Named(String name) implements Scope {
        public Named {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("scope name must not be blank");
            }
        }

        @Override
        public boolean overlaps(Scope other) {
            return equals(other);
        }

        @Override
        public String toString() {
            return "name " + name;
        }
    }

    /** A whole inode. */
    record Inode(long inode) implements Scope {
        public Inode {
            checkInode(inode);
        }

        @Override
        public boolean overlaps(Scope other) {
            return (other instanceof Inode i && i.inode == inode) || (other instanceof ByteRange r && r.inode() == inode);
        }

        @Override
        public String toString() {
            return "inode " + inode;
        }
    }

    /** A normalized absolute path. */
    record Path(String path) implements Scope {
        public Path {
            if (!normalize(path).equals(path)) {
                throw new IllegalArgumentException("path \"" + path + "\" is not normalized: use Scope.path");
            }
        }

        @Override
        public boolean overlaps(Scope other) {
            if (!(other instanceof Path p)) {
                return false;
            }
            String a = path;
            String b = p.path;
            return a.equals(b) || a.equals("/") || b.equals("/") || a.startsWith(b + "/") || b.startsWith(a + "/");
        }

        @Override
        public String toString() {
            return "path " + path;
        }
    }

    /** Bytes {@code [start, end)} of an inode. */
    record ByteRange(long inode, long start, long end) implements Scope {
        public ByteRange {
            checkInode(inode);
            if (start < 0) {
                throw new IllegalArgumentException("range start must not be negative, got " + start);
            }
            if (end <= start) {
                throw new IllegalArgumentException("range end must be above its start, got [" + start + ", " + end + ")");
            }
        }

        @Override
        public boolean overlaps(Scope other) {
            if (other instanceof Inode i) {
                return i.inode() == inode;
            }
            return other instanceof ByteRange r && r.inode == inode && r.start < end && start < r.end;
        }

        /** Whether this range holds every byte of {@code other} (same inode). */
        public boolean covers(ByteRange other) {
            return other.inode == inode && start <= other.start && other.end <= end;
        }

        @Override
        public String toString() {
            return "range " + inode + ":" + start + "-" + end;
        }
    }

    private static void checkInode(long inode) {
        if (inode < 0) {
            throw new IllegalArgumentException("inode must not be negative, got " + inode);
        }
    }

    private static String normalize(String path) {
        Objects.requireNonNull(path, "path");
        if (path.isEmpty() || path.charAt(0) != '/') {
            throw new IllegalArgumentException("path must be absolute (start with /), got \"" + path + "\"");
        }
        Deque<String> parts = new ArrayDeque<>();
        for (String part : path.split("/", -1)) {
            if (part.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
                throw new IllegalArgumentException("path must not hold control characters (NUL included)");
            }
            if (part.equals("..")) {
                if (parts.pollLast() == null) {
                    throw new IllegalArgumentException("path goes above the root with ..: \"" + path + "\"");
                }
            } else if (!part.isEmpty() && !part.equals(".")) {
                parts.addLast(part);
            }
        }
        String normal = "/" + String.join("/", parts);
        if (normal.length() > MAX_PATH_LENGTH) {
            throw new IllegalArgumentException("path is longer than " + MAX_PATH_LENGTH + " characters after normalization");
        }
        return normal;
    }
}
