package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.mlx5.CqeDescriptor;
import io.gda4j.mlx5.CqeOpcode;
import io.gda4j.mlx5.GccProgram;
import io.gda4j.mlx5.WqeDescriptor;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUpointer_attribute;
import jcuda.driver.CUresult;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The facts the mlx5 NIC computes with, against the headers that define them: rdma-core's mlx5dv.h/verbs.h (the
 * send-queue overhead libmlx5 reserves, segment sizes) and the CUDA driver's cuda.h (registration flags, the
 * dma-buf handle type, the cuMemGetHandleForAddressRange prototype JCuda lacks). Skipped, with the reason, where
 * gcc or a header is missing.
 */
class Mlx5HeaderFactsTest {
    static final String RDMA_CORE_FACTS = """
            #include <stdio.h>
            #include <infiniband/verbs.h>
            #include <infiniband/mlx5dv.h>
            #define MAX(a, b) ((a) > (b) ? (a) : (b))
            int main(void) {
                /* providers/mlx5/verbs.c _sq_overhead for an RC QP made by ibv_create_qp (all default ops) */
                size_t ctrl = sizeof(struct mlx5_wqe_ctrl_seg);
                size_t rdma = ctrl + sizeof(struct mlx5_wqe_raddr_seg);
                size_t atomic = rdma + sizeof(struct mlx5_wqe_atomic_seg);
                size_t mw = ctrl + sizeof(struct mlx5_wqe_umr_ctrl_seg) + sizeof(struct mlx5_wqe_mkey_context_seg)
                        + MAX(sizeof(struct mlx5_wqe_umr_klm_seg), 64);
                printf("RC_SQ_OVERHEAD_BYTES %zu\\n", MAX(MAX(ctrl, rdma), MAX(atomic, mw)));
                printf("INLINE_HEADER_BYTES %zu\\n", sizeof(struct mlx5_wqe_inl_data_seg));
                printf("DATA_SEG %zu\\n", sizeof(struct mlx5_wqe_data_seg));
                printf("MLX5_SEND_WQE_BB %d\\n", MLX5_SEND_WQE_BB);
                printf("CQE64 %zu\\n", sizeof(struct mlx5_cqe64));
                printf("MLX5_CQE_INVALID %d\\n", MLX5_CQE_INVALID);
                printf("MLX5_CQE_REQ_ERR %d\\n", MLX5_CQE_REQ_ERR);
                printf("MLX5_CQE_RESP_ERR %d\\n", MLX5_CQE_RESP_ERR);
                printf("IBV_ATOMIC_NONE %d\\n", IBV_ATOMIC_NONE);
                return 0;
            }
            """;

    static final String CUDA_FACTS = """
            #include <stdio.h>
            #include <cuda.h>
            #ifdef cuMemGetHandleForAddressRange
            #error "cuMemGetHandleForAddressRange is a versioned macro; LibCuda binds the plain symbol"
            #endif
            _Static_assert(__builtin_types_compatible_p(__typeof__(&cuMemGetHandleForAddressRange),
                    CUresult (*)(void *, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long)),
                    "LibCuda's prototype of cuMemGetHandleForAddressRange");
            _Static_assert(sizeof(CUdeviceptr) == 8 && sizeof(size_t) == 8, "LP64");
            int main(void) {
                printf("CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD %d\\n", (int) CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD);
                printf("RING_FLAGS %d\\n", CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
                printf("IO_FLAGS %d\\n", CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP
                        | CU_MEMHOSTREGISTER_IOMEMORY);
                printf("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED %d\\n",
                        (int) CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
                printf("CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED %d\\n", (int) CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);
                printf("CU_POINTER_ATTRIBUTE_SYNC_MEMOPS %d\\n", (int) CU_POINTER_ATTRIBUTE_SYNC_MEMOPS);
                return 0;
            }
            """;

    @Test
    void rdmaCoreFacts(@TempDir Path dir) throws Exception {
        Map<String, Long> c = run(dir, "mlx5_facts.c", RDMA_CORE_FACTS,
                List.of("infiniband/verbs.h", "infiniband/mlx5dv.h"), List.of());
        expect(Mlx5QueueSizing.RC_SQ_OVERHEAD_BYTES, c.get("RC_SQ_OVERHEAD_BYTES"));
        expect(Mlx5QueueSizing.INLINE_HEADER_BYTES, c.get("INLINE_HEADER_BYTES"));
        expect(WqeDescriptor.DATA_SIZE, c.get("DATA_SEG"));
        expect(WqeDescriptor.WQEBB_SIZE, c.get("MLX5_SEND_WQE_BB"));
        expect(CqeDescriptor.CQE_SIZE, c.get("CQE64"));
        expect(CqeOpcode.INVALID, c.get("MLX5_CQE_INVALID"));
        expect(CqeOpcode.REQ_ERR, c.get("MLX5_CQE_REQ_ERR"));
        expect(CqeOpcode.RESP_ERR, c.get("MLX5_CQE_RESP_ERR"));
        expect(0L, c.get("IBV_ATOMIC_NONE"), "capabilities().atomics() is atomic_cap != IBV_ATOMIC_NONE");
    }

    @Test
    void cudaDriverFacts(@TempDir Path dir) throws Exception {
        Path include = GccProgram.cudaInclude();
        assumeTrue(include != null, "no CUDA toolkit headers (cuda.h) under CUDA_HOME or /usr/local/cuda*");
        Map<String, Long> c = run(dir, "cuda_facts.c", CUDA_FACTS, List.of(), List.of("-I", include.toString()));
        expect(io.gda4j.cuda.DmaBuf.CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, c.get("CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD"));
        expect(CudaHostMappings.RING_FLAGS, c.get("RING_FLAGS"));
        expect(CudaHostMappings.IO_FLAGS, c.get("IO_FLAGS"));
        expect(CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                c.get("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"));
        expect(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
                c.get("CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED"));
        expect(CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, c.get("CU_POINTER_ATTRIBUTE_SYNC_MEMOPS"));
    }

    /** A header value (printed as a long) equals the Java constant. */
    private static void expect(long javaValue, Long headerValue) {
        expect(javaValue, headerValue, "");
    }

    private static void expect(long javaValue, Long headerValue, String why) {
        assertEquals(Long.valueOf(javaValue), headerValue, why);
    }

    private static Map<String, Long> run(Path dir, String name, String source, List<String> headers,
                                         List<String> flags) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, source);
        Path program = GccProgram.compile(file, dir, headers, flags);
        Map<String, Long> values = new HashMap<>();
        for (String line : GccProgram.run(program, null).strip().split("\n")) {
            String[] kv = line.split(" ");
            values.put(kv[0], Long.parseLong(kv[1]));
        }
        return values;
    }

}
