package io.tenure.it.safety;

/**
 * One line of {@code nemesis.jsonl}: a fault began or ended.
 *
 * @param atNanos when, on the shared monotonic clock
 * @param fault   its kind (for example {@code kill}, {@code pause}, {@code partition})
 * @param phase   {@code start} or {@code end}
 * @param target  what it hit: a member or client process name, several separated by commas, or {@code all}
 * @param detail  free text
 */
public record FaultEvent(long atNanos, String fault, String phase, String target, String detail) {

    public boolean isStart() {
        return "start".equals(phase);
    }

    public boolean isEnd() {
        return "end".equals(phase);
    }
}
