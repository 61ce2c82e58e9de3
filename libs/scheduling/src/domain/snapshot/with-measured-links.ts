import type { LinkInput } from '../model/snapshot-input';
import { LinkTable } from './link-table';
import { carryMaxCrossSite, maxCrossSiteAfter } from './network';
import { type ClusterSnapshot, compileLinks, type Inventory, type StoredLink } from './cluster-snapshot';

/** New measurements of host pairs and site pairs; each replaces what the snapshot had for its pair. */
export interface LinkUpdate {
  readonly hostLinks?: readonly LinkInput[];
  readonly siteLinks?: readonly LinkInput[];
}

/**
 * Memoized values that depend on GPUs, hosts and providers only, never on links: a new
 * measurement leaves them valid. Filters judge GPUs and hosts by what they are (the interconnect
 * is the gang filters' business), so their results (`eligibility:`) stay too. Anything else —
 * values built from links, or holding the old inventory — is recomputed on first use, except the
 * widest cross-site link, which is carried over where that is exact (`maxCrossSiteAfter`).
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
  const hostUpdates = new Map<number, StoredLink>();
  compileLinks(hostUpdates, update.hostLinks ?? [], inv.hostById, inv.hosts.length, 'host');
  const siteUpdates = new Map<number, StoredLink>();
  compileLinks(siteUpdates, update.siteLinks ?? [], inv.siteById, inv.sites.length, 'site');
  if (hostUpdates.size === 0 && siteUpdates.size === 0) return snapshot;
  const hostLinks = hostUpdates.size === 0 ? inv.hostLinks : LinkTable.with(inv.hostLinks, hostUpdates);
  const siteLinks = siteUpdates.size === 0 ? inv.siteLinks : LinkTable.with(inv.siteLinks, siteUpdates);
  const memo = new Map<string, unknown>();
  for (const [key, value] of inv.memo) {
    if (LINK_INDEPENDENT.some((prefix) => key.startsWith(prefix))) memo.set(key, value);
  }
  // The widest cross-site link bounds every search; a scan of all links for it costs more than
  // the decision, so it is carried over when the update cannot have lowered it.
  const widest = maxCrossSiteAfter(inv, hostUpdates, siteUpdates);
  if (widest !== undefined) carryMaxCrossSite(memo, widest);
  const inventory: Inventory = { ...inv, hostLinks, siteLinks, memo };
  return { ...snapshot, inventory, version: snapshot.version + 1 };
};
