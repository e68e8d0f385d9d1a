package io.gda4j.ibgda;

import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.nic.emulated.EmulatedFault;
import io.gda4j.world.DeviceErrorDecoder;
import io.gda4j.world.ErrorRecord;
import io.gda4j.world.ErrorRecordDescriptor.Code;

import java.util.Optional;

/**
 * Words the error CQE that {@code gda4j/transport/ibgda_qp.cuh} copied into the device error record as the host's
 * {@link CompletionErrorException} says it, plus the emulated NIC's reason for its own vendor syndromes. Registered
 * in {@code META-INF/services/io.gda4j.world.DeviceErrorDecoder}.
 */
public final class CqeErrorDecoder implements DeviceErrorDecoder {
    @Override
    public Optional<String> describe(ErrorRecord record) {
        if (record.code() != Code.CQE_ERROR) {
            return Optional.empty();
        }
        // Fields as ErrorRecordDescriptor.Code.CQE_ERROR packs them.
        long seen = record.seen();
        int syndrome = (int) (seen & 0xff);
        int vendor = (int) ((seen >>> 8) & 0xff);
        int cqeOpcode = (int) ((seen >>> 16) & 0xf);
        DecodedCqe cqe = new DecodedCqe(cqeOpcode, 0, record.cmp() & 0xffffff, (int) (record.offset() & 0xffff),
                (int) record.expected(), 0, syndrome, vendor);
        String text = new CompletionErrorException(cqe).getMessage();
        EmulatedFault emulated = EmulatedFault.ofVendorSyndrome(vendor);
        return Optional.of(emulated == null ? text : text + " Emulated NIC: " + emulated.description() + ".");
    }
}
