import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { AuthModule } from '../auth/auth.module';
import { WebhookAdminController } from './webhook-admin.controller';
import { WebhookDispatcher } from './webhook-dispatcher.service';
import { WebhookRepository } from './webhook.repository';
import { WebhookService } from './webhook.service';

/**
 * Outgoing webhooks (issue #45; docs/decisions.md "Webhooks"): staff register receivers
 * (`/admin/webhooks`), events land in the outbox in the transaction of their change (triggers, or
 * WebhookService.enqueue), and WebhookDispatcher sends them after the commit from any instance.
 */
@Module({
  imports: [AuthModule, AuditModule],
  controllers: [WebhookAdminController],
  providers: [WebhookRepository, WebhookService, WebhookDispatcher],
  exports: [WebhookService, WebhookDispatcher],
})
export class WebhooksModule {}
