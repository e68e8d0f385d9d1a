package io.gda4j.transport;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The transport of a peer entry in the device view: its name, the code stored in {@code PeerEntry.transport} (the
 * {@code TRANSPORT_*} constants of {@code gda4j/layout/view.cuh}) and the {@linkplain Trait traits} that the world
 * and the MoE buffers ask about, so that no code above the SPI compares a tag with a particular transport.
 *
 * <p>The set is open on the Java side: {@link #NONE} and {@link #SELF} belong to the world and are defined here;
 * every other tag is defined by the provider that owns it, as a constant of its {@link TransportProvider} class
 * ({@code P2pTransport.TAG}, {@code IbgdaTransport.TAG}, {@code ProxyTransport.TAG}) that its {@code tag()} returns.
 * The device side stays closed: a code means something only where {@code view.cuh} lists it and
 * {@code detail/dispatch.cuh} branches on it, so a new transport still adds its code there.
 *
 * <p>Tags have value semantics, and the registry keeps one instance per code, so {@code ==} and {@link #equals} agree.
 * Defining a tag again with the same fields returns the registered instance (a test JVM may load a provider and an
 * identical definition of its tag from two modules); a definition that shares a code or a name with a registered
 * tag but differs in anything else is refused.
 */
public final class TransportTag {

    /** What generic code may ask of a transport instead of asking which transport it is. */
    public enum Trait {
        /**
         * The device loads and stores straight into the peer's heap ({@code PeerLink.peerHeap} is the peer's heap as
         * the local GPU addresses it): nothing stands between the kernel and the peer's memory, so no staging copy is
         * needed (SELF, p2p).
         */
        DIRECT,
        /**
         * Its ADDs to another rank's words are GPU atomics (p2p's {@code red.add.sys}, the proxy's atomic kernel),
         * which are not atomic with a NIC's atomics on the same word: a peer entry of this transport toward a rank
         * whose words take NIC atomics is refused ADDs ({@code world.AtomicRouting}). SELF does not carry it: a
         * rank's own ADDs are routed to its loopback QP instead. An IBGDA add is a NIC atomic already.
         */
        GPU_ATOMICS,
        /**
         * The device puts each message from one block: ibgda posts one work request per message once the message is
         * whole, which only a block that wrote all of it knows, so a rank with such a peer gives one block per token
         * where it could otherwise split a row across blocks ({@code moe.ll.LowLatencyRank}).
         */
        PUTS_EACH_MESSAGE_FROM_ONE_BLOCK
    }

    // Declared before NONE and SELF: static initializers run in textual order, and define() writes to these maps.
    private static final Map<Integer, TransportTag> BY_CODE = new ConcurrentHashMap<>();
    private static final Map<String, TransportTag> BY_NAME = new ConcurrentHashMap<>();
    private static final Object DEFINING = new Object();

    /** No path to this peer: device calls to it fail with ERROR_BAD_PEER. */
    public static final TransportTag NONE = define("none", 0, "none", 0);
    /** The rank itself: loads and stores to its own heap. */
    public static final TransportTag SELF = define("self", 1, "self", 0, Trait.DIRECT);

    private final String name;
    private final int code;
    private final String phrase;
    private final int viewFlags;
    private final Set<Trait> traits;

    private TransportTag(String name, int code, String phrase, int viewFlags, Set<Trait> traits) {
        this.name = name;
        this.code = code;
        this.phrase = phrase;
        this.viewFlags = viewFlags;
        this.traits = Collections.unmodifiableSet(traits);
    }

    /**
     * Registers a tag, or returns the registered one when it has exactly these fields. A provider calls it once, in
     * the initializer of its {@code TAG} constant; that initializer must not call {@link #ofCode} or {@link #known},
     * which may be initializing the providers' classes on another thread.
     *
     * @param name      lower case, as users type the transport ({@code p2p}); {@link #toString()} is its upper case
     * @param code      the {@code TRANSPORT_*} value of {@code view.cuh} that the device dispatcher branches on
     * @param phrase    how messages name the path, after "over": "the proxy", "p2p"
     * @param viewFlags the device view's header flag bits a rank sets when one of its peers is of this transport
     *                  ({@code world.DeviceViewDescriptor.VIEW_FLAG_*}), 0 for none
     * @param traits    what generic code asks of it
     * @throws IllegalStateException    when a registered tag has this code or this name and differs otherwise; the
     *                                  message names both
     * @throws IllegalArgumentException when a field is malformed (a name not in lower case, a negative code)
     */
    public static TransportTag define(String name, int code, String phrase, int viewFlags, Trait... traits) {
        if (name == null || !name.matches("[a-z][a-z0-9_-]*")) {
            throw new IllegalArgumentException("a transport tag's name is one lower-case word, as users type it"
                    + " (p2p): got " + (name == null ? "null" : "'" + name + "'"));
        }
        if (code < 0) {
            throw new IllegalArgumentException("transport " + name + ": code " + code + " is negative; codes are the"
                    + " TRANSPORT_* values of gda4j/layout/view.cuh");
        }
        if (phrase == null || phrase.isBlank()) {
            throw new IllegalArgumentException("transport " + name + ": the phrase that messages use is empty");
        }
        EnumSet<Trait> set = EnumSet.noneOf(Trait.class);
        set.addAll(Arrays.asList(traits));
        TransportTag wanted = new TransportTag(name, code, phrase, viewFlags, set);
        // One lock for both maps, so two definitions racing for one code or name cannot both win. Lookups read the
        // concurrent maps without it.
        synchronized (DEFINING) {
            TransportTag sameCode = BY_CODE.get(code);
            TransportTag sameName = BY_NAME.get(name);
            for (TransportTag registered : new TransportTag[] {sameCode, sameName}) {
                if (registered != null && !registered.equals(wanted)) {
                    throw new IllegalStateException("transport tag " + wanted.describe() + " conflicts with the"
                            + " registered " + registered.describe() + ": each TRANSPORT_* code of"
                            + " gda4j/layout/view.cuh and each name belongs to one provider; two providers (or two"
                            + " versions of one) on the class path define it differently");
                }
            }
            if (sameCode != null) {
                return sameCode;
            }
            BY_CODE.put(code, wanted);
            BY_NAME.put(name, wanted);
            return wanted;
        }
    }

    /**
     * The tag stored as {@code code} in a peer entry. A code not yet defined in this JVM makes the providers on the
     * class path define theirs (their classes are initialized, not instantiated) before the lookup is given up.
     *
     * @throws IllegalArgumentException naming the code and the tags that are known, when no provider defines it
     */
    public static TransportTag ofCode(int code) {
        TransportTag t = BY_CODE.get(code);
        if (t == null) {
            ClassPathProviders.defineTheirTags();
            t = BY_CODE.get(code);
        }
        if (t == null) {
            throw new IllegalArgumentException("unknown transport code " + code + ": the known transports are "
                    + known().stream().map(TransportTag::describeShort).collect(Collectors.joining(", "))
                    + ". The provider that defines it (a TransportProvider listed in"
                    + " META-INF/services/io.gda4j.transport.TransportProvider) is not on the class path, or the"
                    + " device view was written by another version of gda4j.");
        }
        return t;
    }

    /** Every tag defined in this JVM, the class path's providers' included, in code order. */
    public static List<TransportTag> known() {
        ClassPathProviders.defineTheirTags();
        List<TransportTag> all = new ArrayList<>(BY_CODE.values());
        all.sort(Comparator.comparingInt(TransportTag::code));
        return List.copyOf(all);
    }

    /** The name users type ({@code p2p}), in lower case. */
    public String name() {
        return name;
    }

    /** The value stored in {@code PeerEntry.transport}. */
    public int code() {
        return code;
    }

    /** How messages name the path after "over": "the proxy", "p2p". */
    public String phrase() {
        return phrase;
    }

    /** The device view's header flag bits ({@code VIEW_FLAG_*}) a rank sets when a peer of its is of this transport. */
    public int viewFlags() {
        return viewFlags;
    }

    public boolean has(Trait trait) {
        return traits.contains(trait);
    }

    public Set<Trait> traits() {
        return traits;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TransportTag t && code == t.code && viewFlags == t.viewFlags && name.equals(t.name)
                && phrase.equals(t.phrase) && traits.equals(t.traits);
    }

    @Override
    public int hashCode() {
        return code;
    }

    /** The upper-case name ({@code P2P}), as the enum this class replaced printed it: tables and messages show it. */
    @Override
    public String toString() {
        return name.toUpperCase(Locale.ROOT);
    }

    private String describe() {
        return String.format(Locale.ROOT, "%s (code %d, phrase '%s', view flags 0x%x, traits %s)", name, code, phrase,
                viewFlags, traits);
    }

    private String describeShort() {
        return name + " (" + code + ")";
    }

    /**
     * The providers on the class path, looked at once: initializing each provider's class defines its tag constant.
     * A holder class, so that the look happens outside the registry's lock: a provider's class initializer calls
     * {@link #define}, and holding the lock here while another thread initializes that class would deadlock.
     */
    private static final class ClassPathProviders {
        static {
            ClassLoader loader = TransportTag.class.getClassLoader();
            for (ServiceLoader.Provider<TransportProvider> p : providers(loader)) {
                try {
                    Class.forName(p.type().getName(), true, p.type().getClassLoader());
                } catch (ClassNotFoundException | LinkageError | ServiceConfigurationError e) {
                    // Best effort: a provider that cannot load defines nothing; the world reports it when it loads it.
                }
            }
        }

        static void defineTheirTags() {
            // The static initializer above does the work, once.
        }

        private static List<ServiceLoader.Provider<TransportProvider>> providers(ClassLoader loader) {
            List<ServiceLoader.Provider<TransportProvider>> list = new ArrayList<>();
            try {
                ServiceLoader.load(TransportProvider.class, loader).stream().forEach(list::add);
            } catch (ServiceConfigurationError e) {
                // A broken entry in a services file: keep the providers found before it.
            }
            return list;
        }
    }
}
