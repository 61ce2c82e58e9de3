import { AttachOverlay } from './edge-attach-overlay.v1';
import { ConnectOverlayPeers } from './edge-connect-overlay-peers.v1';
import { DetachOverlay } from './edge-detach-overlay.v1';
import { OverlayPathsReported } from './overlay-paths-reported.v1';

/** Every overlay message, for registries. */
export const overlayMessages = [
  AttachOverlay,
  ConnectOverlayPeers,
  DetachOverlay,
  OverlayPathsReported,
] as const;
