/** Something another service might be tempted to import instead of sending a message. */
export const internalQuota = (gpus: number): number => gpus * 2;
