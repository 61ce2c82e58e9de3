/** A measured RTT between two hosts, µs. */
export interface MeasuredRtt {
  readonly a: string;
  readonly b: string;
  readonly rttUs: number;
}

/** RTT below which two hosts count as one LAN (one site). Default 1 ms: a WAN hop is rarely below it. */
export const DEFAULT_LAN_RTT_US = 1_000;

/**
 * Groups hosts into sites: two hosts whose measured RTT is below `lanRttUs` share a LAN, and sharing
 * is transitive (union–find). A host without such a link is a site of its own. A site's id is its
 * lowest host id, so the grouping does not depend on input order. Address hints (a shared private
 * subnet) are not evidence here — every home router hands out 192.168.1.0/24 — they only make the
 * planner probe such pairs, so that the RTT decides.
 */
export const detectSites = (
  hosts: readonly string[],
  links: readonly MeasuredRtt[],
  lanRttUs: number = DEFAULT_LAN_RTT_US,
): Map<string, string> => {
  const parent = new Map<string, string>();
  for (const h of hosts) parent.set(h, h);
  for (const l of links) {
    if (!parent.has(l.a)) parent.set(l.a, l.a);
    if (!parent.has(l.b)) parent.set(l.b, l.b);
  }
  const find = (h: string): string => {
    let root = h;
    while (parent.get(root) !== root) root = parent.get(root)!;
    let node = h;
    while (parent.get(node) !== root) {
      const next = parent.get(node)!;
      parent.set(node, root);
      node = next;
    }
    return root;
  };
  for (const l of links) {
    if (!(l.rttUs < lanRttUs)) continue;
    const ra = find(l.a);
    const rb = find(l.b);
    if (ra === rb) continue;
    // The lower id becomes the root, so the root is always the group's lowest id.
    if (ra < rb) parent.set(rb, ra);
    else parent.set(ra, rb);
  }
  const sites = new Map<string, string>();
  for (const h of parent.keys()) sites.set(h, find(h));
  return sites;
};
