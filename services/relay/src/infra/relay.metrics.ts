import { defineCounter, defineGauge, metricName, type Registry } from '@gpunet/telemetry';
import { Counter } from 'prom-client';
import { DROP_REASONS } from '../domain/relay-table';
import type { RejectReason, RelayServer } from './relay-server';

/**
 * The relay's Prometheus metrics, read from the server's own counters when scraped (the packet path
 * updates plain numbers, never a metric):
 * - `gpunet_relay_forwarded_bytes_total{job}` / `gpunet_relay_forwarded_packets_total{job}`
 * - `gpunet_relay_dropped_packets_total{job,reason}` (`other-job`, `no-such-peer`, `rate-limited`, `queue-full`)
 * - `gpunet_relay_job_members{job}`, `gpunet_relay_connections`
 * - `gpunet_relay_rejected_connections_total{reason}`, `gpunet_relay_stun_requests_total`
 */
export const registerRelayMetrics = (registry: Registry, server: RelayServer): void => {
  // A counter in bytes: `defineCounter` takes no unit, so it is named here the way `metricName` names units.
  const forwardedBytes = new Counter<'job'>({
    name: `${metricName('relay', 'forwarded', 'bytes')}_total`,
    help: 'Bytes of packets forwarded, per job (WireGuard ciphertext and probes).',
    labelNames: ['job'],
    registers: [registry],
  });
  const forwardedPackets = defineCounter(registry, {
    subsystem: 'relay',
    name: 'forwarded_packets',
    help: 'Packets forwarded, per job.',
    labelNames: ['job'],
  });
  const dropped = defineCounter(registry, {
    subsystem: 'relay',
    name: 'dropped_packets',
    help: 'Packets not forwarded, per job and reason.',
    labelNames: ['job', 'reason'],
  });
  const members = defineGauge(registry, {
    subsystem: 'relay',
    name: 'job_members',
    help: 'Edges connected, per job.',
    labelNames: ['job'],
  });
  const connections = defineGauge(registry, {
    subsystem: 'relay',
    name: 'connections',
    help: 'Edge connections admitted to a job.',
  });
  const rejected = defineCounter(registry, {
    subsystem: 'relay',
    name: 'rejected_connections',
    help: 'Connections refused, per reason.',
    labelNames: ['reason'],
  });
  const stun = defineCounter(registry, {
    subsystem: 'relay',
    name: 'stun_requests',
    help: 'STUN Binding requests answered.',
  });

  // The first metric's collect refreshes every series from the server's counters: a scrape calls each
  // metric's `get()` in registration order, and a synchronous collect runs before any series is read.
  const refresh = () => {
    for (const metric of [forwardedBytes, forwardedPackets, dropped, members, rejected, stun]) metric.reset();
    for (const [job, account] of server.table.accounts()) {
      forwardedBytes.inc({ job }, account.forwardedBytes);
      forwardedPackets.inc({ job }, account.forwardedPackets);
      members.set({ job }, account.members);
      for (const reason of DROP_REASONS)
        if (account.dropped[reason] > 0) dropped.inc({ job, reason }, account.dropped[reason]);
    }
    for (const [reason, count] of Object.entries(server.rejected) as [RejectReason, number][])
      if (count > 0) rejected.inc({ reason }, count);
    if (server.stunRequests > 0) stun.inc(server.stunRequests);
    connections.set(server.table.connections);
  };
  (forwardedBytes as unknown as { collect: () => void }).collect = refresh;
};
