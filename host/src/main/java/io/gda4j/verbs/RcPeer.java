package io.gda4j.verbs;

/**
 * What the other side of an RC connection tells us (over the bootstrap) so our QP can reach its QP.
 *
 * @param qpn 24-bit QP number
 * @param lid the peer port's LID (InfiniBand; 0 on RoCE)
 * @param gid the peer port's GID; all zero on InfiniBand within a subnet, required on RoCE
 * @param psn 24-bit packet sequence number the peer starts sending with
 */
public record RcPeer(int qpn, int lid, Gid gid, int psn) {
    public RcPeer {
        if ((qpn & ~0xffffff) != 0 || (psn & ~0xffffff) != 0 || (lid & ~0xffff) != 0) {
            throw new IllegalArgumentException(String.format("QPN 0x%x and PSN 0x%x are 24-bit, LID 0x%x 16-bit",
                    qpn, psn, lid));
        }
        if (gid == null) {
            gid = Gid.zero();
        }
    }
}
