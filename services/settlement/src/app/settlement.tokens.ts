/*
 * Injection tokens of settlement's own providers. gpunet builds without decorator metadata, so every
 * injection names its token (ADR 0002); classes are their own tokens.
 */

/** The service's `SettlementConfig`. */
export const SETTLEMENT_CONFIG = Symbol('gpunet.settlement.config');
/** The `ChainAdapter` settlement watches. */
export const CHAIN_ADAPTER = Symbol('gpunet.settlement.chain-adapter');
/** The `SimulatedFaucet`, provided only with the simulated chain. */
export const SIMULATED_FAUCET = Symbol('gpunet.settlement.simulated-faucet');
