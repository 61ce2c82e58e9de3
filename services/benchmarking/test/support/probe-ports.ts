/** Probe ports of the testbed's hosts: UDP goes through the delay shim, TCP straight to the responder. */
export const PROBE_UDP_PORT = 7946;
export const PROBE_TCP_PORT = 7947;
