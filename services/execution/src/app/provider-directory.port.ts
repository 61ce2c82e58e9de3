/** Injection token of the service's `ProviderDirectory`. */
export const PROVIDER_DIRECTORY = Symbol('gpunet.execution.provider-directory');

/** What execution keeps of discovery's provider events. */
export interface ProviderDirectory {
  /** The provider's first non-loopback IPv4 address, if discovery reported one. */
  addressOf(providerId: string): Promise<string | null>;
  /** The interface that address is on, if discovery reported one. */
  interfaceOf(providerId: string): Promise<string | null>;
  /** GPU uuid → model, for the providers asked about. */
  gpuModels(providerIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
}
