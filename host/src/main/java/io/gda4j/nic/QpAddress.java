package io.gda4j.nic;

import io.gda4j.verbs.Gid;
import io.gda4j.verbs.IbvGidDescriptor;
import io.gda4j.verbs.VerbsConstants;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One side of an RC connection: what it tells the other side (directly within one process, or over the bootstrap as
 * bytes: {@link RcEndpointsDescriptor}) so that {@link NicQp#connect} can move the other side's QP to RTR towards it.
 * These are exactly the fields of {@code ibv_qp_attr} at INIT to RTR that come from the remote side
 * ({@code dest_qp_num}, {@code rq_psn}, {@code ah_attr.dlid}, {@code ah_attr.grh.dgid}, and the remote half of
 * {@code path_mtu}); everything else there (local port, GID index, SL, timers, READ/atomic depths) is the local
 * side's choice.
 *
 * @param device    the NIC that owns the QP, e.g. {@code "mlx5_0"} or {@code "emulated#1"}; a QP can only connect to
 *                  an address of a compatible NIC (the emulated NIC: one of this process)
 * @param port      the NIC port the QP is bound to, from 1 (for messages: the connecting side uses its own port)
 * @param linkLayer the port's {@code IBV_LINK_LAYER_*}: InfiniBand or Ethernet (RoCE), {@code UNSPECIFIED} for the
 *                  emulated NIC; an RC connection needs the same on both sides
 * @param qpn       24-bit QP number: the other side's {@code dest_qp_num}
 * @param psn       24-bit packet sequence number this QP starts sending with: the other side's {@code rq_psn}
 * @param lid       port LID (InfiniBand; 0 on RoCE and on the emulated NIC): the other side's {@code dlid}
 * @param gid       port GID (RoCE; zero on InfiniBand within a subnet, where no GRH is sent, and on the emulated NIC):
 *                  the other side's {@code dgid}
 * @param pathMtu   the largest path MTU this side takes ({@code IBV_MTU_*}: its port's active MTU, capped by its
 *                  settings); the connection runs at the smaller of the two sides'. 0: this side states no limit (the
 *                  emulated NIC)
 */
public record QpAddress(String device, int port, int linkLayer, int qpn, int psn, int lid, Gid gid, int pathMtu) {
    /** Port 1, no link layer, no MTU limit: a NIC without ports (the emulated NIC, test fakes). */
    public QpAddress(String device, int qpn, int lid, Gid gid, int psn) {
        this(device, 1, VerbsConstants.IBV_LINK_LAYER_UNSPECIFIED, qpn, psn, lid, gid, 0);
    }

    public QpAddress {
        Objects.requireNonNull(device, "device");
        if ((qpn & ~0xffffff) != 0 || (psn & ~0xffffff) != 0 || (lid & ~0xffff) != 0) {
            throw new IllegalArgumentException(String.format("QPN 0x%x and PSN 0x%x are 24-bit, LID 0x%x 16-bit",
                    qpn, psn, lid));
        }
        if (port < 1 || port > 0xff) {
            throw new IllegalArgumentException("NIC ports are numbered 1 to 255, not " + port);
        }
        if (linkLayer != VerbsConstants.IBV_LINK_LAYER_UNSPECIFIED
                && linkLayer != VerbsConstants.IBV_LINK_LAYER_INFINIBAND
                && linkLayer != VerbsConstants.IBV_LINK_LAYER_ETHERNET) {
            throw new IllegalArgumentException("link layer " + linkLayer + " is none of IBV_LINK_LAYER_UNSPECIFIED (0),"
                    + " INFINIBAND (1), ETHERNET (2)");
        }
        if (pathMtu != 0 && VerbsConstants.mtuBytes(pathMtu) < 0) {
            throw new IllegalArgumentException("path MTU " + pathMtu + " is no IBV_MTU_* (1 = 256 to 5 = 4096 bytes),"
                    + " nor 0 (no limit)");
        }
        if (device.getBytes(StandardCharsets.UTF_8).length > RcEndpointsDescriptor.MAX_DEVICE_BYTES) {
            throw new IllegalArgumentException("a NIC name of at most " + RcEndpointsDescriptor.MAX_DEVICE_BYTES
                    + " bytes, not " + device);
        }
        if (gid == null) {
            gid = Gid.zero();
        }
    }

    /** Writes this address at {@code out}'s position, after its peer rank (layout: {@link RcEndpointsDescriptor}). */
    void encodeTo(ByteBuffer out) {
        byte[] name = device.getBytes(StandardCharsets.UTF_8);
        out.putInt(qpn).putInt(psn).putShort((short) lid).put((byte) port).put((byte) linkLayer).put((byte) pathMtu)
                .put((byte) name.length).put(gid.raw()).put(name);
    }

    /** Bytes {@link #encodeTo} writes. */
    int encodedBytes() {
        return RcEndpointsDescriptor.ENTRY_FIXED_BYTES - RcEndpointsDescriptor.QPN_OFFSET
                + device.getBytes(StandardCharsets.UTF_8).length;
    }

    /**
     * Reads an address {@link #encodeTo} wrote, at {@code in}'s position.
     *
     * @throws IllegalArgumentException saying which field is out of range
     * @throws BufferUnderflowException when the bytes end first
     */
    static QpAddress decodeFrom(ByteBuffer in) {
        int qpn = in.getInt();
        int psn = in.getInt();
        int lid = Short.toUnsignedInt(in.getShort());
        int port = Byte.toUnsignedInt(in.get());
        int linkLayer = Byte.toUnsignedInt(in.get());
        int pathMtu = Byte.toUnsignedInt(in.get());
        int nameBytes = Byte.toUnsignedInt(in.get());
        byte[] gid = new byte[IbvGidDescriptor.SIZE];
        in.get(gid);
        if (nameBytes > RcEndpointsDescriptor.MAX_DEVICE_BYTES) {
            throw new IllegalArgumentException("a NIC name of " + nameBytes + " bytes (at most "
                    + RcEndpointsDescriptor.MAX_DEVICE_BYTES + ")");
        }
        byte[] name = new byte[nameBytes];
        in.get(name);
        return new QpAddress(new String(name, StandardCharsets.UTF_8), port, linkLayer, qpn, psn, lid, Gid.of(gid),
                pathMtu);
    }

    @Override
    public String toString() {
        return String.format("QP 0x%06x on %s", qpn, device);
    }

    /** Every field, for messages about a connection that failed: {@code QP 0x000123 on mlx5_0 port 1 (RoCE, ...)}. */
    public String describe() {
        return String.format("QP 0x%06x on %s port %d (%s, LID 0x%x, GID %s, PSN 0x%06x, path MTU %s)", qpn, device,
                port, VerbsConstants.linkLayerName(linkLayer), lid, gid, psn,
                pathMtu == 0 ? "unstated" : Integer.toString(VerbsConstants.mtuBytes(pathMtu)));
    }
}
