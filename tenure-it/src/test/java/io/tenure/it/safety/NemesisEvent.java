package io.tenure.it.safety;

/**
 * One line of {@code nemesis.jsonl}: a fault began or ended.
 *
 * @param atNanos when, on the shared monotonic clock ({@link System#nanoTime()})
 * @param fault   the fault kind, {@code F1} ... {@code F11}
 * @param phase   {@code start} or {@code end}
 * @param target  what it hit: a member ({@code n2}), several ({@code n1,n3}), a client process ({@code c4}), or {@code all}
 * @param detail  what exactly was done, for a person reading the timeline (the pause length, the skew, what recovered when)
 */
public record NemesisEvent(long atNanos, String fault, String phase, String target, String detail) {
    public static final String START = "start";
    public static final String END = "end";
    /**
     * A request sent to the minority side of a partition while it is cut off (F6); the detail
     * starts with {@link #REFUSED} or {@link #SERVED}, and a served one is a safety violation.
     */
    public static final String PROBE = "probe";
    public static final String REFUSED = "refused";
    public static final String SERVED = "SERVED";
}
