package io.gda4j.nic;

import io.gda4j.verbs.Gid;

import java.util.Objects;

/**
 * What one side of an RC connection tells the other (over the bootstrap, or directly within one process) so that
 * {@link NicQp#connect} can reach it; {@code Mlx5Nic} turns it into an {@code io.gda4j.verbs.RcPeer}.
 *
 * @param device the NIC that owns the QP, e.g. {@code "mlx5_0"} or {@code "emulated#1"}; a QP can only connect to
 *               an address of a compatible NIC (the emulated NIC: the same instance)
 * @param qpn    24-bit QP number
 * @param lid    port LID (InfiniBand; 0 on RoCE and on the emulated NIC)
 * @param gid    port GID (RoCE; zero on InfiniBand within a subnet and on the emulated NIC)
 * @param psn    24-bit starting packet sequence number
 */
public record QpAddress(String device, int qpn, int lid, Gid gid, int psn) {
    public QpAddress {
        Objects.requireNonNull(device, "device");
        if ((qpn & ~0xffffff) != 0 || (psn & ~0xffffff) != 0 || (lid & ~0xffff) != 0) {
            throw new IllegalArgumentException(String.format("QPN 0x%x and PSN 0x%x are 24-bit, LID 0x%x 16-bit",
                    qpn, psn, lid));
        }
        if (gid == null) {
            gid = Gid.zero();
        }
    }

    @Override
    public String toString() {
        return String.format("QP 0x%06x on %s", qpn, device);
    }
}
