package io.gda4j.nic;

/**
 * An error CQE as a device error record: the code that both posters on a NIC write, the GPU's (ibgda) and the host
 * proxy's verbs handler, and how the record's fields carry the CQE: offset is the WQE index, expected the WQE's opcode,
 * seen {@code syndrome | vendor syndrome << 8 | CQE opcode << 16}, cmp the QP number. ibgda's decoder words it.
 */
public final class CqeErrorRecord {
    /** {@code ERROR_CQE} of the IBGDA back end's device headers. */
    public static final int CODE = 10;
    public static final String NAME = "CQE_ERROR";

    private CqeErrorRecord() {
    }

    /** The record's {@code seen} for an error CQE. */
    public static long seen(int syndrome, int vendorSyndrome, int cqeOpcode) {
        return (syndrome & 0xff) | (long) (vendorSyndrome & 0xff) << 8 | (long) (cqeOpcode & 0xf) << 16;
    }
}
