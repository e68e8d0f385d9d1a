package io.gda4j.gdrcopy;

import java.util.Optional;

/** The real {@link GdrcopyProbe}: asks {@link LibGdrapi}. */
enum NativeGdrcopyProbe implements GdrcopyProbe {
    INSTANCE;

    @Override
    public String libraryName() {
        return LibGdrapi.libraryName();
    }

    @Override
    public Optional<String> libraryFailure() {
        return Optional.ofNullable(LibGdrapi.loadFailure());
    }

    @Override
    public GdrcopyStatus.Version runtimeVersion() {
        return Gdrcopy.runtimeVersion();
    }

    @Override
    public GdrcopyStatus.Version openAndReadDriverVersion() {
        try (GdrHandle handle = GdrHandle.open()) {
            return handle.driverVersion();
        }
    }
}
