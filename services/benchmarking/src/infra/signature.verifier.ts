import { type MessageDefinition, signingInput } from '@gpunet/contracts';
import { fromPublic } from '@nats-io/nkeys';

/** Why a signed edge report was refused; counted per reason. */
export type SignatureFailure = 'subject-mismatch' | 'key-mismatch' | 'bad-signature';

/**
 * Checks a signed edge report the way discovery does (same scheme, `signingInput`): the subject's
 * edge token, the payload's `edgeId` and `publicKey` are one key, and `signature` is its ed25519
 * signature of the canonical encoding. NATS permissions bind the subject to the publisher.
 */
export const verifyEdgeReport = (
  def: Pick<MessageDefinition, 'type' | 'version'>,
  subjectEdgeId: string | undefined,
  data: { readonly edgeId: string; readonly publicKey: string; readonly signature: string } & Record<
    string,
    unknown
  >,
): SignatureFailure | null => {
  if (subjectEdgeId !== data.edgeId) return 'subject-mismatch';
  if (data.publicKey !== data.edgeId) return 'key-mismatch';
  try {
    const ok = fromPublic(data.publicKey).verify(
      new TextEncoder().encode(signingInput(def, data)),
      Buffer.from(data.signature, 'base64url'),
    );
    return ok ? null : 'bad-signature';
  } catch {
    return 'bad-signature';
  }
};

/** The edge id in `[prefix.]edge.<edgeId>.<report>.v1`. */
export const edgeIdOfSubject = (subject: string, prefix: string): string | undefined => {
  const rest =
    prefix === '' ? subject : subject.startsWith(`${prefix}.`) ? subject.slice(prefix.length + 1) : undefined;
  const parts = rest?.split('.');
  return parts && parts[0] === 'edge' && parts.length === 4 ? parts[1] : undefined;
};
