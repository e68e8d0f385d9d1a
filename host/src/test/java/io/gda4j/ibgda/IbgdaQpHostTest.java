package io.gda4j.ibgda;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gda4j.mlx5.GccProgram;
import io.gda4j.mlx5.RequiresCompilers;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The GPU's posting protocol as {@code gda4j/transport/ibgda/qp.cuh} writes it, not a transcription: the header is
 * compiled for the host with g++ ({@code ibgda_qp_host.cpp}, with {@code ibgda_host_model.h} standing in for CUDA's
 * atomics, ordered accesses and fences) and its calls run on host threads against a model NIC that checks every
 * store that reaches it: each doorbell follows its own doorbell record with a system fence between them and never
 * runs past the send queue; each WQE it runs carries its own counter (a slot rewritten before the NIC ran it does
 * not); a WRITE that reads what an outstanding READ fills carries the fence bit (the model lands READ data late, as
 * a ConnectX may); an error CQE fails the call and the QP. Where the GPU tests need a GPU, this holds the header's
 * fence selection, doorbell order, CQ error branch and slot wait to those rules on any machine with g++.
 */
@RequiresCompilers(tools = "g++")
class IbgdaQpHostTest {
    /** Calls per poster thread in the stress scenario (four threads, a ring of 32 WQEBBs: hundreds of laps). */
    static final int CALLS_PER_THREAD = 5000;

    @TempDir
    static Path buildDir;

    private static final Map<String, Long> values = new HashMap<>();
    private static final List<String> violations = new ArrayList<>();

    @BeforeAll
    static void buildAndRun() throws Exception {
        Path include = GccProgram.deviceInclude("gda4j/transport/ibgda/qp.cuh");
        Path source = GccProgram.source("ibgda_qp_host.cpp");
        Path program = GccProgram.compileCxx(source, buildDir, List.of("-Wno-maybe-uninitialized", "-pthread",
                "-I", source.resolveSibling("host_cuda").toString(), "-I", source.getParent().toString(),
                "-I", include.toString(), "-DGDA4J_HOST_MODEL=\"ibgda_host_model.h\""));
        for (String line : GccProgram.run(program, null, Integer.toString(CALLS_PER_THREAD)).strip().split("\n")) {
            if (line.startsWith("violation ")) {
                violations.add(line.substring("violation ".length()));
            } else {
                String[] kv = line.split(" ");
                values.put(kv[0], Long.parseLong(kv[1]));
            }
        }
    }

    private static long v(String name) {
        Long value = values.get(name);
        if (value == null) {
            throw new AssertionError("ibgda_qp_host printed no " + name + "; it printed " + values.keySet());
        }
        return value;
    }

    private static void noViolations(String scenario) {
        assertEquals(0L, v(scenario + "_violations"), () -> "the model NIC saw the protocol broken; the first: "
                + violations);
    }

    @Test
    void aWqeBehindAnOutstandingReadCarriesTheFenceBit() {
        assertAll(() -> assertEquals(0L, v("fence_statuses"), "get, put and quiet return OK"),
                () -> assertEquals(1L, v("fence_put_after_get"), "a put posted after a get, before the get has"
                        + " completed, carries MLX5_WQE_CTRL_FENCE (fence_flag)"),
                () -> assertEquals(1L, v("fence_sent_fetched_bytes"), "the put sent the bytes the get fetched, not"
                        + " what its source held before"),
                () -> assertEquals(0L, v("fence_after_completion"), "once the get has completed, a put carries no"
                        + " fence (the QP is not serialised behind a READ that is done)"),
                () -> noViolations("fence"));
    }

    @Test
    void eachDoorbellFollowsItsRecordAndASystemFence() {
        assertAll(() -> assertEquals(0L, v("doorbell_statuses")),
                () -> assertEquals(5L, v("doorbell_count"), "one doorbell per call"),
                () -> assertEquals(v("doorbell_posted"), v("doorbell_rung"), "the last doorbell covers every WQEBB"
                        + " reserved"),
                () -> assertEquals(1L, v("doorbell_signals"), "the SET and ADD signals landed"),
                () -> noViolations("doorbell"));
    }

    @Test
    void anErrorCqeFailsTheCallAndTheQp() {
        assertAll(() -> assertEquals(0L, v("error_post_status"), "posting succeeds; the NIC refuses the WQE later"),
                () -> assertEquals(-5L, v("error_quiet_status"), "quiet returns ERR_TRANSPORT on the error CQE"),
                () -> assertEquals((long) IbgdaErrorDecoder.CQE_ERROR, v("error_record_code"), "the record says ERROR_CQE"),
                () -> assertEquals(0x13L, v("error_record_syndrome"), "with the CQE's syndrome (REMOTE_ACCESS)"),
                () -> assertEquals(0x08L, v("error_record_wqe_opcode"), "and the WQE's opcode (RDMA_WRITE)"),
                () -> assertEquals(0x1234L, v("error_record_qpn"), "and the QP number"),
                () -> assertEquals(1L, v("error_qp_failed"), "the QP is marked failed"),
                () -> assertEquals(-5L, v("error_next_status"), "the next call fails at once"),
                () -> assertEquals(0L, v("error_next_posted"), "without reserving anything"),
                () -> noViolations("error"));
    }

    @Test
    void aFullRingWaitsForCompletionsAndNeverRewritesASlot() {
        assertAll(() -> assertEquals(8L, v("sq_full_first_ok"), "a ring of 8 WQEBBs takes 8 puts"),
                () -> assertEquals(-1L, v("sq_full_status"), "the ninth, with a NIC that completes nothing, waits"
                        + " and gives up with ERR_TIMEOUT"),
                () -> assertEquals((long) IbgdaErrorDecoder.SQ_FULL, v("sq_full_record_code"), "naming ERROR_SQ_FULL"),
                () -> assertEquals(1L, v("sq_full_qp_failed"), "its reservation is a hole: the QP is failed"),
                () -> assertEquals(8L, v("sq_full_nic_ran"), "the NIC then runs the eight, none rewritten"),
                () -> noViolations("sq_full"));
    }

    @Test
    void overSeveralQpsASignalAfterTheFenceNeverOvertakesDataOfAnotherQp() {
        assertAll(() -> assertEquals(0L, v("qps_statuses"), "put, fence_qps, signal and quiet return OK, and"
                        + " qp_for / qp_base pick entries of the peer's array"),
                () -> assertEquals(1L, v("qps_unfenced_overtaken"), "the control: without the fence the signal on"
                        + " the second QP lands before the data on the first (nothing orders two QPs)"),
                () -> assertEquals(0L, v("qps_fenced_overtaken"), "with fence_qps (fence(peer) over several QPs)"
                        + " between them, the data is at the peer before the signal"),
                () -> noViolations("qps"));
    }

    @Test
    void manyPostersOnASmallRingLoseNothing() {
        assertAll(() -> assertEquals(0L, v("stress_failed_calls"), () -> "calls failed, error record code "
                        + v("stress_error_code") + "; violations: " + violations),
                () -> assertEquals(0L, v("stress_counter_mismatches"), "each thread's ADD counter counts its"
                        + " put_signals exactly"),
                () -> assertEquals(v("stress_posted"), v("stress_executed"), "the NIC ran every WQEBB reserved"),
                () -> assertEquals(v("stress_posted"), v("stress_retired"), "and every one was retired by a CQE"),
                () -> assertEquals(0L, v("stress_error_code"), "no error record"),
                () -> noViolations("stress"));
    }
}
