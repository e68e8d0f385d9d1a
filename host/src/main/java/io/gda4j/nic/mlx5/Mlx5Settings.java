package io.gda4j.nic.mlx5;

import io.gda4j.config.Setting;
import io.gda4j.nic.NicOptions;
import io.gda4j.verbs.VerbsConstants;

import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;

/**
 * The mlx5 NIC's own settings: each from its system property, else its environment variable, else the default
 * ({@link Setting}), resolved once per {@link Mlx5Nic#open} ({@link #resolve()}, which throws a
 * {@link io.gda4j.config.SettingException} naming the variable or property of a bad value); {@code gda4j info}
 * prints {@link #SETTINGS}.
 *
 * @param gidIndex        the RoCE GID index to use, or {@link #GID_AUTO}: prefer a RoCE v2 GID with an IPv4 address
 * @param maxPathMtu      the largest path MTU ({@code IBV_MTU_*}) a QP is connected with; the port's active MTU
 *                        caps it further
 * @param relaxedOrdering register memory with {@code IBV_ACCESS_RELAXED_ORDERING}: faster GPUDirect on some
 *                        platforms, but a signal WRITE may then overtake the data before it, so off by default
 * @param dmabuf          try {@code ibv_reg_dmabuf_mr} for GPU memory before {@code ibv_reg_mr} through
 *                        nvidia-peermem; off forces the peer-memory path
 */
public record Mlx5Settings(int gidIndex, int maxPathMtu, boolean relaxedOrdering, boolean dmabuf) {
    public static final String GID_INDEX_PROP_NAME = "gda4j.mlx5.gidIndex";
    public static final String GID_INDEX_ENV = "GDA4J_MLX5_GID_INDEX";
    public static final String GID_INDEX_DEFAULT = "auto";

    public static final String MTU_PROP_NAME = "gda4j.mlx5.mtu";
    public static final String MTU_ENV = "GDA4J_MLX5_MTU";
    public static final String MTU_DEFAULT = "4096";

    public static final String RELAXED_ORDERING_PROP_NAME = "gda4j.mlx5.relaxedOrdering";
    public static final String RELAXED_ORDERING_ENV = "GDA4J_MLX5_RELAXED_ORDERING";
    public static final String RELAXED_ORDERING_DEFAULT = "false";

    public static final String DMABUF_PROP_NAME = "gda4j.mlx5.dmabuf";
    public static final String DMABUF_ENV = "GDA4J_MLX5_DMABUF";
    public static final String DMABUF_DEFAULT = "auto";

    /** {@link #gidIndex()}: choose the GID ({@link GidSelection}). */
    public static final int GID_AUTO = -1;

    public static final Setting<Integer> GID_INDEX = Setting.of("mlx5 RoCE GID index", GID_INDEX_PROP_NAME,
            GID_INDEX_ENV, GID_INDEX_DEFAULT, "auto or a GID index from 0 (show_gids lists them)",
            Mlx5Settings::parseGidIndex).displayedAs(i -> i == GID_AUTO ? "auto" : Integer.toString(i));
    public static final Setting<Integer> MTU = Setting.of("mlx5 largest path MTU (bytes)", MTU_PROP_NAME, MTU_ENV,
            MTU_DEFAULT, "one of 256, 512, 1024, 2048, 4096", Mlx5Settings::parseMtu)
            .displayedAs(mtu -> Integer.toString(VerbsConstants.mtuBytes(mtu)));
    public static final Setting<Boolean> RELAXED_ORDERING = Setting.of("mlx5 relaxed ordering",
            RELAXED_ORDERING_PROP_NAME, RELAXED_ORDERING_ENV, RELAXED_ORDERING_DEFAULT,
            "true or false (also 1/0, yes/no, on/off)", Mlx5Settings::parseBoolean);
    public static final Setting<Boolean> DMABUF = Setting.of("mlx5 dmabuf registration", DMABUF_PROP_NAME,
            DMABUF_ENV, DMABUF_DEFAULT, "auto or off", Mlx5Settings::parseDmabuf)
            .displayedAs(on -> on ? "auto" : "off");

    /** Every mlx5 setting, in the order {@code gda4j info} prints them. */
    public static final List<Setting<?>> SETTINGS = List.of(GID_INDEX, MTU, RELAXED_ORDERING, DMABUF);

    /** The settings of this process. */
    public static Mlx5Settings resolve() {
        return parse(System::getProperty, System::getenv);
    }

    /** The settings as {@code properties} (by property name), else {@code environment} (by variable name), say. */
    static Mlx5Settings parse(UnaryOperator<String> properties, UnaryOperator<String> environment) {
        return new Mlx5Settings(GID_INDEX.resolve(properties, environment), MTU.resolve(properties, environment),
                RELAXED_ORDERING.resolve(properties, environment), DMABUF.resolve(properties, environment));
    }

    /**
     * The GID index a NIC opened with {@code options} uses: this setting when it names an index, else
     * {@code options.gidIndex()} when it is positive, else {@link #GID_AUTO}. {@link NicOptions#defaults()} says 0,
     * which on RoCE is usually a RoCE v1 or link-local entry, so 0 from the options means "choose"; set
     * {@value #GID_INDEX_PROP_NAME}=0 to force index 0.
     */
    public int gidIndexFor(NicOptions options) {
        if (gidIndex >= 0) {
            return gidIndex;
        }
        return options.gidIndex() > 0 ? options.gidIndex() : GID_AUTO;
    }

    @Override
    public String toString() {
        return String.format("mlx5 settings: %s=%s, %s=%d, %s=%b, %s=%s", GID_INDEX_PROP_NAME,
                gidIndex == GID_AUTO ? "auto" : Integer.toString(gidIndex), MTU_PROP_NAME,
                VerbsConstants.mtuBytes(maxPathMtu), RELAXED_ORDERING_PROP_NAME, relaxedOrdering, DMABUF_PROP_NAME,
                dmabuf ? "auto" : "off");
    }

    static int parseGidIndex(String text) {
        if (text.equalsIgnoreCase("auto")) {
            return GID_AUTO;
        }
        int index = Integer.parseInt(text);
        if (index < 0) {
            throw new IllegalArgumentException("a GID index is 0 or more, not " + index);
        }
        return index;
    }

    static int parseMtu(String text) {
        for (int mtu = VerbsConstants.IBV_MTU_256; mtu <= VerbsConstants.IBV_MTU_4096; mtu++) {
            if (Integer.toString(VerbsConstants.mtuBytes(mtu)).equals(text)) {
                return mtu;
            }
        }
        throw new IllegalArgumentException("not a path MTU: '" + text + "'");
    }

    private static boolean parseBoolean(String text) {
        return switch (text.toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on" -> true;
            case "false", "0", "no", "off" -> false;
            default -> throw new IllegalArgumentException("not a boolean: '" + text + "'");
        };
    }

    private static boolean parseDmabuf(String text) {
        return switch (text.toLowerCase(Locale.ROOT)) {
            case "auto", "on", "true" -> true;
            case "off", "false" -> false;
            default -> throw new IllegalArgumentException("not auto or off: '" + text + "'");
        };
    }
}
