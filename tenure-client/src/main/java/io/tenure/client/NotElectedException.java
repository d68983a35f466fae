package io.tenure.client;

/**
 * A campaign was not elected within the caller's timeout. Nothing is held: the candidacy was
 * withdrawn. Carries who led and how many candidates were ahead when the server answered.
 */
public class NotElectedException extends TenureException {
    private final String name;
    private final String leader;
    private final long candidates;

    public NotElectedException(String name, String leader, long candidates) {
        super("election '" + name + "': not elected" + (leader.isEmpty() ? "" : " ('" + leader + "' leads")
                + (candidates > 0 ? (leader.isEmpty() ? " (" : ", ") + candidates + " candidates ahead" : "")
                + (leader.isEmpty() && candidates == 0 ? "" : ")"));
        this.name = name;
        this.leader = leader;
        this.candidates = candidates;
    }

    public String name() {
        return name;
    }

    /** The leader's client id when the attempt ended; empty when unknown. */
    public String leader() {
        return leader;
    }

    /** The candidates queued when the attempt ended. */
    public long candidates() {
        return candidates;
    }
}
