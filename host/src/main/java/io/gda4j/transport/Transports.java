package io.gda4j.transport;

import io.gda4j.config.Setting;
import io.gda4j.config.Settings;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;

/**
 * The transports on the class path and the one choice users make among them: {@code GDA4J_TRANSPORT}
 * ({@link #TRANSPORT}), {@value #AUTO} or a provider's name, checked in one place ({@link #checkName}).
 */
public final class Transports {
    public static final String TRANSPORT_PROP_NAME = "gda4j.transport";
    public static final String TRANSPORT_ENV = "GDA4J_TRANSPORT";
    /** The name that lets {@code auto} pick, for each pair, the first provider in auto-preference order that can. */
    public static final String AUTO = "auto";

    public static final Setting<String> TRANSPORT = Setting.of("transport", TRANSPORT_PROP_NAME, TRANSPORT_ENV,
            AUTO, "auto or the name of a transport on the class path (gda4j info lists them)", Transports::checkName)
            .withNote("--transport overrides it");

    private Transports() {
    }

    /**
     * Every transport on the class path, in auto-preference order, each {@linkplain TransportProvider#configure
     * configured} with {@code settings}: the instances one world (or one {@code gda4j info}) uses.
     */
    public static List<TransportProvider> providers(Settings settings) {
        List<TransportProvider> list = loaded();
        for (TransportProvider p : list) {
            p.configure(settings);
        }
        return list;
    }

    /** The names users type: {@value #AUTO}, then each provider's, in auto-preference order. */
    public static List<String> names() {
        List<String> names = new ArrayList<>();
        names.add(AUTO);
        for (TransportProvider p : loaded()) {
            names.add(p.name());
        }
        return names;
    }

    /**
     * {@code text} as a transport name, stripped and in lower case.
     *
     * @throws IllegalArgumentException naming what is available, when it is neither {@value #AUTO} nor a provider's
     */
    public static String checkName(String text) {
        String name = text.strip().toLowerCase(Locale.ROOT);
        List<String> names = names();
        if (!names.contains(name)) {
            throw new IllegalArgumentException(unknown(text, names));
        }
        return name;
    }

    /** The one message for a transport name that is not among {@code names} (auto first). */
    static String unknown(String text, List<String> names) {
        return "unknown transport '" + text.strip() + "': available here are " + String.join(", ", names);
    }

    private static List<TransportProvider> loaded() {
        List<TransportProvider> list = new ArrayList<>();
        ServiceLoader.load(TransportProvider.class, Transports.class.getClassLoader()).forEach(list::add);
        list.sort(Comparator.comparingInt(TransportProvider::autoPreference));
        return list;
    }
}
