package io.gda4j.samples.nccl;

import io.gda4j.config.Setting;

/**
 * Which libnccl {@link LibNccl} loads, apart from the binding: reading or printing the setting ({@code gda4j info})
 * must not load NCCL, and {@link LibNccl}'s class initialisation does.
 */
public final class NcclSettings {
    public static final String LIBRARY_PROP_NAME = "gda4j.nccl.library";
    public static final String LIBRARY_ENV = "GDA4J_NCCL_LIBRARY";
    public static final String LIBRARY_DEFAULT = "libnccl.so.2";

    public static final Setting<String> LIBRARY = Setting.of("libnccl to load", LIBRARY_PROP_NAME, LIBRARY_ENV,
            LIBRARY_DEFAULT, "a library name or path for JNA, e.g. " + LIBRARY_DEFAULT
                    + " (the default also looks in Python environments' nvidia/nccl/lib)", text -> text);

    private NcclSettings() {
    }
}
