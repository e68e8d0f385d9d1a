package io.gda4j.nic;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;

/** Finds {@link NicProvider}s and applies the {@code auto|mlx5|emulated} choice. */
public final class Nics {
    private Nics() {
    }

    /** Every NIC provider on the class path, in auto-preference order. */
    public static List<NicProvider> providers() {
        List<NicProvider> list = new ArrayList<>();
        ServiceLoader.load(NicProvider.class, Nics.class.getClassLoader()).forEach(list::add);
        list.sort(Comparator.comparingInt(NicProvider::autoPreference));
        return list;
    }

    /** Decides which NIC {@code choice} means on this machine; never throws. */
    public static NicSelection select(NicChoice choice) {
        return select(choice, providers());
    }

    static NicSelection select(NicChoice choice, List<NicProvider> providers) {
        if (choice == NicChoice.AUTO) {
            StringBuilder skipped = new StringBuilder();
            for (NicProvider p : providers) {
                Optional<String> why = p.unavailableReason();
                if (why.isEmpty()) {
                    return new NicSelection(p, "auto picked the " + label(p.name())
                            + (skipped.length() == 0 ? "" : " because " + skipped));
                }
                skipped.append(skipped.length() == 0 ? "" : "; ").append(p.name()).append(": ").append(why.get());
            }
            return new NicSelection(null, "no NIC can be opened: " + (skipped.length() == 0
                    ? "no NIC provider is on the class path" : skipped));
        }
        for (NicProvider p : providers) {
            if (p.name().equalsIgnoreCase(choice.word())) {
                Optional<String> why = p.unavailableReason();
                return why.map(s -> new NicSelection(null, "the " + label(p.name()) + " is not available: " + s))
                        .orElseGet(() -> new NicSelection(p, "the " + label(p.name()) + " was asked for"));
            }
        }
        return new NicSelection(null, "no " + choice.word() + " NIC provider is on the class path");
    }

    /** Opens the NIC {@code choice} selects; throws {@link NicException} with the selection's reason otherwise. */
    public static Nic open(NicChoice choice, NicOptions options) {
        NicSelection selection = select(choice);
        if (!selection.found()) {
            throw new NicException(selection.reason());
        }
        return selection.provider().open(options);
    }

    private static String label(String name) {
        return Nic.EMULATED.equals(name) ? "emulated NIC" : name + " NIC";
    }
}
