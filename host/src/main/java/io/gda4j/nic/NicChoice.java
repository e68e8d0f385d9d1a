package io.gda4j.nic;

import java.util.Locale;

/** What {@code --nic} asks for. */
public enum NicChoice {
    /** The real mlx5 NIC when one is found, else the emulated NIC. */
    AUTO,
    /** The real mlx5 NIC; fail when there is none. */
    MLX5,
    /** The emulated NIC, even where a real one exists. */
    EMULATED;

    /** The word users type. */
    public String word() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code auto|mlx5|emulated} (any case). */
    public static NicChoice parse(String word) {
        for (NicChoice c : values()) {
            if (c.word().equalsIgnoreCase(word.trim())) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown NIC '" + word + "': choose auto, mlx5 or emulated");
    }
}
