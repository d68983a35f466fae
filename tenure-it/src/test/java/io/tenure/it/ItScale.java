package io.tenure.it;

/**
 * How long the fault tests run. CI runs the short form; {@code mvn -B -ntp test -pl tenure-it
 * -Pfaults-long} (or {@code -Dtenure.it.scale=long}) runs the long one. Each figure can also be
 * set on its own with {@code -Dtenure.it.<name>=N}.
 */
final class ItScale {
    static final String SCALE = System.getProperty("tenure.it.scale", "ci");
    static final boolean LONG = SCALE.equals("long");

    private ItScale() {
    }

    /** {@code -Dtenure.it.<name>} if given, else {@code ci} or {@code longForm} by the scale. */
    static int of(String name, int ci, int longForm) {
        return Integer.getInteger("tenure.it." + name, LONG ? longForm : ci);
    }
}
