package io.gda4j.cuda;

/**
 * What {@link Cuda#status()} found when it probed the CUDA driver.
 *
 * @param available     true when the driver loaded, {@code cuInit} succeeded and at least one GPU is visible
 * @param reason        a human sentence: why CUDA is unavailable, or a summary of what is available
 * @param driverVersion the driver's CUDA version as {@code cuDriverGetVersion} reports it (13000 for 13.0);
 *                      0 when the driver could not be loaded
 * @param deviceCount   the number of visible GPUs; 0 when unavailable
 */
public record CudaStatus(boolean available, String reason, int driverVersion, int deviceCount) {
}
