package io.gda4j.config;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * Where the settings of one world come from, as a value: system properties and environment variables as they were
 * when it was taken, plus the overrides a program gives it ({@link #with}: a command-line option), which beat both.
 * Components resolve their {@link Setting}s from it ({@link #get}) instead of from the process, so a choice travels
 * with the world that asked for it and never through {@code System.setProperty}.
 */
public final class Settings {
    private final Map<String, String> properties;
    private final Map<String, String> environment;

    private Settings(Map<String, String> properties, Map<String, String> environment) {
        this.properties = Map.copyOf(properties);
        this.environment = Map.copyOf(environment);
    }

    /** This process's system properties and environment, now. */
    public static Settings ofProcess() {
        return of(System.getProperties(), System.getenv());
    }

    /** {@code props} and {@code env} as they are now (tests). */
    public static Settings of(Properties props, Map<String, String> env) {
        Map<String, String> p = new HashMap<>();
        for (String name : props.stringPropertyNames()) {
            p.put(name, props.getProperty(name));
        }
        Map<String, String> e = new HashMap<>();
        env.forEach((k, v) -> {
            if (k != null && v != null) {
                e.put(k, v);
            }
        });
        return new Settings(p, e);
    }

    /** These settings with {@code setting} given {@code text}, as if its system property were set to it. */
    public Settings with(Setting<?> setting, String text) {
        Map<String, String> p = new HashMap<>(properties);
        p.put(setting.propertyName(), Objects.requireNonNull(text, "text"));
        return new Settings(p, environment);
    }

    /**
     * {@code setting}'s value: its property, else its environment variable, else its default.
     *
     * @throws SettingException when the text is not one the setting accepts
     */
    public <T> T get(Setting<T> setting) {
        return setting.resolve(properties::get, environment::get);
    }

    /** {@code setting} as {@code gda4j info} shows it, or its problem: never throws. */
    public Setting.Shown show(Setting<?> setting) {
        return setting.show(properties::get, environment::get);
    }

    /** A system property of these settings, or null. */
    public String property(String name) {
        return properties.get(name);
    }

    /** An environment variable of these settings, or null. */
    public String environment(String name) {
        return environment.get(name);
    }
}
