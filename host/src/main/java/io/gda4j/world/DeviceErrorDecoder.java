package io.gda4j.world;

import java.util.Optional;

/**
 * Words a device error record whose fields only a transport can read (an IBGDA error CQE carries mlx5 syndromes),
 * so that the world names no transport's classes. A transport registers one in
 * {@code META-INF/services/io.gda4j.world.DeviceErrorDecoder}; {@link ErrorRecord#describe} asks each in turn.
 */
public interface DeviceErrorDecoder {
    /** What {@code record} says, in a sentence a person can act on, or empty when it is not this decoder's. */
    Optional<String> describe(ErrorRecord record);
}
