/** Options of `rankNetworkEnv`. */
export interface RankNetworkEnvOptions {
  /** The overlay interface inside the rank's namespace. Default `gpunet0`. */
  readonly ifname?: string;
  /** The job network, `100.96.3.0/24`. */
  readonly networkCidr: string;
  /** Overlay address of the host of rank 0 (where the rendezvous store listens). */
  readonly masterAddr: string;
  readonly masterPort: number;
}

/**
 * The environment that makes NCCL, Gloo, torch.distributed, TensorPipe and Open MPI use the job's
 * overlay and nothing else (see docs/networking.md for why each is set):
 * - `MASTER_ADDR`/`MASTER_PORT`: torch's rendezvous store on rank 0's overlay address;
 * - `GLOO_SOCKET_IFNAME`, `TP_SOCKET_IFNAME`: the interface whose address each rank advertises;
 * - `NCCL_SOCKET_IFNAME==<if>` (exact match, not a prefix), `NCCL_SOCKET_FAMILY=AF_INET`,
 *   `NCCL_IB_DISABLE=1`: NCCL's bootstrap and data over IP sockets on the overlay, never InfiniBand
 *   or another interface whose address peers cannot route;
 * - `OMPI_MCA_btl_tcp_if_include`, `OMPI_MCA_oob_tcp_if_include`: Open MPI's data and out-of-band
 *   channels on the job network.
 */
export const rankNetworkEnv = (options: RankNetworkEnvOptions): Record<string, string> => {
  const ifname = options.ifname ?? 'gpunet0';
  return {
    MASTER_ADDR: options.masterAddr,
    MASTER_PORT: String(options.masterPort),
    GLOO_SOCKET_IFNAME: ifname,
    TP_SOCKET_IFNAME: ifname,
    NCCL_SOCKET_IFNAME: `=${ifname}`,
    NCCL_SOCKET_FAMILY: 'AF_INET',
    NCCL_IB_DISABLE: '1',
    OMPI_MCA_btl_tcp_if_include: options.networkCidr,
    OMPI_MCA_oob_tcp_if_include: options.networkCidr,
  };
};
