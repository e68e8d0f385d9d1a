package io.gda4j.config;

import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * One setting: a system property, an environment variable, a default, what it accepts (in words) and the parser
 * that turns its text into a value. The system property beats the environment variable, which beats the default;
 * an empty or blank value counts as unset. A value the parser refuses becomes a {@link SettingException} that names
 * where the value came from and what the setting accepts.
 *
 * @param <T> the parsed type
 */
public final class Setting<T> {
    /** Where a setting's text came from. */
    public enum Source {
        PROPERTY, ENVIRONMENT, DEFAULT;

        /** How a user would have written this value: {@code -Dgda4j.x=v}, {@code GDA4J_X=v} or the default. */
        String assignment(Setting<?> s, String value) {
            return switch (this) {
                case PROPERTY -> "-D" + s.propertyName() + "=" + value;
                case ENVIRONMENT -> s.envName() + "=" + value;
                case DEFAULT -> "the default " + s.propertyName() + "=" + value;
            };
        }

        /** One word for {@code gda4j info}. */
        public String word() {
            return switch (this) {
                case PROPERTY -> "property";
                case ENVIRONMENT -> "environment";
                case DEFAULT -> "default";
            };
        }
    }

    /**
     * A setting's text and where it came from.
     *
     * @param text   the value, stripped of surrounding blanks
     * @param source where it came from
     */
    public record Raw(String text, Source source) {
    }

    private final String label;
    private final String propertyName;
    private final String envName;
    private final String defaultText;
    private final String accepts;
    private final Function<String, T> parser;
    private final Function<? super T, String> display;
    private final String note;

    private Setting(String label, String propertyName, String envName, String defaultText, String accepts,
                    Function<String, T> parser, Function<? super T, String> display, String note) {
        this.label = Objects.requireNonNull(label, "label");
        this.propertyName = Objects.requireNonNull(propertyName, "propertyName");
        this.envName = Objects.requireNonNull(envName, "envName");
        this.defaultText = Objects.requireNonNull(defaultText, "defaultText");
        this.accepts = Objects.requireNonNull(accepts, "accepts");
        this.parser = Objects.requireNonNull(parser, "parser");
        this.display = Objects.requireNonNull(display, "display");
        this.note = note;
    }

    /**
     * A setting.
     *
     * @param label        what it sets, in a few words ("symmetric heap size"), for messages and {@code gda4j info}
     * @param propertyName the system property ({@code gda4j.*})
     * @param envName      the environment variable ({@code GDA4J_*})
     * @param defaultText  the value when neither is set (parsed like a given value)
     * @param accepts      what the parser accepts, completing "LABEL must be ..."
     * @param parser       text (stripped, never empty unless the default is) to value; throws
     *                     {@link IllegalArgumentException} for text it refuses
     */
    public static <T> Setting<T> of(String label, String propertyName, String envName, String defaultText,
                                    String accepts, Function<String, T> parser) {
        return new Setting<>(label, propertyName, envName, defaultText, accepts, parser, String::valueOf, null);
    }

    /** The same setting shown in {@code gda4j info} through {@code format} instead of {@code toString()}. */
    public Setting<T> displayedAs(Function<? super T, String> format) {
        return new Setting<>(label, propertyName, envName, defaultText, accepts, parser, format, note);
    }

    /** The same setting with a remark {@code gda4j info} prints beside it (e.g. which command overrides it). */
    public Setting<T> withNote(String remark) {
        return new Setting<>(label, propertyName, envName, defaultText, accepts, parser, display, remark);
    }

    public String label() {
        return label;
    }

    public String propertyName() {
        return propertyName;
    }

    public String envName() {
        return envName;
    }

    public String defaultText() {
        return defaultText;
    }

    /** What the setting accepts, in words. */
    public String accepts() {
        return accepts;
    }

    /** A remark for {@code gda4j info}, or null. */
    public String note() {
        return note;
    }

    /** The text from {@code properties}, else {@code environment}, else the default. */
    public Raw raw(UnaryOperator<String> properties, UnaryOperator<String> environment) {
        String p = properties.apply(propertyName);
        if (p != null && !p.isBlank()) {
            return new Raw(p.strip(), Source.PROPERTY);
        }
        String e = environment.apply(envName);
        if (e != null && !e.isBlank()) {
            return new Raw(e.strip(), Source.ENVIRONMENT);
        }
        return new Raw(defaultText, Source.DEFAULT);
    }

    /**
     * The value from {@code properties} (by property name), else {@code environment} (by variable name), else the
     * default.
     *
     * @throws SettingException when the text is not one the setting accepts
     */
    public T resolve(UnaryOperator<String> properties, UnaryOperator<String> environment) {
        return parse(raw(properties, environment));
    }

    /** {@link #resolve(UnaryOperator, UnaryOperator)} from a {@link Properties} and an environment map. */
    public T resolve(Properties properties, Map<String, String> environment) {
        return resolve(properties::getProperty, environment::get);
    }

    /** The value of this process: system properties, then the environment. */
    public T resolve() {
        return resolve(System::getProperty, System::getenv);
    }

    /**
     * The value {@code raw} stands for.
     *
     * @throws SettingException when the text is not one the setting accepts
     */
    public T parse(Raw raw) {
        try {
            return parser.apply(raw.text());
        } catch (IllegalArgumentException e) {
            throw new SettingException(this, raw.text(), raw.source(), e);
        }
    }

    /** How {@code gda4j info} shows a value of this setting. */
    public String display(T value) {
        return display.apply(value);
    }

    /**
     * The resolved value as {@code gda4j info} shows it, or the problem: never throws.
     *
     * @param properties  system properties by name
     * @param environment environment variables by name
     * @return the shown value and where it came from, or the {@link SettingException} message
     */
    public Shown show(UnaryOperator<String> properties, UnaryOperator<String> environment) {
        Raw raw = raw(properties, environment);
        try {
            return new Shown(this, display(parse(raw)), raw.source(), null);
        } catch (SettingException e) {
            return new Shown(this, raw.text(), raw.source(), e.getMessage());
        }
    }

    /**
     * One setting as {@code gda4j info} prints it.
     *
     * @param setting the setting
     * @param value   the value as displayed, or the raw text when it is bad
     * @param source  where it came from
     * @param problem null when the value is good, else what is wrong (the {@link SettingException} message)
     */
    public record Shown(Setting<?> setting, String value, Source source, String problem) {
        public boolean valid() {
            return problem == null;
        }
    }

    @Override
    public String toString() {
        return envName + " / -D" + propertyName;
    }
}
