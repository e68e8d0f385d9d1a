package io.gda4j.verbs;

/**
 * The local choices of an RC connection (RESET → INIT → RTR → RTS); {@link #defaults()} suits one NIC port with
 * RDMA reads, writes and atomics.
 *
 * @param portNum          local port, from 1
 * @param pkeyIndex        P_Key table index
 * @param accessFlags      {@code IBV_ACCESS_*} the peer may use on this QP (remote write/read/atomic)
 * @param pathMtu          {@code IBV_MTU_*}; must not exceed either port's active MTU
 * @param sgidIndex        local GID index (RoCE: the RoCE v2 entry with an IP address)
 * @param hopLimit         GRH hop limit
 * @param trafficClass     GRH traffic class
 * @param serviceLevel     SL
 * @param minRnrTimer      RNR NAK timer code (12 = 0.64 ms)
 * @param maxDestRdAtomic  READs/atomics the peer may have outstanding on us; at most the device's max_qp_rd_atom
 * @param maxRdAtomic      READs/atomics we may have outstanding; at most the device's max_qp_init_rd_atom
 * @param timeout          ACK timeout code: 4.096 us * 2^timeout (14 = 67 ms)
 * @param retryCount       transport retries before TRANSPORT_RETRY_EXC (at most 7)
 * @param rnrRetry         RNR retries (7 = forever)
 */
public record RcConnectOptions(int portNum, int pkeyIndex, int accessFlags, int pathMtu, int sgidIndex,
                               int hopLimit, int trafficClass, int serviceLevel, int minRnrTimer,
                               int maxDestRdAtomic, int maxRdAtomic, int timeout, int retryCount, int rnrRetry) {

    public static RcConnectOptions defaults() {
        return new RcConnectOptions(1, 0, VerbsConstants.IBV_ACCESS_LOCAL_WRITE
                | VerbsConstants.IBV_ACCESS_REMOTE_WRITE | VerbsConstants.IBV_ACCESS_REMOTE_READ
                | VerbsConstants.IBV_ACCESS_REMOTE_ATOMIC, VerbsConstants.IBV_MTU_1024, 0, 64, 0, 0, 12, 16, 16,
                14, 7, 7);
    }

    public RcConnectOptions withPort(int port) {
        return new RcConnectOptions(port, pkeyIndex, accessFlags, pathMtu, sgidIndex, hopLimit, trafficClass,
                serviceLevel, minRnrTimer, maxDestRdAtomic, maxRdAtomic, timeout, retryCount, rnrRetry);
    }

    public RcConnectOptions withPathMtu(int mtu) {
        return new RcConnectOptions(portNum, pkeyIndex, accessFlags, mtu, sgidIndex, hopLimit, trafficClass,
                serviceLevel, minRnrTimer, maxDestRdAtomic, maxRdAtomic, timeout, retryCount, rnrRetry);
    }

    public RcConnectOptions withSgidIndex(int index) {
        return new RcConnectOptions(portNum, pkeyIndex, accessFlags, pathMtu, index, hopLimit, trafficClass,
                serviceLevel, minRnrTimer, maxDestRdAtomic, maxRdAtomic, timeout, retryCount, rnrRetry);
    }

    public RcConnectOptions withAccessFlags(int flags) {
        return new RcConnectOptions(portNum, pkeyIndex, flags, pathMtu, sgidIndex, hopLimit, trafficClass,
                serviceLevel, minRnrTimer, maxDestRdAtomic, maxRdAtomic, timeout, retryCount, rnrRetry);
    }

    /** Both outstanding-READ/atomic limits, e.g. from the device's max_qp_rd_atom. */
    public RcConnectOptions withRdAtomic(int outstanding) {
        return new RcConnectOptions(portNum, pkeyIndex, accessFlags, pathMtu, sgidIndex, hopLimit, trafficClass,
                serviceLevel, minRnrTimer, outstanding, outstanding, timeout, retryCount, rnrRetry);
    }
}
