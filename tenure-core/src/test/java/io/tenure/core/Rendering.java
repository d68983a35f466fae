package io.tenure.core;

import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.Collection;
import java.util.stream.Collectors;

/**
 * Renders results, effects and views as text that compares by value. The records of the core
 * carry arrays ({@code byte[]} metadata, {@code long[]} lease ids), whose {@code equals} is
 * identity, so two equal outcomes from two replicas are compared through this rendering.
 */
final class Rendering {
    private Rendering() {}

    static String of(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof byte[] b) {
            return "bytes" + Arrays.toString(b);
        }
        if (value instanceof long[] l) {
            return Arrays.toString(l);
        }
        if (value instanceof int[] i) {
            return Arrays.toString(i);
        }
        if (value instanceof Collection<?> c) {
            return c.stream().map(Rendering::of).collect(Collectors.joining(", ", "[", "]"));
        }
        if (value instanceof Record r) {
            StringBuilder out = new StringBuilder(r.getClass().getSimpleName()).append('(');
            RecordComponent[] components = r.getClass().getRecordComponents();
            for (int i = 0; i < components.length; i++) {
                if (i > 0) {
                    out.append(", ");
                }
                out.append(components[i].getName()).append('=').append(of(read(components[i], r)));
            }
            return out.append(')').toString();
        }
        return String.valueOf(value);
    }

    private static Object read(RecordComponent component, Record record) {
        try {
            return component.getAccessor().invoke(record);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("cannot read " + component, e);
        }
    }
}
