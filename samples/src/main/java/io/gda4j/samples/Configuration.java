package io.gda4j.samples;

import io.gda4j.bootstrap.BootstrapConfig;
import io.gda4j.config.Setting;
import io.gda4j.config.SettingException;
import io.gda4j.ibgda.IbgdaConfig;
import io.gda4j.nic.emulated.EmulatedNicConfig;
import io.gda4j.nic.mlx5.Mlx5Settings;
import io.gda4j.proxy.ProxyConfig;
import io.gda4j.verbs.LibIbverbs;
import io.gda4j.verbs.LibMlx5;
import io.gda4j.world.WorldConfig;

import java.util.ArrayList;
import java.util.List;
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
            new Group("emulated NIC", EmulatedNicConfig.SETTINGS),
            new Group("mlx5", Mlx5Settings.SETTINGS),
            new Group("native libraries", List.of(LibIbverbs.LIBRARY_SETTING, LibMlx5.LIBRARY_SETTING)),
            new Group("command line", List.of(Main.DEBUG)));

    private Configuration() {
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
