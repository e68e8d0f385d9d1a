package io.gda4j.world;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Random sequences of allocations and frees against a list of the live regions: every region is aligned, inside the
 * heap and disjoint from the others; an allocation is refused only when no free range holds it; the free bytes add
 * up; and a second heap given the same calls hands out the same offsets (what keeps every process's plan the same).
 */
class SymmetricHeapPropertyTest {
    private static final long HEAP_BYTES = 1 << 16;

    /** The heap under test, the live regions, and the calls made so far (to replay on a second heap). */
    static final class Plan {
        final SymmetricHeap heap = new SymmetricHeap(HEAP_BYTES);
        final List<HeapBuffer> live = new ArrayList<>();
        final List<Consumer<Replay>> calls = new ArrayList<>();
    }

    /** A second heap fed the same calls, and what it handed out. */
    static final class Replay {
        final SymmetricHeap heap = new SymmetricHeap(HEAP_BYTES);
        final List<HeapBuffer> live = new ArrayList<>();
        final List<Long> offsets = new ArrayList<>();
    }

    @Property(tries = 200)
    void regionsStayDisjointAndTheSameCallsGiveTheSameOffsets(@ForAll("plans") ActionChain<Plan> chain) {
        Plan end = chain.withInvariant("free bytes add up", p -> {
            long held = p.live.stream().mapToLong(HeapBuffer::sizeBytes).sum();
            assertEquals(HEAP_BYTES - held, p.heap.freeBytes());
        }).run();
        Replay replay = new Replay();
        for (Consumer<Replay> call : end.calls) {
            call.accept(replay);
        }
        List<Long> offsets = end.live.stream().map(HeapBuffer::offset).toList();
        assertEquals(offsets, replay.live.stream().map(HeapBuffer::offset).toList());
    }

    @Provide
    Arbitrary<ActionChain<Plan>> plans() {
        return ActionChain.startWith(Plan::new).withAction(new Allocate()).withAction(new Free())
                .withMaxTransformations(40);
    }

    private static final class Allocate implements Action.Independent<Plan> {
        @Override
        public Arbitrary<Transformer<Plan>> transformer() {
            Arbitrary<Long> sizes = Arbitraries.oneOf(Arbitraries.longs().between(0, 512),
                    Arbitraries.longs().between(0, HEAP_BYTES / 3));
            Arbitrary<Long> alignments = Arbitraries.integers().between(0, 12).map(b -> 1L << b);
            return sizes.flatMap(size -> alignments.map(alignment -> Transformer.mutate(
                    "allocate " + size + " aligned to " + alignment, p -> allocate(p, size, alignment))));
        }

        private static void allocate(Plan p, long size, long alignment) {
            p.calls.add(r -> {
                try {
                    HeapBuffer b = r.heap.allocate(size, alignment);
                    if (b.sizeBytes() > 0) {
                        r.live.add(b);
                    }
                } catch (IllegalStateException refused) {
                    // the same refusal as the heap under test: checked there
                }
            });
            try {
                HeapBuffer b = p.heap.allocate(size, alignment);
                assertEquals(size, b.sizeBytes());
                assertEquals(0, b.offset() % alignment, "aligned");
                assertTrue(b.end() <= HEAP_BYTES, "inside the heap");
                for (HeapBuffer other : p.live) {
                    assertTrue(b.sizeBytes() == 0 || b.end() <= other.offset() || other.end() <= b.offset(),
                            b + " overlaps " + other);
                }
                if (b.sizeBytes() > 0) {
                    p.live.add(b);
                }
            } catch (IllegalStateException refused) {
                if (fits(p.live, size, alignment)) {
                    fail("refused " + size + " aligned to " + alignment + " though a free range holds it: "
                            + refused.getMessage());
                }
            }
        }

        /** Whether some gap between the live regions holds {@code size} bytes at {@code alignment}. */
        private static boolean fits(List<HeapBuffer> live, long size, long alignment) {
            List<HeapBuffer> sorted = new ArrayList<>(live);
            sorted.sort(Comparator.comparingLong(HeapBuffer::offset));
            long start = 0;
            for (int i = 0; i <= sorted.size(); i++) {
                long end = i < sorted.size() ? sorted.get(i).offset() : HEAP_BYTES;
                long aligned = (start + alignment - 1) & -alignment;
                if (aligned <= end && size <= end - aligned) {
                    return true;
                }
                if (i < sorted.size()) {
                    start = sorted.get(i).end();
                }
            }
            return false;
        }
    }

    private static final class Free implements Action.Dependent<Plan> {
        @Override
        public boolean precondition(Plan p) {
            return !p.live.isEmpty();
        }

        @Override
        public Arbitrary<Transformer<Plan>> transformer(Plan state) {
            return Arbitraries.integers().between(0, state.live.size() - 1).map(i -> Transformer.mutate(
                    "free region " + i, p -> {
                        HeapBuffer b = p.live.remove((int) i);
                        p.heap.free(b);
                        p.calls.add(r -> r.heap.free(r.live.remove((int) i)));
                    }));
        }
    }
}
