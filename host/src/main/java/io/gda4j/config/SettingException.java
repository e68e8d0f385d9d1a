package io.gda4j.config;

/**
 * A configuration setting has a value it does not accept. The message is one line that names the variable or
 * property the value came from and what the setting accepts, e.g.
 * {@code GDA4J_HEAP_SIZE=abc is not valid: symmetric heap size must be a positive multiple of 8 bytes ...}; the
 * command line turns it into exit code 2.
 */
public final class SettingException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final transient Setting<?> setting;
    private final String value;
    private final Setting.Source source;

    SettingException(Setting<?> setting, String value, Setting.Source source, Throwable cause) {
        super(source.assignment(setting, value) + " is not valid: " + setting.label() + " must be "
                + setting.accepts(), cause);
        this.setting = setting;
        this.value = value;
        this.source = source;
    }

    /** The setting whose value is bad. */
    public Setting<?> setting() {
        return setting;
    }

    /** The bad value as it was given. */
    public String value() {
        return value;
    }

    /** Where the bad value came from: the system property or the environment variable (or a bad default). */
    public Setting.Source source() {
        return source;
    }
}
