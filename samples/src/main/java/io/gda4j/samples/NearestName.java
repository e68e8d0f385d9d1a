package io.gda4j.samples;

import java.util.Collection;
import java.util.Locale;

/** The known name nearest to a misspelt one: for settings nobody reads and options no command has. */
final class NearestName {
    private NearestName() {
    }

    /**
     * The name of {@code known} nearest to {@code name} (edit distance, case and {@code _}/{@code .} ignored), or
     * null where even the nearest differs in more than a third of its characters.
     */
    static String of(String name, Collection<String> known) {
        String key = fold(name);
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String k : known) {
            int d = editDistance(key, fold(k));
            if (d < bestDistance) {
                best = k;
                bestDistance = d;
            }
        }
        return best != null && bestDistance <= Math.max(1, key.length() / 3) ? best : null;
    }

    private static String fold(String name) {
        return name.toLowerCase(Locale.ROOT).replace("_", "").replace(".", "");
    }

    /** Levenshtein distance, a swap of two neighbours counting once (TRANSPROT is one step from TRANSPORT). */
    static int editDistance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
