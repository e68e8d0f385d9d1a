package io.gda4j.samples;

import io.gda4j.world.ByteSize;

import java.util.ArrayList;
import java.util.List;

/**
 * Message sizes from the command line: a list ({@code 8,64,4k}), a doubling range ({@code 8:1m}), or both mixed
 * ({@code 8:64,1m}). Sorted; an empty element, or a size given twice (also one a range already holds:
 * {@code 8:1m,16}), is refused ({@link OptionValues}).
 */
final class SizeList {
    private SizeList() {
    }

    static List<Long> parse(String text, long min, long max) {
        List<Long> out = new ArrayList<>();
        for (String p : OptionValues.list("sizes", text, false)) {
            int colon = p.indexOf(':');
            try {
                if (colon >= 0) {
                    long lo = ByteSize.parse(p.substring(0, colon));
                    long hi = ByteSize.parse(p.substring(colon + 1));
                    if (lo <= 0 || hi < lo) {
                        throw new UsageException("size range '" + p + "' must go from a positive size up, e.g. 8:1m");
                    }
                    for (long s = lo; s <= hi && s > 0; s *= 2) {
                        out.add(s);
                    }
                } else {
                    out.add(ByteSize.parse(p));
                }
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage(), e);
            }
        }
        if (out.isEmpty()) {
            throw new UsageException("no sizes in '" + text + "': give a list like 8,64,4k or a range like 8:1m");
        }
        for (long s : out) {
            if (s < min || s > max) {
                throw new UsageException("size " + ByteSize.format(s) + " is outside " + ByteSize.format(min) + " .. "
                        + ByteSize.format(max));
            }
        }
        java.util.Set<Long> seen = new java.util.HashSet<>();
        for (long s : out) {
            if (!seen.add(s)) {
                throw new UsageException("--sizes '" + text + "' gives " + ByteSize.format(s) + " twice: list each"
                        + " size once (a range FROM:TO holds FROM, 2 x FROM, 4 x FROM ... up to TO)");
            }
        }
        return out.stream().sorted().toList();
    }
}
