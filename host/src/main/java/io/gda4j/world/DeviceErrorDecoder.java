package io.gda4j.world;

import java.time.Duration;
import java.util.Map;

/**
 * Words the device error records of codes the world does not own: a transport's (a proxy FIFO that stayed full, an
 * IBGDA error CQE) or the MoE's, so that the world names none of them. Each owner defines its {@code ERROR_*} codes
 * beside its device code and registers one decoder in {@code META-INF/services/io.gda4j.world.DeviceErrorDecoder};
 * {@link ErrorRecord#describe} hands a record to the decoder of its code. Two decoders may not claim one code, nor
 * one of the world's ({@link ErrorRecordDescriptor.Code}).
 */
public interface DeviceErrorDecoder {
    /** The codes this decoder words, by value, each with its name ({@code ERROR_PROXY_FIFO_FULL} is "PROXY_FIFO_FULL"). */
    Map<Integer, String> codes();

    /** Whether a record of {@code code} is a wait that gave up (the host reports it as a {@link DeviceWaitTimeoutException}). */
    default boolean isTimeout(int code) {
        return false;
    }

    /**
     * What {@code record}, of one of {@link #codes()}, says, in a sentence a person can act on.
     *
     * @param where       how the sentence begins: the rank, the call and its peer, the block and thread
     *                    ("rank 1, put to peer 0 (block 3, thread 7)")
     * @param waitTimeout the configured wait timeout, for messages about waits that gave up
     */
    String describe(ErrorRecord record, String where, Duration waitTimeout);
}
