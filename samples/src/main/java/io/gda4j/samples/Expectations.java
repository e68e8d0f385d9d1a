package io.gda4j.samples;

import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code --expect COLUMN<=VALUE,COLUMN>=VALUE}: thresholds a run must meet, checked on every row that measured the
 * column, summed up in one verdict line; a run that misses one exits {@link #EXIT_MISSED}. Checked against the
 * command's columns before any GPU work, so a misspelt column costs no sweep.
 */
final class Expectations {
    /** The exit code of a run that completed but missed an expectation (0 done, 1 failed, 2 bad input). */
    static final int EXIT_MISSED = 3;
    private static final Pattern ONE = Pattern.compile("(.+?)(<=|>=)(.+)");

    /**
     * One threshold.
     *
     * @param column the column it applies to
     * @param atMost true for {@code <=}, false for {@code >=}
     * @param limit  the value
     */
    record Expectation(String column, boolean atMost, double limit) {
        boolean holds(double v) {
            return atMost ? v <= limit : v >= limit;
        }

        @Override
        public String toString() {
            return column + (atMost ? " <= " : " >= ") + plain(limit);
        }
    }

    /**
     * What the run came to.
     *
     * @param met  every expectation held on every row that measured it
     * @param line the one-line verdict
     */
    record Verdict(boolean met, String line) {
        int exitCode() {
            return met ? 0 : EXIT_MISSED;
        }
    }

    private final List<Expectation> expectations;

    /** Whether an expectation is about {@code column}. */
    boolean names(String column) {
        return expectations.stream().anyMatch(e -> e.column().equals(column));
    }

    private Expectations(List<Expectation> expectations) {
        this.expectations = List.copyOf(expectations);
    }

    static void addOption(Options o, String example) {
        o.addOption(Option.builder().longOpt("expect").hasArg().argName("LIST")
                .desc("thresholds, e.g. " + example + ": a verdict line follows the results, and a run that misses one"
                        + " exits " + EXIT_MISSED).build());
    }

    /** The {@code --expect} of {@code cmd}, or null without one; {@code columns}: the numbers the command prints. */
    static Expectations of(CommandLine cmd, Collection<String> columns) {
        return cmd.hasOption("expect") ? parse(cmd.getOptionValue("expect"), columns) : null;
    }

    static Expectations parse(String text, Collection<String> columns) {
        List<Expectation> out = new ArrayList<>();
        for (String part : OptionValues.list("expect", text, false)) {
            Matcher m = ONE.matcher(part);
            if (!m.matches()) {
                throw new UsageException("--expect '" + part + "' is not COLUMN<=VALUE or COLUMN>=VALUE, e.g. "
                        + "median_us<=3.5");
            }
            String column = m.group(1).strip();
            if (!columns.contains(column)) {
                String near = NearestName.of(column, columns);
                throw new UsageException("--expect: this command prints no column '" + column + "'"
                        + (near == null ? "" : " (did you mean " + near + "?)") + "; its figures are "
                        + String.join(", ", columns));
            }
            double limit;
            try {
                limit = Double.parseDouble(m.group(3).strip());
            } catch (NumberFormatException e) {
                limit = Double.NaN;
            }
            if (!Double.isFinite(limit) || !m.group(3).strip().matches("[-+]?[0-9]*\\.?[0-9]+([eE][-+]?[0-9]+)?")) {
                throw new UsageException("--expect '" + part + "': '" + m.group(3).strip() + "' is not a decimal number");
            }
            out.add(new Expectation(column, m.group(2).equals("<="), limit));
        }
        return new Expectations(out);
    }

    /**
     * Checks every expectation on every row of {@code table} that has a number in its column; an expectation no row
     * measured is missed too (a threshold that checks nothing must not pass). {@code label} names a row in the line.
     */
    Verdict verdict(ResultTable table, java.util.function.Function<List<Object>, String> label) {
        List<String> missed = new ArrayList<>();
        List<String> met = new ArrayList<>();
        for (Expectation e : expectations) {
            int col = table.columns().indexOf(e.column());
            int checked = 0;
            int failed = 0;
            String worst = null;
            double worstValue = Double.NaN;
            for (List<Object> row : table.rows()) {
                Object cell = col < 0 ? null : row.get(col);
                if (!(cell instanceof Number n) || !Double.isFinite(n.doubleValue())) {
                    continue;
                }
                double v = n.doubleValue();
                checked++;
                if (!e.holds(v)) {
                    failed++;
                    if (worst == null || (e.atMost() ? v > worstValue : v < worstValue)) {
                        worst = label.apply(row);
                        worstValue = v;
                    }
                }
            }
            if (checked == 0) {
                missed.add(e + ": no row measured it");
            } else if (failed > 0) {
                missed.add(String.format(Locale.ROOT, "%s: %d of %d rows miss it, the worst %s at %s", e, failed,
                        checked, plain(worstValue), worst));
            } else {
                met.add(e + " (" + checked + (checked == 1 ? " row)" : " rows)"));
            }
        }
        return missed.isEmpty() ? new Verdict(true, "expect: PASS " + String.join("; ", met))
                : new Verdict(false, "expect: FAIL " + String.join("; ", missed));
    }

    /** A figure in full but without trailing zeros: 10, 0.0001, 3.2951612903225805. */
    static String plain(double v) {
        return java.math.BigDecimal.valueOf(v).stripTrailingZeros().toPlainString();
    }

    /**
     * Prints {@code table} and, with expectations, the verdict: under a table on stdout, or on stderr where stdout
     * is CSV or JSON for a program; returns the run's exit code.
     */
    static int report(ResultTable table, ResultTable.Format format, Expectations expect,
                      java.util.function.Function<List<Object>, String> label, java.io.PrintStream out,
                      java.io.PrintStream err) {
        Verdict v = expect == null ? null : expect.verdict(table, label);
        if (v != null && format != ResultTable.Format.TABLE) {
            table.header().put("expect", v.line());
        }
        table.print(out, format);
        if (v == null) {
            return 0;
        }
        (format == ResultTable.Format.TABLE ? out : err).println(v.line());
        return v.exitCode();
    }
}
