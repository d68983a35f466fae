package io.tenure.cli;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A size in bytes as people write it: {@code 131072}, {@code 512B}, {@code 128KiB}, {@code 1MiB}
 * (binary units; {@code KB} and {@code MB} are refused rather than guessed at), up to 2 GiB - 1.
 */
final class SizeConverter implements ITypeConverter<Integer> {
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*(b|kib|mib)?");

    @Override
    public Integer convert(String text) {
        Matcher m = SIZE.matcher(text.strip().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new TypeConversionException("'" + text + "' is not a size: use bytes, or a number and KiB or MiB,"
                    + " like 131072, 128KiB or 1MiB");
        }
        long unit = m.group(2) == null || m.group(2).equals("b") ? 1 : m.group(2).equals("kib") ? 1024 : 1024 * 1024;
        try {
            long bytes = Math.multiplyExact(Long.parseLong(m.group(1)), unit);
            if (bytes > Integer.MAX_VALUE) {
                throw new ArithmeticException();
            }
            return (int) bytes;
        } catch (ArithmeticException | NumberFormatException e) {
            throw new TypeConversionException("'" + text + "' is too large: at most 2 GiB - 1");
        }
    }
}
