package io.tenure.it.safety;

/**
 * One write the fenced resource received, as it logs it (one JSON object per line): the resource
 * accepts a write only with a token at least the highest it has accepted for that key, and logs
 * refusals too.
 *
 * @param key      the resource (named like its lock)
 * @param token    the fencing token the writer gave
 * @param value    the value written
 * @param writer   the client process, and the id of its WRITE operation ({@code c3/12345})
 * @param atNanos  when the resource decided, on the shared monotonic clock
 * @param accepted whether it was accepted
 */
public record ResourceWrite(String key, long token, long value, String writer, long atNanos, boolean accepted) {
}
