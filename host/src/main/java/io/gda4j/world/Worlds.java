package io.gda4j.world;

import io.gda4j.bootstrap.LaunchEnvironment;

import java.util.Map;
import java.util.Optional;

/**
 * The one entry point that picks the kind of world: a process started by a launcher (torchrun, mpirun, srun, or
 * {@code GDA4J_RANK}/{@code GDA4J_WORLD_SIZE}) with a world of more than one process joins a {@link ProcessWorld}; a
 * process started alone (or as the only process of its launch) drives every configured GPU in a {@link LocalWorld}.
 * Code written against {@link World} runs in both; it drives {@link World#localRanks()} and no others.
 */
public final class Worlds {
    private Worlds() {
    }

    /** The world of this process, from its environment and the resolved configuration. */
    public static World create() {
        return create(WorldConfig.resolve(), System.getenv());
    }

    /** The world of a process whose environment is {@code env}. */
    public static World create(WorldConfig config, Map<String, String> env) {
        Optional<LaunchEnvironment> launch = launchOf(env);
        return launch.isPresent() ? ProcessWorld.create(config, launch.get()) : LocalWorld.create(config);
    }

    /**
     * The launch this process is part of, when it is one process of several; empty when it runs alone.
     *
     * @throws io.gda4j.bootstrap.BootstrapException when a launcher's variables are present but incomplete or
     *         contradictory (never silently a single-process world)
     */
    public static Optional<LaunchEnvironment> launchOf(Map<String, String> env) {
        if (!LaunchEnvironment.started(env)) {
            return Optional.empty();
        }
        LaunchEnvironment launch = LaunchEnvironment.parse(env);
        return launch.worldSize() > 1 ? Optional.of(launch) : Optional.empty();
    }
}
