/**
 * What the MoE calls take and return (io.gda4j.moe): {@link io.gda4j.moe.tensor.DeviceTensor}, a row-major view of
 * device memory with an {@link io.gda4j.moe.tensor.ElementType}, and the number formats of its rows, written so Java
 * and the kernels agree bit for bit: {@link io.gda4j.moe.tensor.Bf16}, {@link io.gda4j.moe.tensor.Fp8E4m3} and the
 * per-128-channel FP8 cast {@link io.gda4j.moe.tensor.Fp8BlockQuantizer}. Both modes and the references use them.
 */
package io.gda4j.moe.tensor;
