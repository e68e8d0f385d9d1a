package io.gda4j.bootstrap;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Which rank this process is, read from the environment its launcher set, so that existing launchers work unchanged.
 * When the variables of several launchers are present they must agree on rank and world size (a process started by
 * torchrun inside an srun allocation sees both); {@code GDA4J_LAUNCHER} picks one and ignores the others.
 *
 * @param rank           this process's rank, 0 to worldSize - 1
 * @param worldSize      the number of processes
 * @param localRank      this process's rank among the processes of its host
 * @param localWorldSize the number of processes on this host
 * @param root           where rank 0 listens for the bootstrap (unresolved: resolved when connecting)
 * @param jobToken       the token every process of the job must present; another job's process is refused
 * @param launcher       which launcher's variables gave rank and size
 */
public record LaunchEnvironment(int rank, int worldSize, int localRank, int localWorldSize, InetSocketAddress root,
                                String jobToken, Launcher launcher) {

    public static final String GDA4J_LAUNCHER = "GDA4J_LAUNCHER";
    public static final String GDA4J_RANK = "GDA4J_RANK";
    public static final String GDA4J_WORLD_SIZE = "GDA4J_WORLD_SIZE";
    public static final String GDA4J_LOCAL_RANK = "GDA4J_LOCAL_RANK";
    public static final String GDA4J_LOCAL_WORLD_SIZE = "GDA4J_LOCAL_WORLD_SIZE";
    public static final String GDA4J_ROOT = "GDA4J_ROOT";
    public static final String GDA4J_JOB_TOKEN = "GDA4J_JOB_TOKEN";

    public static final String RANK = "RANK";
    public static final String WORLD_SIZE = "WORLD_SIZE";
    public static final String LOCAL_RANK = "LOCAL_RANK";
    public static final String LOCAL_WORLD_SIZE = "LOCAL_WORLD_SIZE";
    public static final String MASTER_ADDR = "MASTER_ADDR";
    public static final String MASTER_PORT = "MASTER_PORT";
    public static final String TORCHELASTIC_RUN_ID = "TORCHELASTIC_RUN_ID";

    public static final String OMPI_RANK = "OMPI_COMM_WORLD_RANK";
    public static final String OMPI_SIZE = "OMPI_COMM_WORLD_SIZE";
    public static final String OMPI_LOCAL_RANK = "OMPI_COMM_WORLD_LOCAL_RANK";
    public static final String OMPI_LOCAL_SIZE = "OMPI_COMM_WORLD_LOCAL_SIZE";
    public static final String OMPI_JOB_ID = "OMPI_MCA_orte_ess_jobid";
    public static final String PMIX_NAMESPACE = "PMIX_NAMESPACE";

    public static final String SLURM_PROCID = "SLURM_PROCID";
    public static final String SLURM_NTASKS = "SLURM_NTASKS";
    public static final String SLURM_LOCALID = "SLURM_LOCALID";
    public static final String SLURM_NTASKS_PER_NODE = "SLURM_NTASKS_PER_NODE";
    public static final String SLURM_TASKS_PER_NODE = "SLURM_TASKS_PER_NODE";
    public static final String SLURM_NODEID = "SLURM_NODEID";
    public static final String SLURM_JOB_ID = "SLURM_JOB_ID";
    public static final String SLURM_STEP_ID = "SLURM_STEP_ID";

    public LaunchEnvironment {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(jobToken, "jobToken");
        Objects.requireNonNull(launcher, "launcher");
        if (worldSize < 1 || rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " is not in a world of " + worldSize);
        }
        if (localWorldSize < 1 || localRank < 0 || localRank >= localWorldSize || localWorldSize > worldSize) {
            throw new IllegalArgumentException("local rank " + localRank + " is not in a host of " + localWorldSize
                    + " processes (world of " + worldSize + ")");
        }
    }

    /** Reads this process's environment. */
    public static LaunchEnvironment fromSystem() {
        return parse(System.getenv());
    }

    /**
     * Whether a launcher started this process: {@code GDA4J_LAUNCHER} is set, or some launcher's rank variable
     * ({@code RANK}, {@code OMPI_COMM_WORLD_RANK}, {@code SLURM_PROCID}, {@code GDA4J_RANK}) or world-size variable is.
     * A shell inside {@code salloc} (SLURM_NTASKS without SLURM_PROCID) is not. {@link #parse} says whether what
     * was started is complete.
     */
    public static boolean started(Map<String, String> env) {
        for (String var : List.of(GDA4J_LAUNCHER, RANK, WORLD_SIZE, OMPI_RANK, OMPI_SIZE, SLURM_PROCID, GDA4J_RANK,
                GDA4J_WORLD_SIZE)) {
            if (value(env, var) != null) {
                return true;
            }
        }
        return false;
    }

    /** One launcher's view of rank and size, and the variable names it came from (for messages). */
    private record Ranks(Launcher launcher, int rank, int size, int localRank, int localSize, String rankVar,
                         String sizeVar) {
    }

    /**
     * Parses a launcher's environment.
     *
     * @throws BootstrapException naming the variables when the environment is incomplete or contradictory
     */
    public static LaunchEnvironment parse(Map<String, String> env) {
        List<Ranks> found = new ArrayList<>();
        for (Launcher l : Launcher.values()) {
            Ranks r = ranksOf(l, env);
            if (r != null) {
                found.add(r);
            }
        }
        String chosenWord = value(env, GDA4J_LAUNCHER);
        Ranks chosen;
        if (chosenWord != null) {
            Launcher want = null;
            for (Launcher l : Launcher.values()) {
                if (l.word().equals(chosenWord.toLowerCase(Locale.ROOT))) {
                    want = l;
                }
            }
            if (want == null) {
                throw new BootstrapException(GDA4J_LAUNCHER + "=" + chosenWord
                        + " is not a launcher: use torchrun, mpi, slurm or explicit");
            }
            Launcher w = want;
            chosen = found.stream().filter(r -> r.launcher() == w).findFirst().orElseThrow(() ->
                    new BootstrapException(GDA4J_LAUNCHER + "=" + chosenWord + " but its rank variables are not set ("
                            + rankVariables(w) + ")"));
        } else if (found.isEmpty()) {
            throw new BootstrapException("no launcher's environment found: start the processes with torchrun (" + RANK
                    + ", " + WORLD_SIZE + "), mpirun (" + OMPI_RANK + ", " + OMPI_SIZE + "), srun (" + SLURM_PROCID
                    + ", " + SLURM_NTASKS + ") or set " + GDA4J_RANK + ", " + GDA4J_WORLD_SIZE + " and " + GDA4J_ROOT);
        } else {
            chosen = found.get(0);
            for (Ranks other : found.subList(1, found.size())) {
                if (other.rank() != chosen.rank() || other.size() != chosen.size()) {
                    throw new BootstrapException("launchers disagree: " + describe(chosen, env) + " but "
                            + describe(other, env) + "; set " + GDA4J_LAUNCHER + "=" + chosen.launcher().word()
                            + " (or " + other.launcher().word() + ") to use one and ignore the other");
                }
            }
        }
        InetSocketAddress root = rootOf(chosen.launcher(), env);
        String token = tokenOf(env);
        try {
            return new LaunchEnvironment(chosen.rank(), chosen.size(), chosen.localRank(), chosen.localSize(), root,
                    token, chosen.launcher());
        } catch (IllegalArgumentException e) {
            throw new BootstrapException(chosen.launcher().word() + " environment is contradictory ("
                    + rankVariables(chosen.launcher()) + "): " + e.getMessage());
        }
    }

    private static String describe(Ranks r, Map<String, String> env) {
        return r.rankVar() + "=" + value(env, r.rankVar()) + " " + r.sizeVar() + "=" + value(env, r.sizeVar());
    }

    private static String rankVariables(Launcher l) {
        return switch (l) {
            case TORCHRUN -> String.join(", ", RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE);
            case OPEN_MPI -> String.join(", ", OMPI_RANK, OMPI_SIZE, OMPI_LOCAL_RANK, OMPI_LOCAL_SIZE);
            case SLURM -> String.join(", ", SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE);
            case EXPLICIT -> String.join(", ", GDA4J_RANK, GDA4J_WORLD_SIZE, GDA4J_LOCAL_RANK, GDA4J_LOCAL_WORLD_SIZE);
        };
    }

    /** Null when none of this launcher's variables is present; refuses a half-set launcher. */
    private static Ranks ranksOf(Launcher l, Map<String, String> env) {
        return switch (l) {
            case TORCHRUN -> fullRanks(l, env, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE);
            case OPEN_MPI -> fullRanks(l, env, OMPI_RANK, OMPI_SIZE, OMPI_LOCAL_RANK, OMPI_LOCAL_SIZE);
            case SLURM -> slurmRanks(env);
            case EXPLICIT -> explicitRanks(env);
        };
    }

    private static Ranks fullRanks(Launcher l, Map<String, String> env, String rankVar, String sizeVar,
                                   String localRankVar, String localSizeVar) {
        if (value(env, rankVar) == null && value(env, sizeVar) == null) {
            return null;
        }
        int rank = required(env, rankVar, l);
        int size = required(env, sizeVar, l);
        int localRank = required(env, localRankVar, l);
        int localSize = required(env, localSizeVar, l);
        return new Ranks(l, rank, size, localRank, localSize, rankVar, sizeVar);
    }

    private static Ranks slurmRanks(Map<String, String> env) {
        if (value(env, SLURM_PROCID) == null) {
            return null; // SLURM_NTASKS alone is set inside salloc/sbatch without srun: not a task of a step
        }
        Launcher l = Launcher.SLURM;
        int rank = required(env, SLURM_PROCID, l);
        int size = required(env, SLURM_NTASKS, l);
        int localRank = required(env, SLURM_LOCALID, l);
        int localSize;
        if (value(env, SLURM_NTASKS_PER_NODE) != null) {
            localSize = integer(env, SLURM_NTASKS_PER_NODE);
        } else if (value(env, SLURM_TASKS_PER_NODE) != null) {
            localSize = tasksOnThisNode(env);
        } else {
            throw new BootstrapException("slurm environment is incomplete: " + SLURM_PROCID + " is set but neither "
                    + SLURM_NTASKS_PER_NODE + " nor " + SLURM_TASKS_PER_NODE + " is");
        }
        return new Ranks(l, rank, size, localRank, localSize, SLURM_PROCID, SLURM_NTASKS);
    }

    /** SLURM_TASKS_PER_NODE is a list such as {@code 2(x3),1}: the count for node SLURM_NODEID. */
    private static int tasksOnThisNode(Map<String, String> env) {
        String text = value(env, SLURM_TASKS_PER_NODE);
        List<Integer> perNode = new ArrayList<>();
        try {
            for (String part : text.split(",")) {
                int open = part.indexOf("(x");
                if (open < 0) {
                    perNode.add(Integer.parseInt(part.strip()));
                } else {
                    if (!part.endsWith(")")) {
                        throw new NumberFormatException(part);
                    }
                    int count = Integer.parseInt(part.substring(0, open).strip());
                    int repeat = Integer.parseInt(part.substring(open + 2, part.length() - 1));
                    for (int i = 0; i < repeat; i++) {
                        perNode.add(count);
                    }
                }
            }
        } catch (NumberFormatException e) {
            throw new BootstrapException(SLURM_TASKS_PER_NODE + "=" + text
                    + " is not a list such as 2(x3),1; set " + SLURM_NTASKS_PER_NODE + " instead");
        }
        String node = value(env, SLURM_NODEID);
        if (node != null) {
            int n = integer(env, SLURM_NODEID);
            if (n >= perNode.size()) {
                throw new BootstrapException(SLURM_NODEID + "=" + n + " but " + SLURM_TASKS_PER_NODE + "=" + text
                        + " lists " + perNode.size() + " nodes");
            }
            return perNode.get(n);
        }
        if (perNode.stream().distinct().count() == 1) {
            return perNode.get(0);
        }
        throw new BootstrapException(SLURM_TASKS_PER_NODE + "=" + text + " differs between nodes and "
                + SLURM_NODEID + " is not set: set " + SLURM_NTASKS_PER_NODE);
    }

    private static Ranks explicitRanks(Map<String, String> env) {
        if (value(env, GDA4J_RANK) == null && value(env, GDA4J_WORLD_SIZE) == null) {
            return null;
        }
        Launcher l = Launcher.EXPLICIT;
        int rank = required(env, GDA4J_RANK, l);
        int size = required(env, GDA4J_WORLD_SIZE, l);
        boolean hasLocalRank = value(env, GDA4J_LOCAL_RANK) != null;
        boolean hasLocalSize = value(env, GDA4J_LOCAL_WORLD_SIZE) != null;
        if (hasLocalRank != hasLocalSize) {
            throw new BootstrapException("explicit environment is incomplete: set both " + GDA4J_LOCAL_RANK + " and "
                    + GDA4J_LOCAL_WORLD_SIZE + ", or neither (then all ranks are on one host)");
        }
        // Neither set: one host, the common case of a hand-started test.
        int localRank = hasLocalRank ? integer(env, GDA4J_LOCAL_RANK) : rank;
        int localSize = hasLocalSize ? integer(env, GDA4J_LOCAL_WORLD_SIZE) : size;
        return new Ranks(l, rank, size, localRank, localSize, GDA4J_RANK, GDA4J_WORLD_SIZE);
    }

    private static InetSocketAddress rootOf(Launcher l, Map<String, String> env) {
        String root = value(env, GDA4J_ROOT);
        if (root != null) {
            int colon = root.lastIndexOf(':');
            if (colon <= 0 || colon == root.length() - 1) {
                throw new BootstrapException(GDA4J_ROOT + "=" + root + " is not host:port");
            }
            String host = root.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1); // [::1]:port
            }
            return InetSocketAddress.createUnresolved(host, port(GDA4J_ROOT, root.substring(colon + 1)));
        }
        String addr = value(env, MASTER_ADDR);
        String portText = value(env, MASTER_PORT);
        if (addr == null || portText == null) {
            throw new BootstrapException("no root address for the bootstrap: set " + GDA4J_ROOT
                    + "=host:port (the host of rank 0 and a free port), or " + MASTER_ADDR + " and " + MASTER_PORT
                    + (l == Launcher.TORCHRUN ? " (torchrun sets them)" : ""));
        }
        int port = port(MASTER_PORT, portText);
        if (l == Launcher.TORCHRUN) {
            // torchrun's agent keeps its own TCP store on MASTER_PORT: the bootstrap takes the next port.
            if (port == 65535) {
                throw new BootstrapException(MASTER_PORT + "=65535 leaves no port for the bootstrap (it uses "
                        + MASTER_PORT + " + 1 under torchrun): set " + GDA4J_ROOT + "=host:port");
            }
            port++;
        }
        return InetSocketAddress.createUnresolved(addr, port);
    }

    private static String tokenOf(Map<String, String> env) {
        String token = value(env, GDA4J_JOB_TOKEN);
        if (token != null) {
            return token;
        }
        String run = value(env, TORCHELASTIC_RUN_ID);
        if (run != null) {
            return "torchrun:" + run;
        }
        String ompi = value(env, OMPI_JOB_ID);
        if (ompi != null) {
            return "ompi:" + ompi;
        }
        String pmix = value(env, PMIX_NAMESPACE);
        if (pmix != null) {
            return "pmix:" + pmix;
        }
        String slurm = value(env, SLURM_JOB_ID);
        if (slurm != null) {
            String step = value(env, SLURM_STEP_ID);
            return "slurm:" + slurm + (step == null ? "" : "." + step);
        }
        throw new BootstrapException("no job token: set " + GDA4J_JOB_TOKEN + " to the same value in every process of "
                + "the job (no launcher job id was found: " + TORCHELASTIC_RUN_ID + ", " + OMPI_JOB_ID + ", "
                + PMIX_NAMESPACE + ", " + SLURM_JOB_ID + ")");
    }

    /** A secret part shorter than this is guessable by trying. */
    static final int MIN_TOKEN_SECRET_CHARS = 16;
    /** A secret part of fewer distinct characters is guessable however long (16 random hex digits: 1 in 25,000). */
    static final int MIN_TOKEN_DISTINCT_CHARS = 6;

    /**
     * One line saying that {@code token} can be guessed and how to set a strong one, or null. Guessable: torchrun's
     * default run id ({@code none}), a launcher's numeric job id (Slurm, Open MPI), a PMIx namespace (its launcher's
     * host name and process id), fewer than {@value #MIN_TOKEN_SECRET_CHARS} characters, or a long one that repeats
     * itself (a shorter piece over and over, or fewer than {@value #MIN_TOKEN_DISTINCT_CHARS} distinct characters).
     * Whoever knows the token can join the job as a missing rank, and change frames on the way.
     */
    public static String guessableTokenWarning(String token) {
        String secret = token;
        for (String prefix : List.of("torchrun:", "ompi:", "pmix:", "slurm:")) {
            if (token.startsWith(prefix)) {
                secret = token.substring(prefix.length());
            }
        }
        String why;
        int period = period(secret);
        long distinct = secret.chars().distinct().count();
        if (secret.equals("none")) {
            why = "torchrun's default run id 'none' (no --rdzv-id)";
        } else if (secret.matches("[0-9.]+")) {
            why = "a numeric launcher job id";
        } else if (token.startsWith("pmix:")) {
            why = "a PMIx namespace, made of the launcher's host name and process id";
        } else if (secret.length() < MIN_TOKEN_SECRET_CHARS) {
            why = "only " + secret.length() + " characters";
        } else if (period <= secret.length() / 2) {
            why = "the same " + period + " character(s) over and over";
        } else if (distinct < MIN_TOKEN_DISTINCT_CHARS) {
            why = "only " + distinct + " distinct characters";
        } else {
            return null;
        }
        return "gda4j: warning: the bootstrap's job token is guessable (" + why + "), so a stranger who reaches the "
                + "root's port could join as a missing rank: set " + GDA4J_JOB_TOKEN + " to one random value in every "
                + "process, e.g. " + GDA4J_JOB_TOKEN + "=$(openssl rand -hex 16)";
    }

    /** The length of the shortest piece that {@code s} repeats (its own length when it repeats none). */
    private static int period(String s) {
        for (int p = 1; p < s.length(); p++) {
            boolean repeats = true;
            for (int i = p; i < s.length() && repeats; i++) {
                repeats = s.charAt(i) == s.charAt(i - p);
            }
            if (repeats) {
                return p;
            }
        }
        return s.length();
    }

    private static int port(String var, String text) {
        try {
            int p = Integer.parseInt(text.strip());
            if (p >= 1 && p <= 65535) {
                return p;
            }
        } catch (NumberFormatException e) {
            // falls through to the message
        }
        throw new BootstrapException(var + "=" + text + " is not a port (1 to 65535)");
    }

    private static int required(Map<String, String> env, String var, Launcher l) {
        if (value(env, var) == null) {
            throw new BootstrapException(l.word() + " environment is incomplete: " + var + " is not set ("
                    + rankVariables(l) + " are needed together)");
        }
        return integer(env, var);
    }

    private static int integer(Map<String, String> env, String var) {
        String text = value(env, var);
        try {
            int v = Integer.parseInt(text);
            if (v >= 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // falls through to the message
        }
        throw new BootstrapException(var + "=" + text + " is not a count (0 or more)");
    }

    /** Blank counts as unset, as for settings. */
    private static String value(Map<String, String> env, String var) {
        String v = env.get(var);
        return v == null || v.isBlank() ? null : v.strip();
    }
}
