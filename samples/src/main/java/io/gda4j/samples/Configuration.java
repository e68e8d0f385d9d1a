package io.gda4j.samples;

import io.gda4j.bootstrap.BootstrapConfig;
import io.gda4j.bootstrap.LaunchEnvironment;
import io.gda4j.config.Setting;
import io.gda4j.config.SettingException;
import io.gda4j.gdrcopy.GdrcopyConfig;
import io.gda4j.ibgda.IbgdaConfig;
import io.gda4j.moe.ll.LowLatencyRank;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.nic.NicConfig;
import io.gda4j.nic.emulated.EmulatedNicConfig;
import io.gda4j.nic.mlx5.Mlx5Settings;
import io.gda4j.proxy.ProxyConfig;
import io.gda4j.samples.nccl.NcclSettings;
import io.gda4j.verbs.LibIbverbs;
import io.gda4j.verbs.LibMlx5;
import io.gda4j.world.WorldConfig;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;

/**
 * Every {@code GDA4J_*} / {@code gda4j.*} setting the command line reads, by group: what {@code gda4j info} prints
 * and what every other command checks before it starts, so a bad value anywhere is exit 2 with one line naming it.
 */
final class Configuration {
    /**
     * Settings of one layer.
     *
     * @param name     the group's name in {@code gda4j info}
     * @param settings its settings, in print order
     */
    record Group(String name, List<Setting<?>> settings) {
    }

    static final List<Group> GROUPS = List.of(
            new Group("world", WorldConfig.SETTINGS),
            new Group("bootstrap", BootstrapConfig.SETTINGS),
            new Group("proxy", ProxyConfig.SETTINGS),
            new Group("ibgda", IbgdaConfig.SETTINGS),
            new Group("NIC", NicConfig.SETTINGS),
            new Group("emulated NIC", EmulatedNicConfig.SETTINGS),
            new Group("mlx5", Mlx5Settings.SETTINGS),
            new Group("native libraries", List.of(LibIbverbs.LIBRARY_SETTING, LibMlx5.LIBRARY_SETTING,
                    NcclSettings.LIBRARY)),
            new Group("command line", List.of(Main.DEBUG)));

    /** Environment variables gda4j reads besides {@link #GROUPS}: the launch environment, the launcher script. */
    static final List<String> OTHER_ENV = List.of(LaunchEnvironment.GDA4J_LAUNCHER, LaunchEnvironment.GDA4J_RANK,
            LaunchEnvironment.GDA4J_WORLD_SIZE, LaunchEnvironment.GDA4J_LOCAL_RANK,
            LaunchEnvironment.GDA4J_LOCAL_WORLD_SIZE, LaunchEnvironment.GDA4J_ROOT, LaunchEnvironment.GDA4J_JOB_TOKEN,
            "GDA4J_JAVA_OPTS");
    /**
     * System properties gda4j reads besides {@link #GROUPS}: gdrcopy's, the low-latency MoE switches (read when a
     * buffer is made), and the build's test switches.
     */
    static final List<String> OTHER_PROPERTIES = List.of(GdrcopyConfig.LIBRARY_PROP_NAME,
            GdrcopyConfig.DEVICE_PROP_NAME, LowLatencySizing.PROTOCOL_PROP_NAME, LowLatencySizing.GATHER_ROWS_PROP_NAME,
            LowLatencyRank.ONE_KERNEL_DISPATCH_PROP_NAME, "gda4j.test.requireCompilers", "gda4j.test.jdk25");
    static final String ENV_PREFIX = "GDA4J_";
    static final String PROPERTY_PREFIX = "gda4j.";

    /**
     * A {@code GDA4J_*} variable or {@code gda4j.*} property that gda4j does not read: a misspelling changes nothing
     * silently otherwise.
     *
     * @param name     as set, {@code -D} not included
     * @param closest  the known name nearest to it, or null where none is near
     * @param property a system property (else an environment variable)
     */
    record Unknown(String name, String closest, boolean property) {
        /** One line for stderr and {@code gda4j info}. */
        String message() {
            return (property ? "-D" : "") + name + " is not a gda4j setting and is ignored"
                    + (closest == null ? "" : "; did you mean " + (property ? "-D" : "") + closest + "?");
        }
    }

    private Configuration() {
    }

    /** Every known variable name: the settings' and {@link #OTHER_ENV}. */
    static Set<String> knownEnv() {
        Set<String> names = new LinkedHashSet<>();
        all().forEach(s -> names.add(s.envName()));
        names.addAll(OTHER_ENV);
        return names;
    }

    /** Every known property name: the settings' and {@link #OTHER_PROPERTIES}. */
    static Set<String> knownProperties() {
        Set<String> names = new LinkedHashSet<>();
        all().forEach(s -> names.add(s.propertyName()));
        names.addAll(OTHER_PROPERTIES);
        return names;
    }

    /** The {@code GDA4J_*} variables of {@code environment} and {@code gda4j.*} properties gda4j does not read. */
    static List<Unknown> unknown(Map<String, String> environment, Map<?, ?> properties) {
        List<Unknown> out = new ArrayList<>();
        Set<String> env = knownEnv();
        for (String name : new TreeSet<>(environment.keySet())) {
            if (name.startsWith(ENV_PREFIX) && !env.contains(name)) {
                out.add(new Unknown(name, NearestName.of(name, env), false));
            }
        }
        Set<String> props = knownProperties();
        TreeSet<String> set = new TreeSet<>();
        properties.keySet().forEach(k -> set.add(String.valueOf(k)));
        for (String name : set) {
            if (name.startsWith(PROPERTY_PREFIX) && !props.contains(name)) {
                out.add(new Unknown(name, NearestName.of(name, props), true));
            }
        }
        return out;
    }

    /** Every setting, group after group. */
    static List<Setting<?>> all() {
        List<Setting<?>> out = new ArrayList<>();
        for (Group g : GROUPS) {
            out.addAll(g.settings());
        }
        return out;
    }

    /**
     * Resolves every setting from {@code properties}, then {@code environment}.
     *
     * @throws SettingException for the first bad value, naming its variable or property
     */
    static void check(UnaryOperator<String> properties, UnaryOperator<String> environment) {
        for (Setting<?> s : all()) {
            s.resolve(properties, environment);
        }
    }

    /** Every setting as shown by {@code gda4j info}; never throws. */
    static List<Setting.Shown> show(UnaryOperator<String> properties, UnaryOperator<String> environment) {
        List<Setting.Shown> out = new ArrayList<>();
        for (Setting<?> s : all()) {
            out.add(s.show(properties, environment));
        }
        return out;
    }
}
