package io.gda4j.bootstrap;

/** Which launcher started this process, as read from its environment by {@link LaunchEnvironment}. */
public enum Launcher {
    /** {@code torchrun}: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT. */
    TORCHRUN("torchrun"),
    /** {@code mpirun} of Open MPI: OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE. */
    OPEN_MPI("mpi"),
    /** {@code srun}: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE / SLURM_TASKS_PER_NODE. */
    SLURM("slurm"),
    /** The user's own GDA4J_RANK, GDA4J_WORLD_SIZE, GDA4J_LOCAL_RANK, GDA4J_LOCAL_WORLD_SIZE, GDA4J_ROOT. */
    EXPLICIT("explicit");

    private final String word;

    Launcher(String word) {
        this.word = word;
    }

    /** The word {@code GDA4J_LAUNCHER} accepts for this launcher. */
    public String word() {
        return word;
    }
}
