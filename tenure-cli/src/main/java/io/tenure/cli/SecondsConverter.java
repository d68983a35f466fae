package io.tenure.cli;

import java.time.Duration;
import picocli.CommandLine.TypeConversionException;

/**
 * dflockd's durations: a bare number is whole seconds ({@code --read-timeout 23}), as dflockd takes
 * them; a number with a unit ({@code 500ms}, {@code 2m}) reads as {@link DurationConverter} reads it.
 */
final class SecondsConverter extends DurationConverter {
    @Override
    public Duration convert(String text) {
        String value = text.strip();
        if (value.matches("\\d+")) {
            try {
                return Duration.ofSeconds(Long.parseLong(value));
            } catch (NumberFormatException e) {
                throw new TypeConversionException("'" + text + "' is too many seconds");
            }
        }
        return super.convert(text);
    }
}
