package io.gda4j.transport;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Which transport connects a pair of ranks, the one rule both worlds follow: for {@code auto} the first provider (in
 * auto-preference order, {@link Transports#providers}) that can connect the pair, else the one named. A pure
 * function of what each provider says of the pair, so every refusal is tested on a machine with no GPU.
 */
public final class TransportChoice {
    private TransportChoice() {
    }

    /**
     * The provider that connects {@code pair}.
     *
     * @param wanted      {@link Transports#AUTO} or a provider's name (any case)
     * @param providers   in auto-preference order
     * @param pair        the pair as the messages name it, e.g. "rank 0 to rank 1"
     * @param unavailable why a provider cannot connect this pair (empty: it can)
     * @param scope       where the pair is, for the message naming the providers that could, e.g. "between these
     *                    processes"
     * @param otherwise   appended to a refusal: what else the user may do (empty for nothing)
     * @throws TransportSetupException for an unknown name, or naming every provider's reason and those that could
     */
    public static TransportProvider choose(String wanted, List<TransportProvider> providers, String pair,
                                    Function<TransportProvider, Optional<String>> unavailable, String scope,
                                    String otherwise) {
        boolean auto = Transports.AUTO.equalsIgnoreCase(wanted);
        List<String> reasons = new ArrayList<>();
        // Only the candidates are asked until one can: asking a provider may resolve its configuration or its NICs.
        for (TransportProvider p : providers) {
            if (auto || p.name().equalsIgnoreCase(wanted)) {
                Optional<String> why = unavailable.apply(p);
                if (why.isEmpty()) {
                    return p;
                }
                reasons.add(p.name() + ": " + why.get());
            }
        }
        if (!auto && reasons.isEmpty()) {
            List<String> names = new ArrayList<>(List.of(Transports.AUTO));
            providers.forEach(p -> names.add(p.name()));
            throw new TransportSetupException(Transports.unknown(wanted, names));
        }
        if (reasons.isEmpty()) {
            throw new TransportSetupException("no transport connects " + pair + ": no transport is on the class path"
                    + otherwise);
        }
        // Every candidate was asked above and refused (under auto, every provider): only the others are left to ask.
        List<String> able = auto ? List.of() : providers.stream().filter(p -> !p.name().equalsIgnoreCase(wanted))
                .filter(p -> unavailable.apply(p).isEmpty()).map(TransportProvider::name).toList();
        throw new TransportSetupException("no transport connects " + pair + ": " + String.join("; ", reasons)
                + (able.isEmpty() ? "" : ". " + capitalized(scope) + " " + String.join(", ", able) + " can: set "
                + Transports.TRANSPORT_ENV + "=auto or one of them") + otherwise);
    }

    private static String capitalized(String s) {
        return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }
}
