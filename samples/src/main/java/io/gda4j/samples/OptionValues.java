package io.gda4j.samples;

import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The one rule for option values, strict everywhere: a list is comma-separated with no empty element and no element
 * given twice (except where a repeat means something: {@code --gpus 0,0} puts two ranks on GPU 0), and a number is a
 * whole number inside the range its option states (a count is at least 1: there is no "0 means default").
 */
final class OptionValues {
    private OptionValues() {
    }

    /**
     * The stripped elements of {@code text}, the value of {@code --option}.
     *
     * @param repeatsAllowed whether an element may appear twice (compared without regard to case)
     * @throws UsageException for an empty list, an empty element or a repeat that is not allowed
     */
    static List<String> list(String option, String text, boolean repeatsAllowed) {
        List<String> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (String part : text.split(",", -1)) {
            String p = part.strip();
            if (p.isEmpty()) {
                throw new UsageException("--" + option + " '" + text + "' has an empty element: separate the values"
                        + " with single commas, e.g. --" + option + " a,b");
            }
            if (!seen.add(p.toLowerCase(Locale.ROOT)) && !repeatsAllowed) {
                throw new UsageException("--" + option + " '" + text + "' names " + p + " twice");
            }
            out.add(p);
        }
        return out;
    }

    /**
     * Refuses an option given twice ({@code --iters 5 --iters abc}): which one should win is a guess, so neither does.
     *
     * @throws UsageException naming the option and both values
     */
    static void refuseRepeats(CommandLine cmd) {
        Set<String> seen = new HashSet<>();
        for (Option o : cmd.getOptions()) {
            String key = o.getKey();
            if (!seen.add(key)) {
                String[] values = cmd.getOptionValues(key);
                throw new UsageException(Main.optionNames(o) + " is given " + (values == null ? "twice"
                        : "twice ('" + String.join("' and '", values) + "')") + ": give it once");
            }
        }
    }

    /**
     * The whole number {@code --name} gives, or {@code absent} when it is not given ({@code absent} need not lie in
     * the range: it may stand for "computed").
     *
     * @throws UsageException when the value is not a whole number from {@code min} to {@code max}
     */
    static int integer(CommandLine cmd, String name, int absent, int min, int max) {
        String v = cmd.getOptionValue(name);
        if (v == null) {
            return absent;
        }
        long n;
        try {
            n = Long.parseLong(v.strip());
        } catch (NumberFormatException e) {
            n = Long.MIN_VALUE;
        }
        if (n < min || n > max) {
            throw new UsageException("--" + name + " accepts a whole number from " + min + " to " + max + ", got '" + v
                    + "'");
        }
        return (int) n;
    }
}
