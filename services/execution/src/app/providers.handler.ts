import { type PayloadOf, ProviderInventoryChanged, ProviderRegistered } from '@gpunet/contracts';
import { durable, type EventContext } from '@gpunet/eventing';
import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { recordProvider } from '../infra/provider-directory';

/** Discovery's durable consumer: providers' addresses and GPU models. */
export const PROVIDERS_CONSUMER = 'execution-providers';

/** What execution keeps of discovery's providers (`ProviderDirectory`): address, interface, GPU models. */
@Controller()
export class ProvidersHandler {
  @EventPattern([ProviderRegistered, ProviderInventoryChanged], durable(PROVIDERS_CONSUMER))
  async changed(
    @Payload() provider: PayloadOf<typeof ProviderRegistered> | PayloadOf<typeof ProviderInventoryChanged>,
    @Ctx() ctx: EventContext,
  ): Promise<void> {
    await recordProvider(ctx.tx, provider);
  }
}
