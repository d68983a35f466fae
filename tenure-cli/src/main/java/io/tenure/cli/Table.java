package io.tenure.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** Rows printed in aligned columns under a header, two blanks apart, no trailing blanks. */
final class Table {
    private final List<String[]> rows = new ArrayList<>();
    private final boolean[] rightAligned;

    /** {@code columns}: the header; a name starting with '>' is right-aligned (numbers), without the '>'. */
    Table(String... columns) {
        rightAligned = new boolean[columns.length];
        String[] header = new String[columns.length];
        for (int i = 0; i < columns.length; i++) {
            rightAligned[i] = columns[i].startsWith(">");
            header[i] = rightAligned[i] ? columns[i].substring(1) : columns[i];
        }
        rows.add(header);
    }

    Table row(Object... cells) {
        String[] row = new String[rightAligned.length];
        for (int i = 0; i < row.length; i++) {
            Object cell = i < cells.length ? cells[i] : null;
            String text = cell == null || cell.toString().isEmpty() ? "-" : cell.toString();
            // One row per line, whatever a name holds.
            row[i] = text.replace('\n', ' ').replace('\r', ' ');
        }
        rows.add(row);
        return this;
    }

    void print(PrintWriter out) {
        int[] widths = new int[rightAligned.length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                if (i > 0) {
                    line.append("  ");
                }
                String pad = " ".repeat(widths[i] - row[i].length());
                line.append(rightAligned[i] ? pad + row[i] : row[i] + pad);
            }
            out.println(line.toString().stripTrailing());
        }
        out.flush();
    }
}
