/**
 * Configuration settings: each one a system property, an environment variable and a default, resolved in that order
 * ({@link io.gda4j.config.Setting}), with one exception for a bad value that names the setting and what it accepts
 * ({@link io.gda4j.config.SettingException}). The config classes of each layer (WorldConfig, ProxyConfig,
 * IbgdaConfig, ...) declare their settings with it; {@code gda4j info} prints them all.
 */
package io.gda4j.config;
