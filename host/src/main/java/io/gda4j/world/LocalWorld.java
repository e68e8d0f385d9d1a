package io.gda4j.world;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaStatus;
import io.gda4j.cuda.ModuleImage;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.Transport;
import io.gda4j.transport.TransportChoice;
import io.gda4j.transport.TransportProvider;
import io.gda4j.transport.TransportSetupException;
import io.gda4j.transport.Transports;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;

/**
 * A world whose ranks all live in this JVM, one per listed GPU: handy for tests, samples and single-host
 * benchmarks. Ranks may share a GPU (list it twice) to test on a one-GPU machine; their peers then reach them
 * through the shared context, and they share its modules (see the package docs for what that asks of callers).
 */
public final class LocalWorld implements World {
    private final WorldConfig config;
    private final SymmetricHeap heap;
    private final List<Rank> ranks;
    private final Transport[][] transports;
    private final LocalRanks local;

    private LocalWorld(WorldConfig config, List<Rank> ranks, Transport[][] transports, ModuleTable modules) {
        this.config = config;
        this.heap = new SymmetricHeap(config.heapSizeBytes());
        this.local = new LocalRanks(ranks, config, modules);
        this.ranks = local.list();
        this.transports = transports;
    }

    /** Builds a world from the resolved configuration (system properties, environment, defaults). */
    public static LocalWorld create() {
        return create(WorldConfig.resolve());
    }

    /**
     * Builds a world of one rank per GPU in {@code config.gpus()} (every visible GPU when empty), connects every
     * pair with the configured transport and writes each rank's device view.
     *
     * @throws WorldSetupException when CUDA is unavailable, a GPU is missing, or the transport cannot connect a pair
     */
    public static LocalWorld create(WorldConfig config) {
        CudaStatus status = Cuda.status();
        if (!status.available()) {
            throw new WorldSetupException("a gda4j world needs a CUDA GPU: " + status.reason());
        }
        int visible = Cuda.deviceCount();
        List<Integer> gpus = new ArrayList<>(config.gpus());
        if (gpus.isEmpty()) {
            for (int g = 0; g < visible; g++) {
                gpus.add(g);
            }
        }
        if (gpus.isEmpty()) {
            throw new WorldSetupException("no CUDA device is visible (CUDA_VISIBLE_DEVICES may hide them)");
        }
        for (int g : gpus) {
            if (g >= visible) {
                throw new WorldSetupException(String.format(Locale.ROOT,
                        "this run needs GPU %d but the machine has %d GPU%s (ordinals 0..%d); list fewer GPUs or use a larger machine",
                        g, visible, visible == 1 ? "" : "s", visible - 1));
            }
        }
        List<TransportProvider> providers = Transports.providers(config.settings());
        int n = gpus.size();
        List<Rank> ranks = new ArrayList<>();
        ModuleTable modules = new ModuleTable();
        try {
            for (int r = 0; r < n; r++) {
                CudaContext ctx = Cuda.device(gpus.get(r)).primaryContext();
                try {
                    ranks.add(new Rank(r, n, ctx, config.heapSizeBytes(), config.waitTimeout(), modules));
                } catch (RuntimeException e) {
                    ctx.close();
                    throw e;
                }
            }
            Transport[][] transports = new Transport[n][n];
            for (Rank local : ranks) {
                for (Rank peer : ranks) {
                    PeerLink link = connect(config.transport(), providers, local, peer);
                    local.setLink(peer.rank(), link);
                    transports[local.rank()][peer.rank()] = link.transport();
                }
            }
            AtomicRouting.apply(ranks, providers);
            for (Rank r : ranks) {
                r.writeDeviceView(config.waitTimeout().toNanos());
            }
            return new LocalWorld(config, ranks, transports, modules);
        } catch (RuntimeException e) {
            try {
                modules.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            for (int i = ranks.size() - 1; i >= 0; i--) {
                try {
                    ranks.get(i).close();
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    private static PeerLink connect(String wanted, List<TransportProvider> providers, Rank local, Rank peer) {
        if (local.rank() == peer.rank()) {
            return new PeerLink(Transport.SELF, local.heapBase(), 0, 0, 0, local.abortFlagAddress(), null);
        }
        TransportProvider chosen;
        try {
            chosen = TransportChoice.choose(wanted, providers, "rank " + local.rank() + " to rank " + peer.rank(),
                    p -> p.unavailableReason(local, peer), "between these ranks", "");
        } catch (TransportSetupException e) {
            throw new WorldSetupException(e.getMessage(), e);
        }
        return chosen.connect(local, peer);
    }

    @Override
    public int size() {
        return ranks.size();
    }

    @Override
    public List<Rank> localRanks() {
        return ranks;
    }

    @Override
    public Rank rank(int rank) {
        LocalRanks.checkInWorld(rank, ranks.size());
        return ranks.get(rank);
    }

    @Override
    public SymmetricHeap heap() {
        return heap;
    }

    @Override
    public WorldConfig config() {
        return config;
    }

    @Override
    public Transport transport(int from, int to) {
        rank(from);
        rank(to);
        return transports[from][to];
    }

    @Override
    public void checkErrors() {
        local.checkErrors();
    }

    @Override
    public void clearErrors() {
        local.clearErrors();
    }

    @Override
    public void abort() {
        local.abort();
    }

    /** Every rank is in this process: nothing to wait for. */
    @Override
    public void barrier() {
    }

    /** Every rank is in this process: its array is everyone's. */
    @Override
    public byte[][] allGather(byte[] mine) {
        return new byte[][] {mine.clone()};
    }

    @Override
    public void loadModules(ModuleImage... images) {
        local.loadModules(images);
    }

    /**
     * Stops the world's kernels (raising every abort flag if one still runs, see {@link LocalRanks#stopRunningKernels})
     * before the modules are unloaded and the ranks closed. A second call does nothing.
     */
    @Override
    public void close() {
        local.closeWorld(UnaryOperator.identity(), () -> { });
    }
}
