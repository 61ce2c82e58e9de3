import type { LinkInput } from '../model/snapshot-input';
import { LinkTable } from './link-table';
import { type ClusterSnapshot, compileLinks, type Inventory, type MeasuredLink } from './cluster-snapshot';

/** New measurements of host pairs and site pairs; each replaces what the snapshot had for its pair. */
export interface LinkUpdate {
  readonly hostLinks?: readonly LinkInput[];
  readonly siteLinks?: readonly LinkInput[];
}

/**
 * Memoized values that depend on GPUs, hosts and providers only, never on links: a new
 * measurement leaves them valid. Filters judge GPUs and hosts by what they are (the interconnect
 * is the gang filters' business), so their results (`eligibility:`) stay too. Anything else —
 * values built from links, or holding the old inventory — is recomputed on first use.
 */
const LINK_INDEPENDENT = ['eligibility:', 'speeds:', 'order:', 'prices'];

/**
 * The snapshot with new link measurements: the same result as `createSnapshot` of its input with
 * the links appended (tested), without compiling GPUs, hosts and providers again. The free GPUs
 * and owners are the snapshot's own (placements applied since `createSnapshot` stay). Costs
 * O(√links) amortized (see `LinkTable`), not a rebuild (O(GPUs + links)); the input is left alone.
 * Throws `InvalidSnapshotError` for a link to an unknown host or site or with bad figures.
 */
export const withMeasuredLinks = (snapshot: ClusterSnapshot, update: LinkUpdate): ClusterSnapshot => {
  const inv = snapshot.inventory;
  const relink = (
    current: ReadonlyMap<number, MeasuredLink>,
    links: readonly LinkInput[] | undefined,
    byId: ReadonlyMap<string, number>,
    count: number,
    kind: 'host' | 'site',
  ): ReadonlyMap<number, MeasuredLink> => {
    if (links === undefined || links.length === 0) return current;
    const compiled = new Map<number, MeasuredLink>();
    compileLinks(compiled, links, byId, count, kind);
    return LinkTable.with(current, compiled);
  };
  const hostLinks = relink(inv.hostLinks, update.hostLinks, inv.hostById, inv.hosts.length, 'host');
  const siteLinks = relink(inv.siteLinks, update.siteLinks, inv.siteById, inv.sites.length, 'site');
  if (hostLinks === inv.hostLinks && siteLinks === inv.siteLinks) return snapshot;
  const memo = new Map<string, unknown>();
  for (const [key, value] of inv.memo) {
    if (LINK_INDEPENDENT.some((prefix) => key.startsWith(prefix))) memo.set(key, value);
  }
  const inventory: Inventory = { ...inv, hostLinks, siteLinks, memo };
  return { ...snapshot, inventory, version: snapshot.version + 1 };
};
