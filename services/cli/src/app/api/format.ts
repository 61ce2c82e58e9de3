import { KNOWN_ASSET_DECIMALS } from '@gpunet/ensemble-spec';

/** Minor units as a decimal amount: `2500000`, 6 → `2.5`. Unknown decimals: the minor units as is. */
export const formatAmount = (minor: string | null | undefined, decimals: number | undefined): string => {
  if (minor === null || minor === undefined) return '—';
  if (decimals === undefined || !/^-?[0-9]+$/.test(minor)) return `${minor} (minor units)`;
  const negative = minor.startsWith('-');
  const digits = (negative ? minor.slice(1) : minor).padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const frac = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
};

/** `12.5 NTX` with the asset's well-known decimals (or the ones given). */
export const money = (minor: string | null | undefined, asset: string, decimals?: number): string =>
  `${formatAmount(minor, decimals ?? KNOWN_ASSET_DECIMALS[asset])} ${asset}`;

/** Provider ids are 56-character public keys; 12 are enough to tell them apart on a screen. */
export const shortId = (id: string): string => (id.length > 14 ? `${id.slice(0, 12)}…` : id);

export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** `1190` → `1190 GPU-s (19.8 GPU-min)`… kept simple: seconds and hours. */
export const gpuTime = (seconds: number): string =>
  seconds >= 3600
    ? `${seconds} GPU-seconds (${(seconds / 3600).toFixed(2)} GPU-hours)`
    : `${seconds} GPU-seconds`;

/** A table with left-aligned columns, two spaces apart. */
export const table = (header: readonly string[], rows: readonly (readonly string[])[]): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
};

/** Only printable characters of a server-sent string (no terminal escapes smuggled in by a rank). */
export const printable = (s: string): string =>
  // eslint-disable-next-line no-control-regex
  s.replace(/[\u0000-\u0008\u000b-\u001f\u007f\u009b]/g, '�');
