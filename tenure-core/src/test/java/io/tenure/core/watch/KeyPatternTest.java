package io.tenure.core.watch;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Random;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Seed 004's patterns: dot-separated tokens, {@code *} one whole token, {@code >} the trailing rest. */
class KeyPatternTest {

    @ParameterizedTest(name = "{0} against {1}: {2}")
    @CsvSource({
            "orders.created, orders.created, true",
            "orders.created, orders.deleted, false",
            "orders.created, orders.created.eu, false",
            "orders.*, orders.created, true",
            "orders.*, orders, false",
            "orders.*, orders.created.eu, false",
            "*.created, orders.created, true",
            "*.created, created, false",
            "a.*.c, a.b.c, true",
            "a.*.c, a.b.x.c, false",
            "orders.>, orders.created, true",
            "orders.>, orders.created.eu, true",
            "orders.>, orders, false",
            ">, orders, true",
            ">, orders.created, true",
            "*.*, a.b, true",
            "*.*, a, false",
            "*, a.b, false",
            "a.*.>, a.b.c.d, true",
            "a.*.>, a.b, false",
            "orders.created, orders.created., false",
            "orders.*, orders., false",
            "orders.>, orders., false",
            "ab.c, a.bc, false",
            "a*.c, ab.c, false",
            "a*.c, a*.c, true",
    })
    void matchesWholeTokens(String pattern, String name, boolean expected) {
        assertThat(KeyPattern.parse("pattern", pattern).matches(name)).isEqualTo(expected);
    }

    @Test
    void refusesMalformedPatternsNamingTheField() {
        assertThat(KeyPattern.check("pattern", "orders.>.eu")).contains("pattern").contains("'>'").contains("last");
        assertThat(KeyPattern.check("pattern", "orders..eu")).contains("pattern").contains("empty token");
        assertThat(KeyPattern.check("pattern", ".orders")).contains("empty token");
        assertThat(KeyPattern.check("pattern", "orders.")).contains("empty token");
        assertThat(KeyPattern.check("pattern", "")).isEqualTo("pattern must not be empty");
        assertThat(KeyPattern.check("pattern", "x".repeat(1025))).contains("over the limit");
        assertThatThrownBy(() -> KeyPattern.parse("pattern", "a.>.b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pattern");
        assertThat(KeyPattern.check("pattern", "orders.*.>")).isNull();
    }

    @Test
    void aChannelIsALiteral() {
        assertThat(KeyPattern.checkLiteral("channel", "orders.created")).isNull();
        assertThat(KeyPattern.checkLiteral("channel", "orders.*")).contains("channel").contains("wildcard");
        assertThat(KeyPattern.checkLiteral("channel", "orders.>")).contains("wildcard");
        assertThat(KeyPattern.checkLiteral("channel", "")).isEqualTo("channel must not be empty");
        assertThat(KeyPattern.parse("pattern", "a.b").isLiteral()).isTrue();
        assertThat(KeyPattern.parse("pattern", "a.*").isLiteral()).isFalse();
    }

    /** Against a regular expression written from the rule, on random names and patterns over a small alphabet. */
    @Test
    void agreesWithARegularExpressionOfTheRule() {
        Random random = new Random(7);
        String[] tokens = {"a", "b", "ab", "*", ">", ""};
        int checked = 0;
        for (int i = 0; i < 20_000; i++) {
            String pattern = join(random, tokens, 1 + random.nextInt(4));
            String name = join(random, new String[] {"a", "b", "ab", ""}, 1 + random.nextInt(5));
            if (KeyPattern.check("pattern", pattern) != null) {
                continue;
            }
            boolean expected = Pattern.matches(regex(pattern), name);
            assertThat(KeyPattern.parse("pattern", pattern).matches(name)).as(pattern + " against " + name).isEqualTo(expected);
            checked++;
        }
        assertThat(checked).isGreaterThan(5_000);
    }

    private static String join(Random random, String[] tokens, int count) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < count; i++) {
            if (i > 0) {
                s.append('.');
            }
            s.append(tokens[random.nextInt(tokens.length)]);
        }
        return s.toString();
    }

    private static String regex(String pattern) {
        StringBuilder r = new StringBuilder();
        String[] parts = pattern.split("\\.", -1);
        for (int i = 0; i < parts.length; i++) {
            if (i > 0) {
                r.append("\\.");
            }
            r.append(switch (parts[i]) {
                case "*" -> "[^.]+";
                case ">" -> "[^.]+(\\.[^.]+)*";
                default -> Pattern.quote(parts[i]);
            });
        }
        return r.toString();
    }
}
