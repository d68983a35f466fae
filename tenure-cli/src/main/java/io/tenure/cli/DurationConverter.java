package io.tenure.cli;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads durations the way people type them: {@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h},
 * combinations like {@code 1m30s}, decimals like {@code 1.5s}, and a bare {@code 0}. A bare
 * number other than 0 is refused: {@code --ttl 10} could mean seconds or milliseconds.
 * Negative durations are refused; commands decide themselves whether zero makes sense.
 */
public class DurationConverter implements ITypeConverter<Duration> {
    private static final Pattern WHOLE = Pattern.compile("(?:\\d+(?:\\.\\d+)?(?:ms|s|m|h))+");
    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)");

    @Override
    public Duration convert(String text) {
        String value = text.trim().toLowerCase(Locale.ROOT);
        if (value.equals("0")) {
            return Duration.ZERO;
        }
        if (value.startsWith("-")) {
            throw new TypeConversionException("'" + text + "' is negative; a duration must be 0 or more");
        }
        if (!WHOLE.matcher(value).matches()) {
            throw new TypeConversionException("'" + text + "' is not a duration: use a number and a unit,"
                    + " like 500ms, 10s, 2m or 1h");
        }
        BigDecimal nanos = BigDecimal.ZERO;
        Matcher part = PART.matcher(value);
        while (part.find()) {
            nanos = nanos.add(new BigDecimal(part.group(1)).multiply(BigDecimal.valueOf(nanosPer(part.group(2)))));
        }
        try {
            return Duration.ofNanos(nanos.longValueExact());
        } catch (ArithmeticException e) {
            throw new TypeConversionException("'" + text + "' is too long, or finer than a nanosecond");
        }
    }

    private static long nanosPer(String unit) {
        return switch (unit) {
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            default -> throw new IllegalStateException("unit " + unit);
        };
    }

    /** A duration, or {@code forever} (converted to null: no limit). */
    public static class OrForever extends DurationConverter {
        @Override
        public Duration convert(String text) {
            return text.trim().equalsIgnoreCase("forever") ? null : super.convert(text);
        }
    }
}
